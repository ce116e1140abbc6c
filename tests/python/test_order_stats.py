"""median, kthvalue, quantile, searchsorted, bucketize, bincount and histc
(python/ember/_sorting_extra.py) against numpy (and PyTorch where importable)."""

import numpy as np
import pytest

import ember
from harness import CUDA_AVAILABLE, OpCase, make, table_tests, to_numpy, torch


def np_lower_median(a, axis):
    s = np.sort(a, axis=axis)
    return np.take(s, (a.shape[axis] - 1) // 2, axis=axis)


CASES = [
    OpCase("median_dim", lambda a: ember.median(a, 1).values, lambda a: np_lower_median(a, 1), [[(3, 5)], [(2, 4)]],
           dtypes=(np.float32, np.float64, np.int64)),
    OpCase("median_all", lambda a: ember.median(a), lambda a: np_lower_median(a.reshape(-1), 0), [[(3, 4)], [(5,)]]),
    OpCase("kthvalue", lambda a: ember.kthvalue(a, 2, 0).values, lambda a: np.sort(a, 0)[1], [[(4, 3)]]),
    OpCase("quantile_linear", lambda a: ember.quantile(a, 0.3, dim=1), lambda a: np.quantile(a, 0.3, axis=1),
           [[(3, 6)]], rtol=1e-5),
    OpCase("quantile_all_midpoint", lambda a: ember.quantile(a, 0.75, interpolation="midpoint"),
           lambda a: np.quantile(a, 0.75, method="midpoint"), [[(4, 5)]]),
]

test_forward, test_gradcheck = table_tests(CASES)


def test_median_and_kthvalue_indices_and_nan():
    x = ember.tensor([[4.0, 1.0, 3.0, 2.0], [9.0, 7.0, 8.0, 6.0]])
    values, indices = ember.median(x, 1)
    assert values.tolist() == [2.0, 7.0] and indices.tolist() == [3, 1]
    assert ember.median(x, 1, keepdim=True).values.shape == (2, 1)
    k = x.kthvalue(3, 1)
    assert k.values.tolist() == [3.0, 8.0] and k.indices.tolist() == [2, 2]
    nan = float("nan")
    m = ember.median(ember.tensor([[1.0, nan, 3.0], [1.0, 2.0, 3.0]]), 1)
    assert np.isnan(m.values[0].item()) and m.indices.tolist() == [1, 1]
    assert np.isnan(ember.median(ember.tensor([1.0, nan])).item())
    with pytest.raises(RuntimeError, match="kthvalue\\(\\): selected number k out of range"):
        x.kthvalue(5, 1)


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_matches_numpy(interpolation):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 7))
    q = np.array([0.0, 0.1, 0.25, 0.5, 0.9, 1.0])
    method = {"nearest": "nearest"}.get(interpolation, interpolation)
    got = ember.quantile(ember.tensor(a), ember.tensor(q), dim=1, interpolation=interpolation).numpy()
    np.testing.assert_allclose(got, np.quantile(a, q, axis=1, method=method), rtol=1e-12)
    if torch is not None:
        want = torch.quantile(torch.tensor(a), torch.tensor(q), dim=1, interpolation=interpolation).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert ember.quantile(ember.tensor(a), 0.5, dim=1, keepdim=True).shape == (4, 1)
    assert np.isnan(ember.quantile(ember.tensor([1.0, float("nan"), 3.0]), 0.1).item())
    with pytest.raises(RuntimeError, match="q values must be in the range"):
        ember.quantile(ember.tensor(a), 1.5)


def test_searchsorted_and_bucketize():
    seq = np.array([1, 3, 5, 7, 9])
    v = np.array([[0, 3, 6], [9, 10, 5]])
    for right in (False, True):
        got = ember.searchsorted(ember.tensor(seq), ember.tensor(v), right=right)
        np.testing.assert_array_equal(got.numpy(), np.searchsorted(seq, v, side="right" if right else "left"))
        assert got.dtype == ember.int64
    assert ember.searchsorted(ember.tensor(seq), 3, side="right").item() == 2
    rows = ember.tensor([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]])
    np.testing.assert_array_equal(ember.searchsorted(rows, ember.tensor([[2.5], [5.0]])).numpy(), [[2], [0]])
    assert ember.searchsorted(ember.tensor(seq), ember.tensor(v), out_int32=True).dtype == ember.int32
    unsorted = ember.tensor([5, 1, 3])
    assert ember.searchsorted(unsorted, ember.tensor([4]), sorter=ember.argsort(unsorted)).tolist() == [2]
    b = ember.bucketize(ember.tensor([1, 5, 10]), ember.tensor([1, 5, 9]))
    assert b.tolist() == [0, 1, 3]
    assert ember.bucketize(ember.tensor([1, 5, 10]), ember.tensor([1, 5, 9]), right=True).tolist() == [1, 2, 3]
    long_values = ember.arange(100000) % 11
    np.testing.assert_array_equal(ember.searchsorted(ember.tensor(seq), long_values).numpy(),
                                  np.searchsorted(seq, long_values.numpy()))
    with pytest.raises(RuntimeError, match="boundaries tensor should be 1 dimension or the first N-1"):
        ember.searchsorted(rows, ember.tensor([1.0, 2.0, 3.0]))


def test_bincount_and_histc():
    x = ember.tensor([0, 1, 1, 3, 1])
    assert ember.bincount(x).tolist() == [1, 3, 0, 1]
    assert ember.bincount(x, minlength=6).tolist() == [1, 3, 0, 1, 0, 0]
    w = ember.bincount(x, weights=ember.tensor([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert w.dtype == ember.float32 and w.tolist() == [1.0, 10.0, 0.0, 4.0]
    assert ember.bincount(ember.tensor([], dtype=ember.int64)).numel() == 0
    with pytest.raises(RuntimeError, match="non-negative"):
        ember.bincount(ember.tensor([-1, 2]))
    data = np.random.default_rng(2).standard_normal(1000).astype(np.float32)
    got = ember.histc(ember.tensor(data), bins=10, min=-2, max=2).numpy()
    want, _ = np.histogram(data[(data >= -2) & (data <= 2)], bins=10, range=(-2, 2))
    np.testing.assert_array_equal(got, want)
    assert ember.histc(ember.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3).tolist() == [0.0, 2.0, 1.0, 0.0]
    assert ember.histc(ember.tensor([1.0, 2.0, 1.0]), bins=2).tolist() == [2.0, 1.0]  # the data's own range


def test_gradients_flow_to_the_picked_elements():
    x = make(np.array([[4.0, 1.0, 3.0], [0.5, 2.0, 8.0]]), requires_grad=True)
    ember.median(x, 1).values.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [[0, 0, 1], [0, 1, 0]])


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16, ember.bfloat16])
def test_searchsorted_with_nan_follows_pytorch(dtype):
    # The search passes any element that is not >= the value (not > with right=True), as
    # PyTorch's does: a NaN value lands past the row, and a NaN in the row is passed over.
    nan = float("nan")
    cases = [([1.0, 2.0, 3.0], [nan, 2.0]), ([1.0, 2.0, 2.0, nan], [2.0, 5.0, nan]),
             ([nan, nan], [0.0, nan]), ([1.0, nan, 3.0], [2.0, 0.5, 4.0])]
    want = {False: [[3, 1], [1, 4, 4], [2, 2], [2, 2, 3]], True: [[3, 2], [4, 4, 4], [2, 2], [2, 2, 3]]}
    for right in (False, True):
        for (seq, vals), expected in zip(cases, want[right]):
            got = ember.searchsorted(ember.tensor(seq, dtype=dtype), ember.tensor(vals, dtype=dtype), right=right)
            assert got.tolist() == expected, (seq, vals, right)
            if CUDA_AVAILABLE:  # the same bisection, as ember ops
                on_gpu = ember.searchsorted(ember.tensor(seq, dtype=dtype, device="cuda"),
                                            ember.tensor(vals, dtype=dtype, device="cuda"), right=right)
                assert on_gpu.tolist() == expected, (seq, vals, right)
            if torch is not None:
                t = torch.searchsorted(torch.tensor(seq), torch.tensor(vals), right=right)
                assert t.tolist() == expected, (seq, vals, right)


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("shape", [(37,), (4, 37), (2, 3, 1), (3, 0), (0,)])
def test_the_device_bisection_matches_the_cpu_search(shape, right):
    # Off the CPU searchsorted bisects with ember ops (_bisect); run here on CPU tensors, it must
    # give the C++ search's answers step for step, NaN in the rows included.
    from ember._sorting_extra import _bisect
    rng = np.random.default_rng(sum(shape) + right)
    seq = np.sort(rng.integers(0, 20, shape), axis=-1).astype(np.float32)
    seq[rng.random(shape) < 0.15] = np.nan
    vals = rng.integers(-2, 23, shape[:-1] + (11,)).astype(np.float32) if len(shape) > 1 else \
        rng.integers(-2, 23, (5, 6)).astype(np.float32)
    vals[rng.random(vals.shape) < 0.1] = np.nan
    s, v = ember.tensor(seq), ember.tensor(vals)
    assert _bisect(s, v, right).tolist() == ember._C._searchsorted(s, v, right).tolist()


@pytest.mark.parametrize("dtype", [ember.float64, ember.float32, ember.float16, ember.bfloat16, ember.int64,
                                   ember.int32, ember.uint8])
def test_searchsorted_binary_search_matches_numpy(dtype):
    # Duplicates, values below / above / equal to the ends, batched rows and an empty sequence,
    # against numpy's searchsorted row by row; then a sequence ending in NaN.
    rng = np.random.default_rng(7)
    seq = np.sort(rng.integers(0, 60, (3, 40)), axis=1).astype(np.float64)
    vals = rng.integers(-5, 70, (3, 25)).astype(np.float64)
    es, ev = ember.tensor(seq).to(dtype), ember.tensor(vals).to(dtype)
    s64, v64 = es.to(ember.float64).numpy(), ev.to(ember.float64).numpy()
    for right in (False, True):
        side = "right" if right else "left"
        got = ember.searchsorted(es, ev, right=right).numpy()
        want = np.stack([np.searchsorted(s64[r], v64[r], side=side) for r in range(3)])
        np.testing.assert_array_equal(got, want)
        shared = ember.searchsorted(es[1], ev, right=right).numpy()
        np.testing.assert_array_equal(shared, np.searchsorted(s64[1], v64, side=side))
    assert ember.searchsorted(ember.tensor([], dtype=dtype), ev[0]).tolist() == [0] * 25
    if dtype.is_floating_point:
        nan_seq = ember.tensor([1.0, 2.0, 2.0, float("nan")]).to(dtype)
        probe = ember.tensor([2.0, 5.0, float("nan")]).to(dtype)
        assert ember.searchsorted(nan_seq, probe).tolist() == [1, 4, 4]  # PyTorch's answers (numpy: 1, 3, 3)
        assert ember.searchsorted(nan_seq, probe, right=True).tolist() == [4, 4, 4]  # (numpy: 3, 3, 4)


def test_searchsorted_promotes_mixed_dtypes():
    seq = ember.tensor([1, 3, 5])
    assert ember.searchsorted(seq, 2.5).item() == 1 and ember.searchsorted(ember.tensor([1, 2, 3]), 2.5).item() == 2
    assert ember.searchsorted(seq, ember.tensor([2.5, 3.0, 5.5])).tolist() == [1, 1, 3]
    assert ember.searchsorted(seq.double(), ember.tensor([3, 4])).tolist() == [1, 2]
