"""Reductions: forward against numpy (all/some/negative dims, keepdim, 0-d,
empty), dtype rules, NaN propagation, non-contiguous inputs, gradcheck and
errors."""
import math

import numpy as np
import pytest

import ember
from harness import OpCase, assert_close, make, parametrize_cases, random_array, table_tests, to_numpy

F = (np.float32, np.float64)
INTS = (np.int32, np.int64)


def np_norm(a, p, axis=None, keepdims=False):
    a = np.abs(a.astype(np.float64))
    if p == math.inf:
        r = np.max(a, axis=axis, keepdims=keepdims)
    elif p == -math.inf:
        r = np.min(a, axis=axis, keepdims=keepdims)
    elif p == 0:
        r = np.sum(a != 0, axis=axis, keepdims=keepdims).astype(np.float64)
    else:
        r = np.sum(a ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)
    return np.asarray(r)


def np_logsumexp(a, axis, keepdims=False):
    a = a.astype(np.float64)
    m = np.max(a, axis=axis, keepdims=True)
    r = m + np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True))
    return r if keepdims else np.squeeze(r, axis=axis)


CASES = [
    OpCase("sum_all", lambda x: x.sum(), lambda a: np.sum(a), [[(3, 4)], [()], [(5,)]], dtypes=F + INTS),
    OpCase("sum_dim_keepdim", lambda x: x.sum((0, 2), keepdim=True), lambda a: np.sum(a, (0, 2), keepdims=True),
           [[(2, 3, 4)]], dtypes=F + INTS),
    OpCase("sum_negdim", lambda x: ember.sum(x, -1), lambda a: np.sum(a, -1), [[(3, 5)], [(2, 3, 4)]]),
    OpCase("mean_dims", lambda x: x.mean((0, 2)), lambda a: np.mean(a, (0, 2)), [[(2, 3, 4)]], dtypes=F),
    OpCase("mean_all", lambda x: x.mean(), lambda a: np.mean(a), [[(2, 3, 4)], [()], [(5,)]], dtypes=F),
    OpCase("mean_keepdim", lambda x: ember.mean(x, -1, keepdim=True), lambda a: np.mean(a, -1, keepdims=True),
           [[(2, 3)], [(4,)]], dtypes=F),
    OpCase("prod_all", lambda x: x.prod(), lambda a: np.prod(a), [[(3, 4)], [()]], dtypes=F + INTS,
           domain=(0.5, 1.5), rtol=1e-4),
    OpCase("prod_dim", lambda x: ember.prod(x, 1, keepdim=True), lambda a: np.prod(a, 1, keepdims=True),
           [[(3, 4)], [(2, 3, 2)]], dtypes=F + INTS, rtol=1e-4),
    OpCase("prod_negdim", lambda x: x.prod(-2), lambda a: np.prod(a, -2), [[(3, 4)]]),
    OpCase("max_all", lambda x: x.max(), lambda a: np.max(a), [[(3, 4)], [()], [(7,)]], dtypes=F + INTS),
    OpCase("min_all", lambda x: ember.min(x), lambda a: np.min(a), [[(3, 4)], [()]], dtypes=F + INTS),
    OpCase("max_dim_values", lambda x: x.max(1).values, lambda a: np.max(a, 1), [[(3, 4)], [(2, 3, 4)]],
           dtypes=F + INTS),
    OpCase("max_dim_indices", lambda x: x.max(1)[1], lambda a: np.argmax(a, 1), [[(3, 4)]], dtypes=F + INTS,
           grad=False),
    OpCase("min_dim_keepdim", lambda x: ember.min(x, -1, keepdim=True)[0], lambda a: np.min(a, -1, keepdims=True),
           [[(3, 4)], [(4,)]]),
    OpCase("amax_dims", lambda x: x.amax((0, 2)), lambda a: np.max(a, (0, 2)), [[(2, 3, 4)]], dtypes=F + INTS),
    OpCase("amin_keepdim", lambda x: ember.amin(x, 1, keepdim=True), lambda a: np.min(a, 1, keepdims=True),
           [[(3, 4)]], dtypes=F + INTS),
    OpCase("amax_all", lambda x: x.amax(), lambda a: np.max(a), [[(3, 4)], [()]]),
    OpCase("argmax_all", lambda x: x.argmax(), lambda a: np.argmax(a), [[(3, 4)], [()]], dtypes=F + INTS,
           grad=False),
    OpCase("argmin_dim", lambda x: ember.argmin(x, 0), lambda a: np.argmin(a, 0), [[(3, 4)]], dtypes=F + INTS,
           grad=False),
    OpCase("argmax_keepdim", lambda x: x.argmax(-1, keepdim=True), lambda a: np.argmax(a, -1)[..., None],
           [[(2, 3, 4)]], grad=False),
    OpCase("var_all", lambda x: x.var(), lambda a: np.var(a, ddof=1), [[(3, 4)], [(6,)]], dtypes=F, rtol=1e-4),
    OpCase("var_dim_biased", lambda x: ember.var(x, 1, unbiased=False), lambda a: np.var(a, 1),
           [[(3, 4)]], dtypes=F, rtol=1e-4),
    OpCase("var_correction", lambda x: x.var((0, 2), correction=2, keepdim=True),
           lambda a: np.var(a, (0, 2), ddof=2, keepdims=True), [[(2, 3, 4)]], dtypes=F, rtol=1e-4),
    OpCase("std_dim", lambda x: x.std(-1), lambda a: np.std(a, -1, ddof=1), [[(3, 5)]], dtypes=F, rtol=1e-4),
    OpCase("std_all", lambda x: ember.std(x), lambda a: np.std(a, ddof=1), [[(3, 4)]], dtypes=F, rtol=1e-4),
    OpCase("norm_fro", lambda x: x.norm(), lambda a: np.linalg.norm(a.astype(np.float64)), [[(3, 4)], [(5,)]],
           dtypes=F, rtol=1e-5),
    OpCase("norm_p1_dim", lambda x: ember.norm(x, 1, dim=1), lambda a: np_norm(a, 1, 1), [[(3, 4)]], dtypes=F),
    OpCase("norm_inf", lambda x: x.norm(math.inf, dim=(0, 2)), lambda a: np_norm(a, math.inf, (0, 2)),
           [[(2, 3, 4)]], dtypes=F),
    OpCase("norm_neginf", lambda x: x.norm(-math.inf), lambda a: np_norm(a, -math.inf), [[(3, 4)]]),
    OpCase("norm_p3_keepdim", lambda x: x.norm(3, dim=-1, keepdim=True), lambda a: np_norm(a, 3, -1, True),
           [[(3, 4)]], dtypes=F, rtol=1e-5),
    OpCase("norm_p0", lambda x: x.norm(0), lambda a: np_norm(a, 0), [[(3, 4)]], grad=False),
    OpCase("logsumexp_dim", lambda x: x.logsumexp(1), lambda a: np_logsumexp(a, 1), [[(3, 4)], [(2, 3, 4)]],
           dtypes=F),
    OpCase("logsumexp_dims_keepdim", lambda x: ember.logsumexp(x, (0, 2), keepdim=True),
           lambda a: np_logsumexp(a, (0, 2), True), [[(2, 3, 4)]], dtypes=F),
    OpCase("all_dim", lambda x: x.all(1), lambda a: np.all(a, 1), [[(3, 4)]], dtypes=(np.bool_, np.int64, np.float32),
           grad=False),
    OpCase("any_all", lambda x: ember.any(x), lambda a: np.any(a), [[(3, 4)], [()]],
           dtypes=(np.bool_, np.int32, np.float64), grad=False),
    OpCase("any_uint8_keeps_dtype", lambda x: x.any(0), lambda a: np.any(a, 0).astype(np.uint8), [[(3, 4)]],
           dtypes=(np.uint8,), grad=False),
    OpCase("all_uint8_keeps_dtype", lambda x: x.all(), lambda a: np.uint8(np.all(a)), [[(3, 4)]],
           dtypes=(np.uint8,), grad=False),
    OpCase("cumsum_dim0", lambda x: x.cumsum(0), lambda a: np.cumsum(a, 0), [[(3, 4)], [(5,)]], dtypes=F + INTS),
    OpCase("cumsum_negdim", lambda x: ember.cumsum(x, -1), lambda a: np.cumsum(a, -1), [[(2, 3, 4)]], dtypes=F),
]


# forward against numpy for every row; float64 gradcheck for differentiable rows
test_forward, test_gradcheck = table_tests(CASES)


@parametrize_cases(CASES)
def test_noncontiguous(case):
    shape = max((s[0] for s in case.shapes), key=len)
    if len(shape) < 2:
        pytest.skip("needs a 2-d input")
    dtype = case.dtypes[0]
    a = random_array(shape, dtype, case.domain)
    # Stored with the last two dims swapped, viewed back: same values, non-contiguous.
    t = make(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
    assert not t.is_contiguous()
    assert_close(case.ember_fn(t), case.numpy_fn(a), case.rtol, case.atol, msg=f"{case.name} transposed")
    # Rows repeated through a stride-0 view.
    row = random_array((1,) + shape[1:], dtype, case.domain)
    e = make(row).expand(*shape)
    assert_close(case.ember_fn(e), case.numpy_fn(np.broadcast_to(row, shape).copy()), case.rtol, case.atol,
                 msg=f"{case.name} expanded")


# ---- dtype rules

def test_dtype_rules():
    i32 = ember.tensor([1, 2, 3], dtype=ember.int32)
    assert i32.sum().dtype == ember.int64
    assert i32.prod().dtype == ember.int64
    assert ember.tensor([True, True]).sum().item() == 2
    assert ember.tensor([True, False]).prod().dtype == ember.int64
    assert i32.max().dtype == ember.int32
    assert i32.amax().dtype == ember.int32
    assert i32.argmax().dtype == ember.int64
    assert i32.cumsum(0).dtype == ember.int64
    assert i32.cumsum(0, dtype=ember.float64).dtype == ember.float64
    assert i32.sum(dtype=ember.float64).dtype == ember.float64
    assert ember.ones(3).all().dtype == ember.bool
    assert i32.logsumexp(0).dtype == ember.float32
    h = ember.ones(4, 3, dtype=ember.float16)
    assert h.sum().dtype == ember.float16 and h.sum().item() == 12
    assert h.amax(0).dtype == ember.float16
    assert h.max(1).values.dtype == ember.float16 and h.var().dtype == ember.float16
    assert ember.tensor([True, False, True]).cumsum(0).tolist() == [1, 1, 2]


def test_int_products_and_sums_are_exact():
    a = np.array([[3, -2, 5], [7, 1, -4]], dtype=np.int64)
    assert make(a).prod().item() == int(np.prod(a))
    big = np.full(40, 3, dtype=np.int64)
    assert make(big).prod().item() == int(np.prod(big))  # wraps like int64, never UB


@pytest.mark.parametrize("op", ["mean", "var", "std"])
def test_float_only_ops_reject_ints(op):
    with pytest.raises(RuntimeError, match=op):
        getattr(ember.tensor([1, 2, 3]), op)()


def test_norm_rejects_ints():
    with pytest.raises(RuntimeError, match="norm"):
        ember.tensor([1, 2, 3]).norm()


# ---- empty and 0-d

def test_empty_inputs():
    z = ember.zeros(0, 3)
    assert z.sum().item() == 0
    assert_close(z.sum(0), np.zeros(3))
    assert_close(z.prod(0), np.ones(3))
    assert z.prod().item() == 1
    assert np.isnan(z.mean().item())
    assert z.all().item() is True and z.any().item() is False
    assert z.logsumexp((0, 1)).item() == -math.inf
    assert z.cumsum(0).shape == (0, 3)
    assert z.amax(1).shape == (0,)
    assert z.norm().item() == 0
    assert z.max(1).values.shape == (0,)


def test_empty_extremes_error():
    z = ember.zeros(0, 3)
    for fn in (lambda: z.max(), lambda: ember.min(z), lambda: z.argmax(), lambda: z.amax()):
        with pytest.raises(RuntimeError, match=r"(max|min|argmax|amax)\(\): Expected reduction dim to be specified"):
            fn()
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero size"):
        z.max(0)
    with pytest.raises(IndexError, match="amin"):
        z.amin(0)
    with pytest.raises(IndexError, match="argmin"):
        z.argmin(0)
    with pytest.raises(IndexError, match="norm"):
        z.norm(math.inf, dim=0)


def test_zero_dim_inputs():
    s = ember.tensor(2.5)
    assert s.sum().item() == 2.5 and s.sum(0).item() == 2.5 and s.sum(-1, keepdim=True).shape == ()
    assert s.max().item() == 2.5
    v, i = s.max(0)
    assert v.item() == 2.5 and i.item() == 0
    assert s.argmax().item() == 0 and s.argmin(0).item() == 0
    assert s.cumsum(0).item() == 2.5
    assert s.logsumexp(0).item() == 2.5
    assert s.norm().item() == 2.5
    assert s.softmax(0).item() == 1.0


# ---- NaN propagation, as PyTorch

def test_nan_propagation():
    a = ember.tensor([[1.0, math.nan, 3.0], [4.0, 5.0, 6.0]])
    assert math.isnan(a.max().item()) and math.isnan(a.min().item())
    assert_close(a.amax(1), np.array([math.nan, 6.0]))
    values, indices = a.max(1)
    assert_close(values, np.array([math.nan, 6.0]))
    assert indices.tolist() == [1, 2]
    assert a.argmax().item() == 1 and a.argmin(1).tolist() == [1, 0]
    assert math.isnan(a.logsumexp((0, 1)).item())
    assert math.isnan(a.norm(math.inf).item())


def test_ties_pick_first_index():
    a = ember.tensor([[2.0, 5.0, 5.0], [1.0, 1.0, 0.0]])
    assert a.argmax(1).tolist() == [1, 0]
    assert a.max(1).indices.tolist() == [1, 0]
    assert a.min(1).indices.tolist() == [0, 2]


def test_logsumexp_is_stable():
    a = ember.tensor([[1000.0, 1000.0], [-1000.0, -math.inf], [math.inf, 1.0]])
    assert_close(a.logsumexp(1), np.array([1000.0 + math.log(2.0), -1000.0, math.inf]))


# ---- return types

def test_max_returns_named_tuple():
    x = ember.tensor([[1.0, 7.0], [9.0, 3.0]])
    r = ember.max(x, dim=1)
    assert isinstance(r, tuple) and len(r) == 2
    assert r.values.tolist() == [7.0, 9.0] and r.indices.tolist() == [1, 0]
    values, indices = x.min(0, keepdim=True)
    assert values.tolist() == [[1.0, 3.0]] and indices.tolist() == [[0, 1]]
    assert type(r).__name__ == "max" and type(x.min(0)).__name__ == "min"


def test_var_keyword_forms():
    x = make(random_array((3, 4), np.float64))
    a = to_numpy(x)
    assert_close(x.var(False), np.var(a))
    assert_close(ember.var(x, 0, True, True), np.var(a, 0, ddof=1, keepdims=True))
    assert_close(x.std(dim=1, unbiased=False), np.std(a, 1))
    assert_close(ember.std(x, correction=0), np.std(a))
    with pytest.raises(TypeError):
        x.var(unbiased=True, correction=1)


# ---- accuracy and the parallel paths

def test_large_sums_match_float64():
    a = random_array((1 << 20,), np.float32, (0.0, 1.0))
    assert_close(make(a).sum(), np.sum(a.astype(np.float64)), rtol=1e-6)
    b = random_array((3, 70000), np.float32)
    assert_close(make(b).sum(1), np.sum(b.astype(np.float64), 1), rtol=1e-5, atol=1e-3)
    assert_close(make(b).sum(0), np.sum(b.astype(np.float64), 0), rtol=1e-5, atol=1e-5)
    assert_close(make(b).amax(), np.max(b))
    assert_close(make(b).mean(), np.mean(b.astype(np.float64)), rtol=1e-5, atol=1e-7)
    c = random_array((70001,), np.int64)
    assert make(c).sum().item() == int(np.sum(c))
    assert make(c).amin().item() == int(np.min(c))
    assert make(c > 5).any().item() is False and make(c < 6).all().item() is True


# ---- gradients beyond gradcheck

def grad_of(fn, x):
    x = make(np.asarray(x, dtype=np.float64), requires_grad=True)
    fn(x).sum().backward()
    return to_numpy(x.grad)


def test_prod_grad_with_zeros():
    assert_close(grad_of(lambda x: x.prod(), [2.0, 0.0, 3.0]), np.array([0.0, 6.0, 0.0]))
    assert_close(grad_of(lambda x: x.prod(), [0.0, 0.0, 3.0]), np.zeros(3))
    assert_close(grad_of(lambda x: x.prod(1), [[2.0, 0.0, 3.0], [1.0, 2.0, 4.0]]),
                 np.array([[0.0, 6.0, 0.0], [8.0, 4.0, 2.0]]))
    x = make(np.array([[0.0, 2.0], [3.0, 0.0]]), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: t.prod(0), [x])


def test_extreme_grads_share_ties():
    assert_close(grad_of(lambda x: x.amax(), [1.0, 3.0, 3.0]), np.array([0.0, 0.5, 0.5]))
    assert_close(grad_of(lambda x: x.max(), [3.0, 3.0, 3.0, 1.0]), np.array([1, 1, 1, 0]) / 3.0)
    assert_close(grad_of(lambda x: x.amin(1), [[1.0, 1.0], [2.0, 0.0]]), np.array([[0.5, 0.5], [0.0, 1.0]]))
    # max(dim) sends the gradient to the returned index only.
    assert_close(grad_of(lambda x: x.max(1).values, [[3.0, 3.0, 1.0]]), np.array([[1.0, 0.0, 0.0]]))
    assert_close(grad_of(lambda x: x.norm(math.inf), [-3.0, 3.0, 1.0]), np.array([-0.5, 0.5, 0.0]))


def test_norm_grad_at_zero_is_zero():
    assert_close(grad_of(lambda x: x.norm(), [0.0, 0.0]), np.zeros(2))
    assert_close(grad_of(lambda x: x.norm(1), [0.0, -2.0]), np.array([0.0, -1.0]))


def double_backward_check(fn, shape, domain=None):
    """gradcheck of the first derivative computed with create_graph=True."""
    x = make(random_array(shape, np.float64, domain), requires_grad=True)

    def first(t):
        (g,) = ember.autograd.grad([fn(t).sum()], [t], create_graph=True)
        return g * g  # a nonlinear use, so the second derivative matters
    assert ember.autograd.gradcheck(first, [x])


@pytest.mark.parametrize("name,fn", [
    ("var", lambda t: t.var(1)),
    ("std", lambda t: t.std()),
    ("norm2", lambda t: t.norm(dim=0)),
    ("logsumexp", lambda t: t.logsumexp((0, 1))),
    ("prod", lambda t: t.prod(1)),
    ("cumsum", lambda t: t.cumsum(1) * t),
    ("amax", lambda t: t.amax(0) * t.sum()),
])
def test_double_backward(name, fn):
    double_backward_check(fn, (3, 4), (0.5, 2.0))


def test_prod_double_backward_through_zero_is_refused():
    x = make(np.array([0.0, 2.0, 3.0]), requires_grad=True)
    with pytest.raises(NotImplementedError, match="prod"):
        ember.autograd.grad([x.prod()], [x], create_graph=True)


# ---- errors

@pytest.mark.parametrize("name,fn", [
    ("sum", lambda x: x.sum(3)),
    ("mean", lambda x: x.mean(-4)),
    ("prod", lambda x: x.prod(2)),
    ("max", lambda x: x.max(2)),
    ("min", lambda x: ember.min(x, -3)),
    ("amax", lambda x: x.amax((0, 5))),
    ("argmax", lambda x: x.argmax(2)),
    ("var", lambda x: x.var(2)),
    ("std", lambda x: x.std(-3)),
    ("norm", lambda x: x.norm(dim=2)),
    ("logsumexp", lambda x: x.logsumexp(2)),
    ("all", lambda x: x.all(2)),
    ("any", lambda x: x.any(-3)),
    ("cumsum", lambda x: x.cumsum(2)),
])
def test_dim_out_of_range(name, fn):
    with pytest.raises(IndexError, match=rf"^{name}\b.*dimension out of range"):
        fn(ember.ones(2, 3))


def test_repeated_dim_errors():
    with pytest.raises(RuntimeError, match="sum: dim 0 appears multiple times"):
        ember.ones(2, 3).sum((0, 0))


def test_nan_in_long_rows_and_columns():
    # Exercises the split-row (threads) and column-chunk paths of max/min.
    a = random_array((100003,), np.float32)
    a[77777] = math.nan
    assert math.isnan(make(a).amax().item()) and math.isnan(make(a).min().item())
    assert make(a).argmax().item() == 77777
    b = random_array((300, 5), np.float32)
    b[123, 2] = math.nan
    got = to_numpy(make(b).amax(0))
    assert np.isnan(got[2]) and not np.isnan(np.delete(got, 2)).any()
    assert_close(np.delete(got, 2), np.delete(np.max(b, 0), 2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_extremes_in_vector_lanes_and_tails(dtype):
    # Row max/min run in vector lanes (4 to 16 wide, by the machine) plus a scalar tail: a NaN or
    # an infinity at every position of rows of every length up to 40 must decide the result.
    rng = np.random.default_rng(5)
    for n in range(1, 41):
        rows = rng.standard_normal((n, n)).astype(dtype)
        for special in (math.nan, math.inf, -math.inf):
            a = rows.copy()
            a[np.arange(n), np.arange(n)] = special  # row r has it at position r
            x = make(a)
            for op, ref in ((x.amax, np.max), (x.amin, np.min)):
                np.testing.assert_array_equal(to_numpy(op(1)), ref(a, 1))
        np.testing.assert_array_equal(to_numpy(make(rows).amax(1)), rows.max(1))
        np.testing.assert_array_equal(to_numpy(make(rows).amin(1)), rows.min(1))


def test_logsumexp_of_long_float32_rows_keeps_float64_accuracy():
    # float32 rows sum fast::exp in float lanes per block of 4096, blocks added in double; special
    # values keep their meaning (a NaN, a +inf, all -inf).
    rng = np.random.default_rng(8)
    a = (rng.standard_normal((5, 50_001)) * 3).astype(np.float32)
    a[1, 7] = 40.0  # one dominant element
    ref = np.log(np.exp(a.astype(np.float64) - a.max(1, keepdims=True)).sum(1)) + a.max(1)
    np.testing.assert_allclose(to_numpy(make(a).logsumexp(1)), ref, rtol=2e-6)
    a[2, 100], a[3, 5] = math.nan, math.inf
    a[4] = -math.inf
    got = to_numpy(make(a).logsumexp(1))
    assert math.isnan(got[2]) and got[3] == math.inf and got[4] == -math.inf


@pytest.mark.parametrize("shape, dim", [((300, 700), 0), ((3, 50, 513), 1), ((4, 7, 5, 3), (0, 2)), ((2, 1, 300), 1)])
@pytest.mark.parametrize("correction", [0, 1, 5])
def test_var_std_over_leading_dims_against_numpy(shape, dim, correction):
    # Reducing a dim that is not the last reads whole rows of column chunks (256 wide; partial
    # chunks, several outer blocks, one row, NaN in one column).
    a = random_array(shape, np.float32)
    a.flat[3] = math.nan
    x = make(a)
    ref64 = a.astype(np.float64)
    for fn, ref in ((ember.var, np.var), (ember.std, np.std)):
        got = to_numpy(fn(x, dim, correction=correction))
        with np.errstate(invalid="ignore", divide="ignore"):
            want = ref(ref64, axis=dim, ddof=correction)
        np.testing.assert_allclose(got, want.astype(np.float32), rtol=2e-6, atol=1e-7, equal_nan=True)


def test_all_and_any_of_a_long_row_split_across_threads_are_stable():
    # A whole-tensor all()/any() over more than 32k elements splits the row across threads; the
    # per-thread results once shared a std::vector<bool>'s packed word, so all() of an all-true
    # tensor came back False now and then (about 1 in 20,000 calls with spinning threads).
    ones = make(np.ones(51200, dtype=bool))
    zeros = make(np.zeros(51200, dtype=bool))
    for _ in range(2000):
        assert bool(ones.all()) and not bool(zeros.any())
