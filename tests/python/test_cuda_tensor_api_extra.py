"""The Tensor API additions (python/ember/_tensor_api_*.py) on CUDA against the
CPU path: every in-place op (in place on the GPU, same values as on the CPU),
the in-place shape changes, and the functions whose results carry indices or
special values (nanmedian, mode, frexp, nextafter, gcd, put_, take,
index_reduce, windows, empty_strided). test_cuda_ops.py already runs every
OpCase row of test_tensor_api_extra.py and test_tensor_api_math.py on CUDA.

Every test needs a CUDA GPU and skips, saying why, without one.
"""
import numpy as np
import pytest

import ember
from ember._tensor_api_extra import _INPLACE_OF
from harness import needs_gpu
from test_tensor_api_extra import _inputs

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy
NAN = float("nan")


def both(fn, *arrays):
    """fn on CPU tensors and on CUDA tensors made from the same arrays, as numpy results."""
    out = []
    for device in ("cpu", "cuda"):
        result = fn(*[ember.tensor(np.array(a, copy=True)).to(device) for a in arrays])
        items = result if isinstance(result, (tuple, list)) else [result]
        out.append([r.detach().cpu().numpy() for r in items])
    return out


def assert_same(cpu, cuda, exact=False):
    for a, b in zip(cpu, cuda):
        assert a.shape == b.shape and a.dtype == b.dtype
        if exact or a.dtype.kind in "biu":
            np.testing.assert_array_equal(b, a)
        else:
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", sorted(_INPLACE_OF))
def test_inplace_ops_on_cuda(name):
    base, extra = _inputs(name)
    results = []
    for device in ("cpu", "cuda"):
        x = ember.tensor(base.copy()).to(device)
        args = [ember.tensor(v.copy()).to(device) if isinstance(v, np.ndarray) else v for v in extra]
        ptr, version = x.data_ptr(), x._version
        assert getattr(x, name)(*args) is x
        assert x.data_ptr() == ptr and x._version == version + 1 and x.device.type == device
        results.append(x.cpu().numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=name)


def test_inplace_gradients_on_cuda():
    grads = []
    for device in ("cpu", "cuda"):
        x = ember.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], dtype=ember.float64).to(device).requires_grad_()
        y = x * 2
        y[0].acos_()
        y.hypot_(ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64).to(device))
        y.cumsum_(1)
        y.sum().backward()
        grads.append(x.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_shape_changing_inplace_on_cuda():
    x = ember.arange(6.0).reshape(2, 3).cuda()
    ptr = x.data_ptr()
    x.t_().unsqueeze_(0).squeeze_(0).swapdims_(0, 1).transpose_(0, 1)
    assert x.shape == (3, 2) and x.data_ptr() == ptr and x.device.type == "cuda"
    assert x.cpu().tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


def test_special_values_on_cuda():
    x = np.array([0.0, -0.0, 1.0, 2.0, 0.5, 1e-40, 3.4e38, np.inf, -np.inf, NAN, -0.75], np.float32)
    y = np.array([1.0, -1.0, 0.0, 0.0, 1.0, 1.0, np.inf, 0.0, 0.0, 1.0, 1.0], np.float32)
    for dtype in (np.float32, np.float64):
        assert_same(*both(ember.nextafter, x.astype(dtype), y.astype(dtype)), exact=True)
        assert_same(*both(ember.frexp, x.astype(dtype)), exact=True)
        assert_same(*both(ember.signbit, x.astype(dtype)), exact=True)
    assert_same(*both(lambda a, b: ember.fmax(a, b), x, y[::-1].copy()), exact=True)
    assert_same(*both(ember.i0, np.linspace(-60, 60, 41)))
    assert_same(*both(ember.sinc, np.array([0.0, 0.5, -2.5], np.float32)))


def test_integer_functions_on_cuda():
    a = np.array([0, 0, -4, 9, 2 ** 40, 17, 12])
    b = np.array([0, 5, 6, -6, 2 ** 35 * 3, 0, 18])
    assert_same(*both(ember.gcd, a, b))
    assert_same(*both(ember.lcm, a[:4], b[:4]))
    assert_same(*both(lambda t: t.heaviside(t.new_tensor([1])), a))


def test_order_statistics_with_indices_on_cuda():
    rng = np.random.default_rng(0)
    a = rng.uniform(-2, 2, (5, 9))
    a[a > 1] = NAN
    a[2] = NAN
    for dim in (0, 1):
        assert_same(*both(lambda t: ember.nanmedian(t, dim), a))
        assert_same(*both(lambda t: ember.nanquantile(t, t.new_tensor([0.25, 0.5]), dim=dim), a))
    ints = rng.integers(0, 3, (4, 11))
    for dim in (0, 1, -1):
        assert_same(*both(lambda t: ember.mode(t, dim, keepdim=True), ints))
    assert_same(*both(lambda t: ember.cov(t), rng.uniform(-1, 1, (3, 7))))
    assert_same(*both(lambda t: ember.corrcoef(t), rng.uniform(-1, 1, (3, 7))))


def test_indexing_functions_on_cuda():
    rng = np.random.default_rng(1)
    base = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    index = np.array([[0, -1], [5, 10]])
    assert_same(*both(lambda t, i: ember.take(t, i), base, index))
    assert_same(*both(lambda t, i, v: t.t().clone().put_(i, v, accumulate=True), base, index,
                      np.float32([[1, 2], [3, 4]])))
    slots = np.array([0, 2, 0, 0, 1])
    src = rng.uniform(0.5, 1.5, (3, 5)).astype(np.float32)
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            assert_same(*both(lambda t, i, s: t.index_reduce(1, i, s, reduce, include_self=include_self),
                              base, slots, src))
    assert_same(*both(lambda t, s: ember.diagonal_scatter(t, s, 1), base, np.float32([7, 8, 9])))
    assert_same(*both(lambda t: ember.combinations(t, 2, True), np.float32([1, 2, 3])))
    assert_same(*both(lambda t: ember.argwhere(t > 0), base))


def test_factories_on_cuda():
    for name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"):
        fn = getattr(ember, name)
        gpu, cpu = fn(9, device="cuda", dtype=ember.float64), fn(9, dtype=ember.float64)
        assert gpu.device.type == "cuda"
        np.testing.assert_allclose(gpu.cpu().numpy(), cpu.numpy(), rtol=1e-12)
    t = ember.empty_strided((2, 3), (1, 2), device="cuda")
    assert t.device.type == "cuda" and t.stride() == (1, 2)
    n = ember.ones(1, device="cuda").new_empty_strided((2, 3, 4), (12, 1, 3))
    assert n.device.type == "cuda" and n.stride() == (12, 1, 3)


def test_more_methods_on_cuda():
    a = np.array([1, -8, 5, 2 ** 62, -1])
    for b in (0, 1, 3, 62, 63, 64, 70):
        assert_same(*both(lambda t: t << b, a))
        assert_same(*both(lambda t: t >> b, a))
    assert_same(*both(lambda t: t.to(ember.uint8) << 3, np.array([1, 200, 5])))
    assert_same(*both(ember.angle, np.array([-1.0, 0.0, 2.0, NAN, -np.inf])))
    assert_same(*both(lambda t: t.sum_to_size(1, 4), np.ones((3, 4))))
    assert_same(*both(lambda t: ember.nonzero_static(t, size=4, fill_value=-1), np.array([[0, 1], [1, 1]])))
    rng = np.random.default_rng(2)
    m = np.triu(rng.standard_normal((4, 4))) + 4 * np.eye(4)
    assert_same(*both(lambda t, b: ember.triangular_solve(b, t, True, True).solution, m, rng.standard_normal((4, 2))))
    for fill in (lambda t: t.geometric_(0.25), lambda t: t.cauchy_(), lambda t: t.log_normal_()):
        x = ember.empty(1000, device="cuda")
        ptr = x.data_ptr()
        assert fill(x) is x and x.data_ptr() == ptr and bool(ember.isfinite(x).all())
    with pytest.raises(TypeError, match="apply_ is only implemented on CPU tensors"):
        ember.ones(2, device="cuda").apply_(lambda v: v)


def test_shape_changing_inplace_gradients_on_cuda():
    grads = []
    for device in ("cpu", "cuda"):
        x = ember.tensor(np.arange(12.0).reshape(3, 4) / 10).to(device).requires_grad_()
        y = x * 2
        y.t_()
        v = (x * 3)[1:]
        v.unsqueeze_(0).transpose_(0, 2)
        w = ember.arange(12.0, dtype=ember.float64).to(device)
        ((y * w.reshape(4, 3)).sum() + (v * w[:8].reshape(4, 2, 1)).sum()).backward()
        grads.append(x.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)
