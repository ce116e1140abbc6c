"""sort / argsort / topk / msort: forward against numpy's stable sorts (and
PyTorch when importable) on every dim and dtype, NaN placement, ties (always
stable), both topk strategies (heap for small k, partition for large k), 0-d,
empty and non-contiguous inputs, gradcheck and double backward, the named
tuple results and errors."""
import numpy as np
import pytest

import ember
from harness import (OpCase, assert_close, make, parametrize_cases, random_array, table_tests, to_numpy,
                     torch)

NUMERIC = (np.float32, np.float64, np.float16, np.int8, np.uint8, np.int32, np.int64)
ALL = NUMERIC + (np.bool_,)


# ---- numpy references: stable sorts in both directions

def np_argsort(a, axis=-1, descending=False):
    """Stable argsort; descending keeps equal elements in input order and puts
    NaN first (PyTorch's order), found as the reversed stable ascending sort
    of the reversed array."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    rev = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(rev, axis)


def np_sort(a, axis=-1, descending=False):
    return np.take_along_axis(a, np_argsort(a, axis, descending), axis)


def np_topk_indices(a, k, axis=-1, largest=True):
    idx = np_argsort(a, axis, descending=largest)
    return np.take(idx, np.arange(k), axis=axis)


def np_topk(a, k, axis=-1, largest=True):
    return np.take_along_axis(a, np_topk_indices(a, k, axis, largest), axis)


def t_sort(x, dim=-1, descending=False):
    return torch.sort(x, dim=dim, descending=descending, stable=True).values


SHAPES = [[(3, 5)], [(2, 3, 4)], [(7,)]]
SHAPES_2D = [[(3, 5)], [(4, 2, 3)]]

CASES = [
    OpCase("sort_last", lambda x: ember.sort(x).values, lambda a: np_sort(a), SHAPES, dtypes=ALL,
           torch_fn=lambda x: t_sort(x)),
    OpCase("sort_desc_dim0", lambda x: x.sort(0, descending=True).values, lambda a: np_sort(a, 0, True), SHAPES,
           dtypes=ALL, torch_fn=lambda x: t_sort(x, 0, True)),
    OpCase("sort_indices_dim1", lambda x: ember.sort(x, dim=1, stable=True).indices, lambda a: np_argsort(a, 1),
           SHAPES_2D, dtypes=NUMERIC, grad=False,
           torch_fn=lambda x: torch.sort(x, dim=1, stable=True).indices),
    OpCase("argsort_last", lambda x: ember.argsort(x, stable=True), lambda a: np_argsort(a), SHAPES, dtypes=ALL,
           grad=False, torch_fn=lambda x: torch.argsort(x, stable=True)),
    OpCase("argsort_desc_dim1", lambda x: x.argsort(dim=1, descending=True), lambda a: np_argsort(a, 1, True),
           SHAPES_2D, dtypes=NUMERIC, grad=False,
           torch_fn=lambda x: torch.argsort(x, dim=1, descending=True, stable=True)),
    OpCase("topk_last", lambda x: ember.topk(x, 2).values, lambda a: np_topk(a, 2), SHAPES, dtypes=NUMERIC,
           torch_fn=lambda x: torch.topk(x, 2).values),
    OpCase("topk_smallest_dim0", lambda x: x.topk(2, dim=0, largest=False).values,
           lambda a: np_topk(a, 2, 0, largest=False), SHAPES_2D, dtypes=NUMERIC,
           torch_fn=lambda x: torch.topk(x, 2, dim=0, largest=False).values),
    # Tie order: ember keeps input order (PyTorch's CPU topk does not promise one).
    OpCase("topk_indices", lambda x: ember.topk(x, 3, dim=-1).indices, lambda a: np_topk_indices(a, 3),
           SHAPES, dtypes=NUMERIC, grad=False,
           extra={"no_torch_parity": "ties: ember keeps input order, PyTorch's CPU topk promises none"}),
    OpCase("msort", lambda x: ember.msort(x), lambda a: np_sort(a, 0), SHAPES, dtypes=NUMERIC,
           torch_fn=lambda x: torch.msort(x)),
]

# forward against numpy for every row; float64 gradcheck for differentiable rows
test_forward, test_gradcheck = table_tests(CASES)


@parametrize_cases(CASES)
def test_noncontiguous(case):
    a = random_array((4, 3, 5))
    t = make(np.ascontiguousarray(np.swapaxes(a, 0, 2))).permute(2, 1, 0)  # transposed storage
    assert not t.is_contiguous()
    assert_close(case.ember_fn(t), case.numpy_fn(a), msg=f"{case.name} permuted")
    padded = np.zeros((4, 3, 11), np.float32)
    padded[..., 1::2] = a
    assert_close(case.ember_fn(make(padded)[..., 1::2]), case.numpy_fn(a), msg=f"{case.name} sliced")
    row = random_array((1, 3, 5))
    e = make(row).expand(4, 3, 5)  # stride 0: every row equal, so ties everywhere along dim 0
    assert_close(case.ember_fn(e), case.numpy_fn(np.broadcast_to(row, (4, 3, 5)).copy()),
                 msg=f"{case.name} expanded")


# ---- semantics

NAN, INF = float("nan"), float("inf")
SPECIAL = [3.0, NAN, 1.0, -0.0, 0.0, INF, -INF, 1.0]


def test_nan_inf_signed_zero_order():
    # Expected indices as PyTorch gives them (stable): NaN last ascending, first descending; -0.0 ties 0.0.
    x = ember.tensor(SPECIAL)
    v, i = ember.sort(x, stable=True)
    assert i.tolist() == [6, 3, 4, 2, 7, 0, 5, 1]
    assert np.signbit(to_numpy(v)[1]) and not np.signbit(to_numpy(v)[2])  # the input's zeros, signs kept
    assert np.isnan(to_numpy(v)[-1])
    assert ember.sort(x, descending=True).indices.tolist() == [1, 5, 0, 2, 7, 3, 4, 6]
    assert ember.topk(x, 3).indices.tolist() == [1, 5, 0]
    assert ember.topk(x, 3, largest=False).indices.tolist() == [6, 3, 4]
    for dtype in (ember.float64, ember.float16, ember.bfloat16):
        assert ember.argsort(x.to(dtype)).tolist() == [6, 3, 4, 2, 7, 0, 5, 1], dtype
        assert ember.topk(x.to(dtype), 2).indices.tolist() == [1, 5], dtype


@pytest.mark.parametrize("n", [5, 300, 5000])
def test_ties_are_stable_both_ways(n):
    rng = np.random.default_rng(n)
    a = rng.integers(0, 4, size=(3, n)).astype(np.float32)
    a[0, ::7] = np.nan  # several NaNs: they keep input order too
    for desc in (False, True):
        got = ember.argsort(make(a), dim=1, descending=desc)
        np.testing.assert_array_equal(to_numpy(got), np_argsort(a, 1, desc))
        got0 = ember.argsort(make(a.T.copy()), dim=0, descending=desc)
        np.testing.assert_array_equal(to_numpy(got0), np_argsort(a.T, 0, desc))
    # stable=False gives the same (stable) order: the kernels are always stable.
    np.testing.assert_array_equal(to_numpy(ember.argsort(make(a), stable=False)), np.argsort(a, kind="stable"))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.uint8, np.float32, np.float64])
def test_long_rows_sort_stably(dtype):
    # Rows of 4096+ packed pairs take the radix sort: ties keep input order both ways, extremes and
    # (for floats) NaN and -0.0 sit where the short rows' std::sort puts them.
    rng = np.random.default_rng(7)
    a = rng.integers(-300, 300, size=(2, 20_000)).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        a[0, ::11], a[1, ::13], a[1, 5::17] = np.nan, -0.0, np.inf
    else:
        info = np.iinfo(dtype)
        a[0, ::11], a[1, ::13] = info.min, info.max
    for desc in (False, True):
        v, i = ember.sort(make(a), dim=1, descending=desc)
        np.testing.assert_array_equal(to_numpy(i), np_argsort(a, 1, desc))
        np.testing.assert_array_equal(to_numpy(v), np_sort(a, 1, desc))


@pytest.mark.parametrize("dtype", ALL + ("bfloat16",))
def test_every_dtype_with_extremes(dtype):
    if dtype == "bfloat16":
        a = np.array([[1.5, -2.0, 0.0, NAN, -INF, 3.0e38, -1.0e-38, 1.5]], np.float32)
        x = ember.tensor(a).to(ember.bfloat16)
        a = to_numpy(x.float())
    else:
        if np.dtype(dtype) == np.bool_:
            a = np.array([[True, False, True, False, False]])
        elif np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            a = np.array([[0, info.max, info.min, 1, info.min, info.max - 1, 5, 0]], dtype)
        else:
            a = np.array([[1.5, -2.0, 0.0, NAN, -INF, INF, -0.0, 1.5, np.finfo(dtype).max, np.finfo(dtype).min]],
                         dtype)
        x = make(a)
    for desc in (False, True):
        v, i = ember.sort(x, descending=desc)
        assert v.dtype == x.dtype and i.dtype == ember.int64
        np.testing.assert_array_equal(to_numpy(i), np_argsort(a, -1, desc))
        got = to_numpy(v.float()) if dtype == "bfloat16" else to_numpy(v)
        np.testing.assert_array_equal(got, np_sort(a, -1, desc))
    if dtype != np.bool_:
        for largest in (True, False):
            v, i = ember.topk(x, 3, largest=largest)
            np.testing.assert_array_equal(to_numpy(i), np_topk_indices(a, 3, -1, largest))


@pytest.mark.parametrize("span", [2**32 - 1, 2**32, 2**40])
def test_int64_rows_around_the_packed_key_span(span):
    # int64 rows whose keys span less than 2^32 sort as packed pairs, wider ones as wide pairs.
    a = np.array([[span, 0, 7, span, -3 + 3, 1, span - 1, 0]], np.int64) - span // 2
    for desc in (False, True):
        np.testing.assert_array_equal(to_numpy(ember.argsort(make(a), descending=desc)), np_argsort(a, -1, desc))
        np.testing.assert_array_equal(to_numpy(ember.sort(make(a), descending=desc).values), np_sort(a, -1, desc))


@pytest.mark.parametrize("base", [-2**63, -5_000, 2**63 - 2**31])
def test_long_int64_rows_of_a_narrow_span(base):
    # Long int64 rows spanning under 2^32 take the packed radix sort, and their values are decoded
    # from the keys: at the ends of the int64 range and across zero, with ties, both directions.
    rng = np.random.default_rng(3)
    a = base + rng.integers(0, 2**31, size=(3, 9_000), dtype=np.int64)
    a[:, ::7] = base + 12_345  # ties
    a[1] = base + rng.integers(0, 10_000, size=9_000)  # two radix digits
    for desc in (False, True):
        v, i = ember.sort(make(a), dim=1, descending=desc)
        np.testing.assert_array_equal(to_numpy(i), np_argsort(a, 1, desc))
        np.testing.assert_array_equal(to_numpy(v), np_sort(a, 1, desc))


@pytest.mark.parametrize("k", [1, 7, 100, 499, 500])
def test_topk_small_and_large_k(k):
    # k * 16 <= n takes the heap path, larger k the partition path: same answers.
    rng = np.random.default_rng(k)
    a = rng.standard_normal((4, 500)).astype(np.float32)
    a[1] = np.round(a[1])  # many ties
    a[2, 3::50] = np.nan
    a[3] = np.sort(a[3])  # ascending rows: the heap's worst case
    for largest in (True, False):
        v, i = ember.topk(make(a), k, largest=largest)
        np.testing.assert_array_equal(to_numpy(i), np_topk_indices(a, k, -1, largest), err_msg=f"largest={largest}")
        np.testing.assert_array_equal(to_numpy(v), np_topk(a, k, -1, largest))
    if torch is not None:
        tv, _ = torch.topk(torch.from_numpy(a), k)
        np.testing.assert_array_equal(to_numpy(ember.topk(make(a), k).values), tv.numpy())


def test_topk_vocabulary_rows():
    # Top-k sampling's shape: a few rows of GPT-2's vocabulary.
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((2, 50257)).astype(np.float32)
    v, i = make(logits).topk(50)
    np.testing.assert_array_equal(to_numpy(i), np_topk_indices(logits, 50))
    assert v.shape == (2, 50)
    # a middle dim, through the transposed layout
    v3, i3 = ember.topk(make(logits.reshape(2, 50257, 1)), 5, dim=1)
    assert v3.shape == (2, 5, 1)
    np.testing.assert_array_equal(to_numpy(i3)[..., 0], np_topk_indices(logits, 5))


def test_sort_dims_of_3d():
    a = random_array((3, 4, 5), np.float64)
    for dim in (0, 1, 2, -1, -3):
        for desc in (False, True):
            v, i = ember.sort(make(a), dim, desc)
            np.testing.assert_array_equal(to_numpy(i), np_argsort(a, dim, desc))
            np.testing.assert_array_equal(to_numpy(v), np_sort(a, dim, desc))
            assert v.is_contiguous() and i.is_contiguous()


def test_zero_dim_and_empty():
    s = ember.tensor(3.0)
    v, i = ember.sort(s)
    assert v.shape == () and i.shape == () and v.item() == 3.0 and i.item() == 0
    assert ember.argsort(s).shape == ()
    assert ember.sort(s, dim=-1).values.item() == 3.0
    for k in (0, 1):  # PyTorch returns the element for both
        v, i = ember.topk(s, k)
        assert v.shape == () and v.item() == 3.0 and i.item() == 0
    assert ember.msort(s).item() == 3.0
    e = ember.zeros(0, 3)
    assert ember.sort(e, dim=0).values.shape == (0, 3)
    assert ember.sort(e, dim=1).indices.shape == (0, 3)
    assert ember.topk(ember.zeros(2, 0), 0).values.shape == (2, 0)
    v, i = ember.topk(ember.zeros(0, 5), 2)
    assert v.shape == (0, 2) and i.dtype == ember.int64
    assert ember.topk(ember.ones(3, 4), 0).indices.shape == (3, 0)


def test_named_tuples_and_methods():
    x = make(random_array((2, 6)))
    r = ember.sort(x)
    assert type(r).__name__ == "sort" and type(r).__module__ == "ember.return_types"
    assert isinstance(r, ember.return_types.sort)
    v, i = r
    assert v is not None and r.values.shape == r.indices.shape == (2, 6)
    t = x.topk(3, 1, False, True)
    assert type(t).__name__ == "topk" and isinstance(t, ember.return_types.topk)
    assert_close(t.values, np_topk(to_numpy(x), 3, 1, largest=False))
    assert_close(x.argsort(), np_argsort(to_numpy(x)))
    assert_close(x.msort(), np_sort(to_numpy(x), 0))
    assert_close(x.sort(stable=True, dim=0, descending=True).values, np_sort(to_numpy(x), 0, True))
    with pytest.raises(TypeError):
        ember.sort(x, 0, True, True)  # stable is keyword-only, as in torch


# ---- autograd

def test_gradient_goes_to_the_sorted_positions():
    x = ember.tensor([3.0, 1.0, 2.0, 5.0], requires_grad=True)
    v, i = ember.topk(x, 2)
    assert v.grad_fn.name() == "TopkBackward0" and not i.requires_grad
    (v * ember.tensor([10.0, 1.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0, 10.0]
    y = ember.tensor([[3.0, 1.0], [2.0, 5.0]], requires_grad=True)
    v, _ = y.sort(0, descending=True)
    assert v.grad_fn.name() == "SortBackward0"
    (v * ember.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert y.grad.tolist() == [[1.0, 4.0], [3.0, 2.0]]
    assert not ember.argsort(y).requires_grad
    s = ember.tensor(2.0, requires_grad=True)
    ember.topk(s, 1).values.backward()
    assert s.grad.item() == 1.0


@pytest.mark.parametrize("op", ["sort", "topk"])
def test_double_backward(op):
    a = random_array((3, 6), np.float64)
    x = make(a, requires_grad=True)
    w = make(random_array((3, 4) if op == "topk" else (3, 6), np.float64), requires_grad=True)
    v, idx = ember.topk(x, 4, dim=1) if op == "topk" else ember.sort(x, dim=1, descending=True)
    (gx,) = ember.autograd.grad((v * w).sum(), x, create_graph=True)
    c = make(random_array((3, 6), np.float64))
    (gx * c).sum().backward()
    # gx[r, idx[r, j]] = w[r, j], so d(sum gx * c)/dw[r, j] = c[r, idx[r, j]].
    want = np.take_along_axis(to_numpy(c), to_numpy(idx), 1)
    assert_close(w.grad, want, 1e-12, 1e-12)


@pytest.mark.parametrize("op", ["sort", "topk", "sort_dim0"])
def test_gradcheck_distinct_values(op):
    fn = {"sort": lambda x: ember.sort(x, descending=True).values,
          "topk": lambda x: ember.topk(x, 3, dim=-1, largest=False).values,
          "sort_dim0": lambda x: ember.sort(x, 0).values}[op]
    x = make(np.random.default_rng(3).permutation(24).reshape(4, 6).astype(np.float64) / 4, requires_grad=True)
    assert ember.autograd.gradcheck(fn, [x])


# ---- errors

def test_errors_name_the_op():
    x = ember.zeros(8)
    with pytest.raises(RuntimeError, match=r"topk: selected index k \(9\) out of range for dimension 0 of size 8"):
        ember.topk(x, 9)
    with pytest.raises(RuntimeError, match=r"topk: selected index k \(-1\)"):
        x.topk(-1)
    with pytest.raises(RuntimeError, match=r"topk: .*k \(2\).*size 1"):
        ember.topk(ember.tensor(1.0), 2)
    for fn, name in ((lambda: ember.sort(x, 1), "sort"), (lambda: ember.argsort(x, dim=-2), "argsort"),
                     (lambda: ember.topk(x, 1, dim=2), "topk"), (lambda: ember.zeros(2, 3).sort(2), "sort")):
        with pytest.raises(IndexError, match=name):
            fn()
    with pytest.raises(NotImplementedError, match="topk: .*bool"):
        ember.topk(ember.tensor([True, False]), 1)
    with pytest.raises(TypeError):
        ember.topk(x)  # k is required


def test_errors_match_torch_types():
    if torch is None:
        pytest.skip("torch is not installed: the exception types are pinned by test_errors_name_the_op")
    for call in (lambda m: m.topk(m.zeros(8), 9), lambda m: m.sort(m.zeros(8), 1),
                 lambda m: m.topk(m.tensor([True]), 1), lambda m: m.topk(m.zeros(3), -1)):
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(want.type):
            call(ember)


# ---- against PyTorch on random data with NaNs and ties

@pytest.mark.skipif(torch is None, reason="torch is not installed (numpy is the reference above)")
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "int8"])
def test_against_torch(dtype):
    rng = np.random.default_rng(7)
    a = rng.integers(-6, 7, size=(5, 40)).astype(np.float64)
    if dtype.startswith(("float", "bfloat")):
        a = a / 2
        a[1, ::5] = np.nan
        a[2, 3] = INF
        a[3, 7] = -INF
    elif dtype == "uint8":
        a = np.abs(a)
    tdtype = getattr(torch, dtype)
    t = torch.from_numpy(a).to(tdtype)
    x = ember.tensor(a).to(getattr(ember, dtype))

    def back(e):
        return to_numpy(e.float() if e.dtype == ember.bfloat16 else e)

    def tnp(tt):
        return (tt.float() if tt.dtype == torch.bfloat16 else tt).numpy()

    for dim in (0, 1):
        for desc in (False, True):
            tv, ti = torch.sort(t, dim=dim, descending=desc, stable=True)
            ev, ei = ember.sort(x, dim=dim, descending=desc, stable=True)
            np.testing.assert_array_equal(back(ev), tnp(tv))
            np.testing.assert_array_equal(to_numpy(ei), ti.numpy())
        for largest in (True, False):
            tv, ti = torch.topk(t, 4, dim=dim, largest=largest)
            ev, ei = ember.topk(x, 4, dim=dim, largest=largest)
            np.testing.assert_array_equal(back(ev), tnp(tv))
            # ties may be listed in another order: the indices must point at the values
            np.testing.assert_array_equal(np.take_along_axis(back(x), to_numpy(ei), dim), tnp(tv))
