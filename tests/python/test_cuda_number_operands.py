"""Python numbers (CPU 0-d tensors) as operands of CUDA elementwise ops: the
launcher (cuda/device/loops.cuh) passes their value in the kernel's arguments
instead of filling a device scalar first. Results must equal the CPU's, on the
left and on the right, in every dtype and layout, and the op must allocate
nothing but its output.

Every test needs a CUDA GPU and skips, saying why, without one.
"""
import numpy as np
import pytest

import ember
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends

DTYPES = [ember.float32, ember.float64, ember.float16, ember.bfloat16, ember.int32, ember.int64, ember.uint8]

NUMBER_OPS = {
    "x + 3": lambda x: x + 3,
    "3 + x": lambda x: 3 + x,
    "x - 2": lambda x: x - 2,
    "2 - x": lambda x: 2 - x,
    "x * 2": lambda x: x * 2,
    "x * 0.5": lambda x: x * 0.5,
    "x / 4": lambda x: x / 4,
    "5 / x": lambda x: 5 / (x + 100),
    "x ** 2": lambda x: x ** 2,
    "x > 1": lambda x: x > 1,
    "x == 2": lambda x: x == 2,
    "maximum(x, 0-d)": lambda x: ember.maximum(x, ember.tensor(1, dtype=x.dtype)),
    "where(x > 1, x, 0-d)": lambda x: ember.where(x > 1, x, ember.tensor(7, dtype=x.dtype)),
    "clamp(x, 0-d, 0-d)": lambda x: ember.clamp(x, ember.tensor(1, dtype=x.dtype), ember.tensor(5, dtype=x.dtype)),
    "x.add_(1)": lambda x: x.clone().add_(1),
}


def layouts(n=1031):
    """(name, CPU tensor) pairs: contiguous (odd length: vector tails), strided, transposed."""
    base = ember.tensor(np.arange(2 * n, dtype=np.float64) % 9)
    yield "contiguous", base[:n]
    yield "every other element", base[::2]
    yield "transposed", base[: 30 * 20].reshape(30, 20).t()
    yield "offset by one element", base[1 : n + 1]


@pytest.mark.parametrize("name", list(NUMBER_OPS))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_number_operand_matches_cpu(name, dtype):
    fn = NUMBER_OPS[name]
    if dtype == ember.uint8 and name in ("2 - x", "x - 2"):
        pytest.skip("uint8 wraps: compared in the int dtypes")
    for layout, x in layouts():
        x = x.to(dtype)
        want = fn(x)
        got = fn(x.cuda())
        assert got.is_cuda and got.dtype == want.dtype, (layout, got.dtype, want.dtype)
        tol = 1e-2 if dtype in (ember.float16, ember.bfloat16) else 1e-6
        np.testing.assert_allclose(got.cpu().to(ember.float64).numpy(), want.to(ember.float64).numpy(),
                                   rtol=tol, atol=tol, err_msg=f"{name} on {layout}")


def test_number_operand_allocates_only_the_output():
    # A device scalar for the 2.5 (what a fill kernel would need) would raise
    # the peak by one more block while the op runs, even if freed at once.
    x = ember.ones(1 << 20, device="cuda")
    ember.cuda.synchronize()
    before = ember.cuda.memory_allocated()
    ember.cuda.reset_peak_memory_stats()
    y = x * 2.5
    out_bytes = 4 << 20
    assert ember.cuda.max_memory_allocated() - before == out_bytes
    assert ember.cuda.memory_allocated() - before == out_bytes
    assert float(y[123].item()) == 2.5


def test_half_number_rounds_like_the_cpu():
    # 0.1 is not representable in half types. As in PyTorch, neither backend
    # rounds the number to the tensor's dtype: x * 0.1 is float(x) * 0.1f,
    # rounded once (0.1 rounded to half first gives other results).
    for dtype in (ember.float16, ember.bfloat16):
        x = ember.linspace(-4, 4, 257).to(dtype)
        wide = x.to(ember.float32)
        for fn in (lambda t, n: t * n, lambda t, n: n * t, lambda t, n: t + n, lambda t, n: n - t,
                   lambda t, n: t / n, lambda t, n: n / t):
            want = fn(wide, 0.1).to(dtype)
            assert bool((fn(x, 0.1) == want).all()), dtype
            assert bool((fn(x.cuda(), 0.1).cpu() == want).all()), dtype
        y = x.cuda()
        y.mul_(0.1)
        assert bool((y.cpu() == (wide * 0.1).to(dtype)).all()), dtype
        assert bool(((x + 1e-3) == (x.cuda() + 1e-3).cpu()).all()), dtype
