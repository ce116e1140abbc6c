"""conv3d, conv_transpose3d and the 3-D pools on CUDA against the CPU path, forward and backward, in
float64 (cuDNN's 2-D convolutions underneath, index_add with atomics for the transposed depth taps).
(The OpCase rows of test_nn_3d also run through test_cuda_ops.)

Every test needs a CUDA GPU and skips, saying why, without one.
"""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy

RNG = np.random.default_rng(31)


def as_np(t):
    return t.detach().cpu().to(ember.float64).numpy()


def on_both(fn, arrays):
    """fn on CPU and CUDA float64 copies of `arrays`: output and input gradients of sum(out * fixed weights)."""
    results = []
    for device in ("cpu", "cuda"):
        inputs = [ember.tensor(a, dtype=ember.float64, device=device).requires_grad_(True) for a in arrays]
        out = fn(*inputs)
        out = out[0] if isinstance(out, tuple) else out
        w = ember.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype, device=device)
        (out * w).sum().backward()
        results.append((as_np(out), [as_np(t.grad) for t in inputs]))
    (cpu_out, cpu_grads), (gpu_out, gpu_grads) = results
    np.testing.assert_allclose(gpu_out, cpu_out, rtol=1e-9, atol=1e-10)
    for g_cpu, g_gpu in zip(cpu_grads, gpu_grads):
        np.testing.assert_allclose(g_gpu, g_cpu, rtol=1e-9, atol=1e-10)


def test_conv3d_strided_padded_dilated_grouped():
    on_both(lambda x, w, b: F.conv3d(x, w, b, (2, 1, 2), (1, 0, 1), (1, 2, 1), 2),
            [RNG.standard_normal((2, 4, 5, 6, 5)), RNG.standard_normal((6, 2, 3, 2, 3)), RNG.standard_normal(6)])


def test_conv_transpose3d_with_output_padding():
    on_both(lambda x, w: F.conv_transpose3d(x, w, None, (2, 1, 2), (1, 0, 1), (1, 0, 1), 2, (1, 2, 1)),
            [RNG.standard_normal((2, 4, 3, 4, 3)), RNG.standard_normal((4, 3, 2, 3, 2))])


@pytest.mark.parametrize("pool", [
    lambda x: F.max_pool3d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
    lambda x: F.avg_pool3d(x, 3, 2, 1, count_include_pad=False),
    lambda x: F.adaptive_avg_pool3d(x, (3, 4, 2)),
    lambda x: F.adaptive_max_pool3d(x, (3, 4, 2), return_indices=True),
], ids=["max", "avg", "adaptive_avg", "adaptive_max"])
def test_pools(pool):
    on_both(pool, [RNG.standard_normal((2, 3, 7, 8, 5))])


def test_max_pool3d_indices_equal_cpu():
    a = RNG.standard_normal((2, 3, 6, 6, 6))
    _, i_cpu = F.max_pool3d(ember.tensor(a), 2, return_indices=True)
    _, i_gpu = F.max_pool3d(ember.tensor(a, device="cuda"), 2, return_indices=True)
    np.testing.assert_array_equal(i_gpu.cpu().numpy(), i_cpu.numpy())
