"""ember.jit: torch.jit's names as pass-throughs (ember has no TorchScript).
script/trace return what they are given, trace runs the example inputs first,
the decorators return their function, is_scripting/is_tracing are False and
save/load refuse with a message that points at ember.save and state_dict."""
import typing

import pytest

import ember
from harness import torch

CASES = []  # no OpCase rows: no ops here

jit = ember.jit


class Net(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = ember.nn.Linear(3, 2)

    def forward(self, x):
        # Data-dependent control flow: a real trace would freeze one branch.
        if x.sum() > 0:
            return self.fc(x)
        return -self.fc(x)

    @jit.export
    def doubled(self, x):
        return 2 * self.fc(x)

    @jit.ignore
    def python_only(self):
        return "ignored"

    @jit.unused
    def unused_method(self):
        return "unused"


def test_script_returns_its_argument():
    net = Net()
    assert jit.script(net) is net

    def f(x):
        return x + 1
    assert jit.script(f) is f
    assert jit.script(Net) is Net


def test_script_as_decorator():
    @jit.script
    def f(x):
        return x * 3
    assert f(ember.tensor([1.0])).tolist() == [3.0]


def test_trace_returns_the_module_and_keeps_control_flow():
    net = Net()
    x = ember.ones(2, 3)
    traced = jit.trace(net, x)
    assert traced is net
    ember.testing.assert_close(traced(-x), -net.fc(-x))  # the other branch still runs
    assert jit.trace(net, (x,)) is net


def test_trace_runs_the_example_inputs():
    calls = []

    def f(a, b):
        calls.append((a.shape, b.shape))
        return a + b
    assert jit.trace(f, (ember.ones(2), ember.ones(2))) is f
    assert calls == [(ember.Size([2]), ember.Size([2]))]
    jit.trace(f, (ember.ones(1), ember.ones(1)), check_inputs=[(ember.ones(3), ember.ones(3))])
    assert [c[0] for c in calls[1:]] == [ember.Size([1]), ember.Size([3])]


def test_trace_fails_where_the_call_fails():
    net = Net()
    with pytest.raises(RuntimeError):
        jit.trace(net, ember.ones(2, 5))  # wrong width for Linear(3, 2)
    with pytest.raises(RuntimeError, match="example"):
        jit.trace(net)
    with pytest.raises(TypeError, match="function or a module"):
        jit.trace(42, ember.ones(1))


def test_trace_with_keyword_inputs_and_trace_module():
    def f(x, scale=1.0):
        return x * scale
    assert jit.trace(f, example_kwarg_inputs={"x": ember.ones(2), "scale": 2.0}) is f
    net = Net()
    assert jit.trace_module(net, {"forward": ember.ones(1, 3), "doubled": (ember.ones(1, 3),)}) is net
    with pytest.raises(AttributeError):
        jit.trace_module(net, {"missing": ember.ones(1, 3)})


def test_decorators_return_the_function():
    net = Net()
    assert net.python_only() == "ignored"
    assert net.unused_method() == "unused"
    x = ember.ones(1, 3)
    ember.testing.assert_close(net.doubled(x), 2 * net.fc(x))

    @jit.ignore(drop=True)
    def dropped():
        return 5
    assert dropped() == 5
    for deco in (jit.unused, jit.export, jit.interface, jit.script_method):
        fn = lambda: 1  # noqa: E731
        assert deco(fn) is fn


def test_scripting_and_tracing_are_never_on():
    assert jit.is_scripting() is False
    assert jit.is_tracing() is False
    seen = []
    jit.trace(lambda x: seen.append(jit.is_tracing()) or x, ember.ones(1))
    assert seen == [False]


def test_annotate_attribute_final_isinstance():
    value = [1, 2]
    assert jit.annotate(typing.List[int], value) is value
    assert jit.Attribute(3, int) == 3
    assert jit.Final is typing.Final
    assert jit.isinstance([1, 2], typing.List[int])
    assert not jit.isinstance([1, "a"], typing.List[int])
    assert jit.isinstance({"a": ember.ones(1)}, typing.Dict[str, ember.Tensor])
    assert jit.isinstance((1, "a"), typing.Tuple[int, str])
    assert jit.isinstance(None, typing.Optional[int])
    assert not jit.isinstance(1.5, typing.Optional[int])
    assert jit.isinstance(3, int)


def test_script_module_base_and_fork_wait():
    class Old(jit.ScriptModule):
        @jit.script_method
        def forward(self, x):
            return x + 1
    assert isinstance(Old(), ember.nn.Module)
    assert Old()(ember.ones(1)).tolist() == [2.0]
    fut = jit.fork(lambda a, b=0: a + b, 2, b=3)
    assert jit.wait(fut) == 5
    net = Net()
    assert jit.freeze(net) is net and jit.optimize_for_inference(net) is net
    with jit.optimized_execution(False):
        pass


def test_save_and_load_refuse_and_name_the_alternative(tmp_path):
    net = Net()
    with pytest.raises(NotImplementedError, match=r"no TorchScript.*ember.save\(model.state_dict\(\)"):
        jit.save(jit.script(net), tmp_path / "net.pt")
    with pytest.raises(NotImplementedError, match="load_state_dict"):
        jit.load(tmp_path / "net.pt")
    assert not (tmp_path / "net.pt").exists()


def test_the_alternative_the_message_names_works(tmp_path):
    net = Net()
    ember.save(net.state_dict(), tmp_path / "w.pt")
    other = Net()
    other.load_state_dict(ember.load(tmp_path / "w.pt"))
    x = ember.ones(1, 3)
    ember.testing.assert_close(other(x), net(x))


@pytest.mark.skipif(torch is None, reason="torch not importable")
def test_names_match_torch():
    names = ["script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting", "is_tracing",
             "annotate", "Final", "save", "load", "fork", "wait", "freeze", "interface", "Attribute",
             "ScriptModule", "script_method", "optimized_execution", "isinstance"]
    for name in names:
        assert hasattr(torch.jit, name) and hasattr(ember.jit, name), name
    assert torch.jit.is_scripting() == ember.jit.is_scripting()
    assert torch.jit.is_tracing() == ember.jit.is_tracing()
    assert torch.jit.annotate(typing.List[int], [1]) == ember.jit.annotate(typing.List[int], [1])
    assert torch.jit.isinstance([1, 2], typing.List[int]) == ember.jit.isinstance([1, 2], typing.List[int])
