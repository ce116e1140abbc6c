"""Module backward hooks, extra state and the state-dict hooks, as torch's."""
import numpy as np
import pytest

import ember
from ember import nn
from harness import torch

CASES = []


def linear(fw):
    fw.manual_seed(0)
    m = fw.nn.Linear(3, 2)
    with fw.no_grad():
        m.weight.copy_(fw.tensor([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]]))
        m.bias.copy_(fw.tensor([0.1, -0.2]))
    return m


def run_hooks(fw, input_requires_grad=True):
    m = linear(fw)
    seen = {}

    def pre(module, grad_output):
        seen["pre"] = [g.detach().numpy().copy() for g in grad_output]
        return (grad_output[0] * 2,)

    def full(module, grad_input, grad_output):
        seen["grad_input"] = [None if g is None else g.detach().numpy().copy() for g in grad_input]
        seen["grad_output"] = [g.detach().numpy().copy() for g in grad_output]
        return None if grad_input[0] is None else (grad_input[0] * 10,)

    m.register_full_backward_pre_hook(pre)
    m.register_full_backward_hook(full)
    x = fw.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], requires_grad=input_requires_grad)
    (m(x) * fw.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    seen["weight_grad"] = m.weight.grad.numpy().copy()
    seen["x_grad"] = None if x.grad is None else x.grad.numpy().copy()
    return seen


def test_full_backward_hooks_see_and_replace_gradients():
    seen = run_hooks(ember)
    dy = np.array([[1.0, 2.0], [3.0, 4.0]])
    w = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]])
    x = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    np.testing.assert_allclose(seen["pre"][0], dy)
    np.testing.assert_allclose(seen["grad_output"][0], 2 * dy)  # the pre-hook's replacement
    np.testing.assert_allclose(seen["grad_input"][0], 2 * dy @ w, rtol=1e-6)
    np.testing.assert_allclose(seen["x_grad"], 10 * 2 * dy @ w, rtol=1e-6)  # the hook's replacement
    np.testing.assert_allclose(seen["weight_grad"], (2 * dy).T @ x, rtol=1e-6)
    if torch is not None:
        theirs = run_hooks(torch)
        for key in ("pre", "grad_output", "grad_input"):
            for a, b in zip(seen[key], theirs[key]):
                np.testing.assert_allclose(a, b, rtol=1e-6)
        np.testing.assert_allclose(seen["x_grad"], theirs["x_grad"], rtol=1e-6)
        np.testing.assert_allclose(seen["weight_grad"], theirs["weight_grad"], rtol=1e-6)


def test_hook_without_input_gradients_and_removal():
    seen = run_hooks(ember, input_requires_grad=False)
    assert seen["grad_input"] == [None] and seen["x_grad"] is None
    m = nn.Linear(2, 2)
    calls = []
    handle = m.register_full_backward_hook(lambda mod, gi, go: calls.append(1))
    m(ember.randn(3, 2, requires_grad=True)).sum().backward()
    handle.remove()
    m(ember.randn(3, 2, requires_grad=True)).sum().backward()
    assert calls == [1]
    with ember.no_grad():  # no graph: nothing to hook, no error
        m.register_full_backward_hook(lambda mod, gi, go: None)
        m(ember.randn(3, 2))
    with pytest.warns(FutureWarning, match="register_backward_hook is deprecated"):
        m.register_backward_hook(lambda mod, gi, go: None)


def test_hook_returning_the_wrong_count_is_reported():
    m = nn.Linear(2, 2)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="Linear: a backward hook returned 2 values for grad_input, but the module has 1"):
        m(ember.randn(3, 2, requires_grad=True)).sum().backward()


class WithExtra(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.register_buffer("steps", ember.zeros(()))
        self.config = {"temperature": 0.5}

    def get_extra_state(self):
        return dict(self.config)

    def set_extra_state(self, state):
        self.config = dict(state)


def test_extra_state_and_state_dict_hooks(tmp_path):
    a = WithExtra()
    a.config["temperature"] = 0.9
    sd = a.state_dict()
    assert sd["_extra_state"] == {"temperature": 0.9}
    path = tmp_path / "ck.safetensors"
    ember.save(sd, path)
    b = WithExtra()
    b.load_state_dict(ember.load(path))
    assert b.config == {"temperature": 0.9}
    missing = dict(sd)
    del missing["_extra_state"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        WithExtra().load_state_dict(missing)
    assert a.get_buffer("steps") is a.steps and a.get_parameter("lin.bias") is a.lin.bias
    with pytest.raises(AttributeError, match="has no buffer `nope`"):
        a.get_buffer("nope")

    events = []
    a.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: events.append(("pre", prefix)))

    def drop_missing(mod, keys):
        events.append(("post", list(keys.missing_keys)))
        keys.missing_keys.clear()

    a.register_load_state_dict_post_hook(drop_missing)
    a.state_dict()
    a.load_state_dict({"lin.weight": ember.zeros(2, 2)})  # the post hook clears the missing keys
    assert events[0] == ("pre", "") and events[1][0] == "post" and "lin.bias" in events[1][1]
    assert float(a.lin.weight.abs().sum()) == 0.0


def test_to_empty_and_compile():
    m = nn.Linear(3, 2)
    assert m.compile() is None
    m.to_empty(device="cpu")
    assert m.weight.shape == (2, 3) and m.weight.device.type == "cpu"
