"""save_on_cpu and saved_tensors_hooks on CUDA tensors, against the CPU path.

Every test needs a CUDA GPU and skips, saying why, without one: the saved
tensors must really leave the GPU (checked on the packed values and with
ember.cuda.memory_allocated) and come back for backward with the gradients of
the same graph run on the CPU.
"""
import numpy as np
import pytest

import ember
from ember.autograd.graph import save_on_cpu, saved_tensors_hooks
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy


def _graph(x, w, v):
    return ((x * v).exp() @ w).tanh().sum()


def _inputs(device):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) * 0.5 for s in ((4, 8), (8, 5), (4, 8))]
    return [ember.tensor(a, dtype=ember.float32, device=device, requires_grad=True) for a in arrays]


def _cpu_grads():
    inputs = _inputs("cpu")
    _graph(*inputs).backward()
    return [t.grad.numpy() for t in inputs]


def _watched(hooks):
    """Wraps a hooks object's pack / unpack to log the devices it sees."""
    seen = {"packed": [], "unpacked": []}
    pack, unpack = hooks.pack_hook, hooks.unpack_hook

    def watched_pack(t):
        packed = pack(t)
        seen["packed"].append((t.device.type, packed[1].device.type, packed[1].is_pinned()))
        return packed

    def watched_unpack(p):
        t = unpack(p)
        seen["unpacked"].append(t.device.type)
        return t

    hooks.pack_hook, hooks.unpack_hook = watched_pack, watched_unpack
    return seen


@pytest.mark.parametrize("pin_memory", [False, True])
def test_save_on_cpu_moves_saved_tensors_and_back(pin_memory):
    inputs = _inputs("cuda")
    hooks = save_on_cpu(pin_memory=pin_memory)
    seen = _watched(hooks)
    with hooks:
        loss = _graph(*inputs)
    # mul: 2, exp: its output, mm: 2, tanh: its output
    assert len(seen["packed"]) == 6
    assert all(src == "cuda" and dst == "cpu" and pinned == pin_memory for src, dst, pinned in seen["packed"])
    loss.backward()
    ember.cuda.synchronize()
    assert seen["unpacked"] == ["cuda"] * 6
    for t, ref in zip(inputs, _cpu_grads()):
        assert t.grad.device.type == "cuda"
        np.testing.assert_allclose(t.grad.cpu().numpy(), ref, rtol=1e-4, atol=1e-5)


def test_save_on_cpu_frees_gpu_memory_of_saved_activations():
    n = 1 << 20  # 4 MiB per float32 activation
    x = ember.randn(n, device="cuda", requires_grad=True)
    ember.cuda.synchronize()

    def chain(a):
        for _ in range(4):
            a = a.exp().tanh()  # each op saves its output
        return a.sum()

    base = ember.cuda.memory_allocated()
    plain = chain(x)
    plain_bytes = ember.cuda.memory_allocated() - base
    del plain
    base = ember.cuda.memory_allocated()
    with save_on_cpu():
        hooked = chain(x)
    hooked_bytes = ember.cuda.memory_allocated() - base
    # Plainly, the 8 saved outputs stay on the GPU; under save_on_cpu they do not.
    assert plain_bytes >= 8 * 4 * n
    assert hooked_bytes < 2 * 4 * n
    hooked.backward()
    ref = x.detach().cpu().requires_grad_()
    chain(ref).backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), ref.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_hooks_with_a_host_round_trip_match_the_cpu():
    inputs = _inputs("cuda")
    calls = []

    def pack(t):
        calls.append("pack")
        return (t.device, t.detach().cpu().numpy())

    def unpack(p):
        calls.append("unpack")
        device, array = p
        return ember.tensor(array, device=device)

    with saved_tensors_hooks(pack, unpack):
        loss = _graph(*inputs)
    loss.backward()
    assert calls.count("pack") == calls.count("unpack") == 6
    for t, ref in zip(inputs, _cpu_grads()):
        np.testing.assert_allclose(t.grad.cpu().numpy(), ref, rtol=1e-4, atol=1e-5)


def test_unpack_to_the_wrong_device_is_refused():
    x = ember.randn(3, device="cuda", requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach().cpu(), lambda t: t):
        y = x.exp().sum()
    with pytest.raises(RuntimeError, match="ExpBackward0: the saved tensor unpack hook returned a float32 tensor of "
                                           r"shape \[3\] on cpu"):
        y.backward()
