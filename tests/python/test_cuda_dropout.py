"""The fused dropout on CUDA against the CPU: with the same seed both backends
draw the same mask and write the same output bits (cuda/device/dropout_kernels.cuh
follows core/cpu/nn_misc.h's counter layout and formula), in every floating
dtype, for sizes that are and are not multiples of the kernel's 4-element
vector, unaligned views (the scalar path), non-contiguous inputs, p = 0 and 1,
in place; gradients and double gradients equal the CPU's.

Every test needs a CUDA GPU and skips, saying why, without one.
"""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy

DTYPES = [ember.float32, ember.float64, ember.float16, ember.bfloat16]


def bits(t):
    """The tensor's bytes on the host, for bit-for-bit comparisons (the half
    types widened to float32, which is exact and keeps the sign of zero)."""
    c = t.detach().cpu().contiguous()
    if c.dtype in (ember.float16, ember.bfloat16):
        c = c.to(ember.float32)
    return c.numpy().view(np.uint8)


def both(fn, seed):
    """fn(device) on the CPU and on CUDA, each right after manual_seed(seed)."""
    out = []
    for device in ("cpu", "cuda"):
        ember.manual_seed(seed)
        out.append(fn(device))
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 3, 4, 5, 1001, 4096, (1 << 20) + 3])
def test_mask_and_output_match_the_cpu_bit_for_bit(dtype, n):
    x = ember.randn(n).to(dtype)
    (cpu_out, cpu_mask), (gpu_out, gpu_mask) = both(lambda d: ember.native_dropout(x.to(d), 0.3, True), seed=n)
    assert gpu_mask.device.type == "cuda" and gpu_mask.dtype == ember.bool
    np.testing.assert_array_equal(gpu_mask.cpu().numpy(), cpu_mask.numpy())
    np.testing.assert_array_equal(bits(gpu_out), bits(cpu_out))


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 1.0])
def test_every_p_and_the_generator_advance(p):
    x = ember.randn(3, 333)
    results = both(lambda d: (ember.native_dropout(x.to(d), p, True), ember.rand(9, device=d)), seed=5)
    (cpu_out, cpu_mask), cpu_next = results[0]
    (gpu_out, gpu_mask), gpu_next = results[1]
    np.testing.assert_array_equal(gpu_mask.cpu().numpy(), cpu_mask.numpy())
    np.testing.assert_array_equal(bits(gpu_out), bits(cpu_out))
    np.testing.assert_array_equal(gpu_next.cpu().numpy(), cpu_next.numpy())  # same offset advance
    if p == 1.0:
        assert not gpu_mask.cpu().numpy().any() and (gpu_out.cpu().numpy() == 0).all()


@pytest.mark.parametrize("layout", ["unaligned", "transposed", "sliced"])
def test_non_contiguous_and_unaligned_inputs(layout):
    base = ember.randn(9, 16)

    def run(device):
        b = base.to(device)
        x = {"unaligned": b.reshape(-1)[1:], "transposed": b.t(), "sliced": b[:, ::3]}[layout]
        return ember.native_dropout(x, 0.4, True)

    (cpu_out, cpu_mask), (gpu_out, gpu_mask) = both(run, seed=12)
    np.testing.assert_array_equal(gpu_mask.cpu().numpy(), cpu_mask.numpy())
    np.testing.assert_array_equal(bits(gpu_out), bits(cpu_out))


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients_match_the_cpu(dtype):
    x = ember.randn(7, 65).to(dtype)
    g = ember.randn(7, 65).to(dtype)

    def run(device):
        xd = x.to(device).detach().requires_grad_()
        out = F.dropout(xd, 0.25)
        assert out.grad_fn.name() == "NativeDropoutBackward0"
        out.backward(g.to(device))
        return xd.grad

    cpu_grad, gpu_grad = both(run, seed=3)
    np.testing.assert_array_equal(bits(gpu_grad), bits(cpu_grad))


def test_double_backward_matches_the_cpu():
    x = ember.randn(40, dtype=ember.float64)
    g = ember.randn(40, dtype=ember.float64)
    w = ember.randn(40, dtype=ember.float64)

    def run(device):
        xd = x.to(device).detach().requires_grad_()
        gd = g.to(device).detach().requires_grad_()
        out, _ = ember.native_dropout(xd, 0.5, True)
        (gx,) = ember.autograd.grad(out, xd, grad_outputs=gd, create_graph=True)
        (gx * w.to(device)).sum().backward()
        return gx.detach(), gd.grad

    (cpu_gx, cpu_gg), (gpu_gx, gpu_gg) = both(run, seed=8)
    np.testing.assert_array_equal(gpu_gx.cpu().numpy(), cpu_gx.numpy())
    np.testing.assert_array_equal(gpu_gg.cpu().numpy(), cpu_gg.numpy())


def test_backward_op_with_a_broadcast_mask():
    g = ember.randn(4, 6, 5)
    mask = ember.rand(6, 1) > 0.5
    cpu = ember.native_dropout_backward(g, mask, 1.5)
    gpu = ember.native_dropout_backward(g.cuda(), mask.cuda(), 1.5)
    np.testing.assert_array_equal(bits(gpu), bits(cpu))


@pytest.mark.parametrize("dtype", [ember.float32, ember.float16])
def test_inplace_matches_the_cpu(dtype):
    x = ember.randn(5, 77).to(dtype)

    def run(device):
        y = x.to(device, copy=True)  # the CPU run must not write over x, the CUDA run's input
        r = F.dropout(y, 0.5, inplace=True)
        assert r.data_ptr() == y.data_ptr()
        return y

    cpu, gpu = both(run, seed=21)
    np.testing.assert_array_equal(bits(gpu), bits(cpu))


def test_eval_and_errors_on_cuda():
    x = ember.randn(10, device="cuda")
    out, mask = ember.native_dropout(x, 0.5, False)
    assert mask.cpu().numpy().all()
    np.testing.assert_array_equal(out.cpu().numpy(), x.cpu().numpy())
    with pytest.raises(RuntimeError, match=r"^native_dropout_backward: expected grad and mask on the same device"):
        ember.native_dropout_backward(x, mask.cpu(), 2.0)
