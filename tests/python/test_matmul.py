"""The matmul family: matmul (every shape case, broadcast batch dims), mm, bmm,
mv, dot, outer, addmm. Forward against numpy, inputs in BLAS-friendly and
BLAS-hostile layouts, integer and half types, gradcheck (and a double
backward), errors, and the thread-count setting."""
import numpy as np
import pytest

import ember
from harness import DEVICE, INT_MATMUL_CPU_ONLY, OpCase, assert_close, make, random_array, table_tests, to_numpy

FLOATS = (np.float32, np.float64)

MATMUL_SHAPES = [
    [(3,), (3,)],                 # dot
    [(2, 3), (3,)],               # matrix-vector
    [(3,), (3, 4)],               # vector-matrix
    [(2, 3), (3, 4)],             # matrix product
    [(1, 3), (3, 1)],
    [(2, 2, 3), (3, 4)],          # batch x matrix (folds into one gemm)
    [(2, 3), (4, 3, 2)],          # matrix x batch
    [(3,), (2, 3, 4)],            # vector x batch
    [(2, 2, 3), (3,)],            # batch x vector
    [(2, 1, 2, 3), (3, 3, 2)],    # broadcast batch dims
    [(1, 2, 3), (2, 1, 3, 4)],
    [(2, 2, 3), (2, 3, 4)],
    [(0, 3), (3, 4)],             # empty rows
    [(2, 0), (0, 4)],             # empty inner dim: zeros
    [(0,), (0,)],
    [(2, 0, 2, 3), (3, 1)],       # empty batch
]

CASES = [
    OpCase("matmul", ember.matmul, np.matmul, MATMUL_SHAPES, dtypes=FLOATS + (np.int64, np.int32), rtol=1e-4,
           atol=1e-5, extra=INT_MATMUL_CPU_ONLY),
    OpCase("matmul_op", lambda a, b: a @ b, lambda a, b: a @ b, [[(2, 3), (3, 4)], [(2, 2, 3), (3,)]],
           dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    OpCase("rmatmul", lambda a, b: a.__rmatmul__(b), lambda a, b: b @ a, [[(3, 4), (2, 3)], [(3,), (2, 3)]]),
    OpCase("mm", ember.mm, np.matmul, [[(2, 3), (3, 4)], [(1, 5), (5, 1)], [(0, 3), (3, 2)], [(3, 0), (0, 2)]],
           dtypes=FLOATS + (np.int8, np.uint8), rtol=1e-4, atol=1e-5, extra=INT_MATMUL_CPU_ONLY),
    OpCase("bmm", ember.bmm, np.matmul, [[(2, 2, 3), (2, 3, 4)], [(1, 3, 3), (1, 3, 1)], [(0, 2, 3), (0, 3, 4)]],
           dtypes=FLOATS + (np.int64,), rtol=1e-4, atol=1e-5, extra=INT_MATMUL_CPU_ONLY),
    OpCase("mv", ember.mv, np.matmul, [[(2, 3), (3,)], [(0, 3), (3,)], [(4, 1), (1,)]], dtypes=FLOATS,
           rtol=1e-4, atol=1e-5),
    OpCase("dot", ember.dot, np.dot, [[(3,), (3,)], [(1,), (1,)], [(0,), (0,)]], dtypes=FLOATS + (np.int64,),
           rtol=1e-4, atol=1e-5, extra=INT_MATMUL_CPU_ONLY),
    OpCase("outer", ember.outer, np.outer, [[(3,), (4,)], [(1,), (2,)]], dtypes=FLOATS + (np.int64,)),
    OpCase("addmm", ember.addmm, lambda c, a, b: c + a @ b,
           [[(2, 4), (2, 3), (3, 4)], [(4,), (2, 3), (3, 4)], [(2, 1), (2, 3), (3, 4)], [(), (2, 3), (3, 4)]],
           dtypes=FLOATS + (np.int64,), rtol=1e-4, atol=1e-5, extra=INT_MATMUL_CPU_ONLY),
    OpCase("addmm_scaled", lambda c, a, b: ember.addmm(c, a, b, beta=0.5, alpha=-2.0),
           lambda c, a, b: 0.5 * c - 2.0 * (a @ b), [[(2, 4), (2, 3), (3, 4)], [(1, 4), (2, 0), (0, 4)]],
           dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    OpCase("addmm_int_scaled", lambda c, a, b: ember.addmm(c, a, b, beta=3, alpha=2),
           lambda c, a, b: 3 * c + 2 * (a @ b), [[(2, 4), (2, 3), (3, 4)]], dtypes=(np.int64,), grad=False,
           extra=INT_MATMUL_CPU_ONLY),
]


# forward against numpy for every row; float64 gradcheck for differentiable rows
test_forward, test_gradcheck = table_tests(CASES)


# ---- layouts: BLAS reads transposed and padded views directly; other
# strides go through a copy. All must give the same numbers.

def _layouts(array):
    """(name, tensor) pairs holding the same matrix (or batch of matrices)."""
    out = [("contiguous", make(array))]
    if array.ndim >= 2:
        out.append(("transposed", make(np.ascontiguousarray(np.swapaxes(array, -1, -2))).transpose(-1, -2)))
        # Rows padded: leading dimension larger than the row length.
        padded = np.zeros(array.shape[:-1] + (array.shape[-1] + 3,), array.dtype)
        padded[..., :array.shape[-1]] = array
        out.append(("padded", make(padded)[..., :array.shape[-1]]))
        # Neither stride is 1: BLAS cannot read it, so the kernel copies.
        spread = np.zeros(array.shape[:-2] + (array.shape[-2] * 2, array.shape[-1] * 2), array.dtype)
        spread[..., ::2, ::2] = array
        out.append(("strided", make(spread)[..., ::2, ::2]))
    else:
        spread = np.zeros(array.shape[0] * 2, array.dtype)
        spread[::2] = array
        out.append(("strided", make(spread)[::2]))
    return out


LAYOUT_SHAPES = [[(3, 4), (4, 5)], [(2, 3, 4), (2, 4, 5)], [(2, 3, 4), (4, 5)], [(4,), (4, 5)], [(3, 4), (4,)],
                 [(1, 4), (4, 1)]]


@pytest.mark.parametrize("dtype", FLOATS + (np.int64,))
@pytest.mark.parametrize("shapes", LAYOUT_SHAPES, ids=str)
def test_layouts(shapes, dtype):
    if DEVICE != "cpu" and np.issubdtype(dtype, np.integer):
        pytest.skip(f"integer matmul is CPU-only (no integer GEMM on {DEVICE}, as in PyTorch)")
    a, b = (random_array(s, dtype) for s in shapes)
    expected = a @ b
    for na, ta in _layouts(a):
        for nb, tb in _layouts(b):
            assert_close(ember.matmul(ta, tb), expected, 1e-4, 1e-5, msg=f"{na} @ {nb}")


def test_expanded_operands():
    # Stride-0 rows and stride-0 batch dims (what expand() and broadcasting make).
    row = random_array((1, 4))
    b = random_array((4, 3))
    assert_close(make(row).expand(5, 4) @ make(b), np.broadcast_to(row, (5, 4)) @ b, 1e-4, 1e-5)
    m = random_array((3, 4))
    batch = random_array((2, 4, 3))
    assert_close(make(m).expand(2, 3, 4) @ make(batch), np.broadcast_to(m, (2, 3, 4)) @ batch, 1e-4, 1e-5)
    assert_close(make(batch) @ make(m).expand(2, 3, 4), batch @ np.broadcast_to(m, (2, 3, 4)), 1e-4, 1e-5)


def _batch_layouts(a):
    """Views of a [B, C, M, K] array whose leading dims do or do not collapse into one row stride."""
    yield "contiguous", make(a)
    yield "batch dims swapped", make(np.ascontiguousarray(a.transpose(1, 0, 2, 3))).transpose(0, 1)
    yield "rows sliced", make(np.concatenate([a, a], axis=2))[:, :, ::2]
    yield "K sliced", make(np.concatenate([a, a], axis=3))[..., : a.shape[3]]
    yield "M and K transposed", make(np.ascontiguousarray(a.swapaxes(2, 3))).transpose(2, 3)
    yield "batch expanded", make(a[:1]).expand(*a.shape)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 1, 4, 5), (1, 3, 1, 5), (2, 3, 0, 5)], ids=str)
def test_batched_times_matrix_in_every_layout(shape):
    # [batch..., M, K] @ [K, N] runs as one [rows, K] gemm when the rows collapse
    # and as a batched one otherwise: both must give numpy's answer.
    a, w = random_array(shape, np.float64), random_array((shape[3], 3), np.float64)
    for name, ta in _batch_layouts(a):
        expected = to_numpy(ta) @ w
        got = ember.matmul(ta, make(w))
        assert tuple(got.shape) == expected.shape, name
        assert_close(got, expected, 1e-12, 1e-12, msg=name)


def test_batched_times_matrix_gradcheck_on_a_permuted_input():
    a = make(random_array((3, 2, 4, 5), np.float64)).transpose(0, 1).detach().requires_grad_()
    w = make(random_array((5, 3), np.float64)).requires_grad_()
    assert ember.autograd.gradcheck(lambda x, y: ember.matmul(x, y), (a, w))
    b = make(random_array((2, 3, 4, 5), np.float64)).requires_grad_()
    assert ember.autograd.gradcheck(lambda x, y: ember.matmul(x, y), (b, w))


def test_many_small_matrices_match():
    # Small matrices are spread over threads by batch: every entry must still be right.
    a, b = random_array((2500, 3, 5), np.float64), random_array((2500, 5, 2), np.float64)
    assert_close(ember.bmm(make(a), make(b)), a @ b, 1e-12, 1e-12)


def test_large_matches_numpy():
    a, b = random_array((130, 70)), random_array((70, 90))
    assert_close(make(a) @ make(b), a @ b, 1e-4, 1e-4)
    assert_close(make(a).t().contiguous().t() @ make(b), a @ b, 1e-4, 1e-4)


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_half_types_compute_in_float32(dtype):
    a = ember.tensor(random_array((3, 5))).to(dtype)
    b = ember.tensor(random_array((5, 2))).to(dtype)
    out = a @ b
    assert out.dtype == dtype
    expected = a.float().numpy() @ b.float().numpy()
    assert_close(out.float(), expected, rtol=2e-2, atol=2e-2)
    c = ember.tensor(random_array((2,))).to(dtype)
    assert ember.addmm(c, a, b).dtype == dtype


def test_addmm_beta_zero_ignores_input():
    c = make(np.full((2, 2), np.nan, np.float32))
    a, b = random_array((2, 3)), random_array((3, 2))
    assert_close(ember.addmm(c, make(a), make(b), beta=0), a @ b, 1e-5, 1e-6)


def test_method_forms():
    a, b, v = random_array((2, 3)), random_array((3, 4)), random_array((3,))
    ta, tb, tv = make(a), make(b), make(v)
    assert_close(ta.matmul(tb), a @ b, 1e-5, 1e-6)
    assert_close(ta.mm(tb), a @ b, 1e-5, 1e-6)
    assert_close(ta.mv(tv), a @ v, 1e-5, 1e-6)
    assert_close(tv.dot(tv), v @ v, 1e-5, 1e-6)
    assert_close(tv.outer(tv), np.outer(v, v), 1e-5, 1e-6)
    assert_close(ember.ger(tv, tv), np.outer(v, v), 1e-5, 1e-6)
    assert_close(make(np.zeros((2, 4), np.float32)).addmm(ta, tb, alpha=2), 2 * (a @ b), 1e-5, 1e-6)


# ---- autograd

def test_grad_fn_names():
    a = ember.ones(2, 3, requires_grad=True)
    assert (a @ ember.ones(3, 4)).grad_fn.name() == "MmBackward0"
    assert (a @ ember.ones(3)).grad_fn.name() == "MvBackward0"
    assert ember.dot(ember.ones(3, requires_grad=True), ember.ones(3)).grad_fn.name() == "DotBackward0"
    assert ember.addmm(ember.ones(4), a, ember.ones(3, 4)).grad_fn.name() == "AddmmBackward0"


@pytest.mark.parametrize("shapes", [[(2, 1, 2, 3), (3, 3, 2)], [(3,), (2, 3, 4)], [(2, 2, 3), (3,)]], ids=str)
def test_broadcast_grad_shapes(shapes):
    a = make(random_array(shapes[0], np.float64), requires_grad=True)
    b = make(random_array(shapes[1], np.float64), requires_grad=True)
    (a @ b).sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    # d(sum(a @ b))/da = sum over the broadcast of b's row sums, and similarly for b.
    an, bn = to_numpy(a), to_numpy(b)
    ones = np.ones(np.matmul(an, bn).shape)
    ga = np.matmul(ones[..., None, :] if an.ndim == 1 else (ones[..., None] if bn.ndim == 1 else ones),
                   np.swapaxes(bn[..., None] if bn.ndim == 1 else bn, -1, -2))
    if an.ndim == 1:
        ga = ga[..., 0, :]
    while ga.ndim > an.ndim:
        ga = ga.sum(0)
    ga = ga.sum(tuple(i for i, s in enumerate(an.shape) if s == 1 and ga.shape[i] != 1), keepdims=True)
    assert_close(a.grad, ga, 1e-10, 1e-10)


def test_gradcheck_transposed_inputs():
    a = make(random_array((4, 3), np.float64), requires_grad=True)
    b = make(random_array((2, 4), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, y: x.t() @ y.t(), [a, b])


def test_double_backward():
    a = make(random_array((2, 3), np.float64), requires_grad=True)
    b = make(random_array((3, 4), np.float64), requires_grad=True)
    w = make(random_array((2, 4), np.float64))

    def grad_a(x, y):  # d/dx sum(w * (x @ y)) = w @ y^T, itself differentiable in y
        (g,) = ember.autograd.grad([((x @ y) * w).sum()], [x], create_graph=True)
        return g

    # Only b: grad_a does not depend on a (gradcheck over a would need
    # autograd.grad to return None for unused inputs).
    assert ember.autograd.gradcheck(lambda y: grad_a(a, y), [b])

    # The vector case: d/dv sum(x @ v * u) = x^T u, differentiable in x.
    v = make(random_array((3,), np.float64), requires_grad=True)
    u = make(random_array((2,), np.float64))

    def grad_v(x, y):
        (g,) = ember.autograd.grad([((x @ y) * u).sum()], [y], create_graph=True)
        return g

    assert ember.autograd.gradcheck(lambda x: grad_v(x, v), [a])


def test_no_graph_without_grad():
    a = ember.ones(2, 3)
    assert (a @ ember.ones(3)).grad_fn is None
    with ember.no_grad():
        assert (ember.ones(2, 3, requires_grad=True) @ ember.ones(3, 2)).grad_fn is None


# ---- errors

def test_shape_mismatch_names_op_and_shapes():
    with pytest.raises(RuntimeError, match=r"matmul: shapes \[2, 3\] and \[4, 5\] cannot be multiplied"):
        ember.ones(2, 3) @ ember.ones(4, 5)
    with pytest.raises(RuntimeError, match=r"matmul: shapes \[3\] and \[4\] cannot be multiplied"):
        ember.matmul(ember.ones(3), ember.ones(4))
    with pytest.raises(RuntimeError, match=r"matmul: shapes \[2, 2, 3\] and \[3, 3, 4\] cannot be multiplied"):
        ember.ones(2, 2, 3) @ ember.ones(3, 3, 4)
    with pytest.raises(RuntimeError, match=r"mm: shapes \[2, 3\] and \[2, 3\]"):
        ember.mm(ember.ones(2, 3), ember.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"addmm: shapes \[2, 3\] and \[4, 5\]"):
        ember.addmm(ember.ones(2, 5), ember.ones(2, 3), ember.ones(4, 5))
    with pytest.raises(RuntimeError, match=r"addmm: input of shape \[3, 4\]"):
        ember.addmm(ember.ones(3, 4), ember.ones(2, 3), ember.ones(3, 4))


def test_dtype_mismatch_names_both():
    with pytest.raises(RuntimeError, match=r"matmul: .*float32.*float64"):
        ember.ones(2, 3) @ ember.ones(3, 2, dtype=ember.float64)
    with pytest.raises(RuntimeError, match=r"mm: .*float32.*int64"):
        ember.mm(ember.ones(2, 3), ember.ones(3, 2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="bool"):
        ember.ones(2, 2, dtype=ember.bool) @ ember.ones(2, 2, dtype=ember.bool)


def test_zero_dim_rejected():
    with pytest.raises(RuntimeError, match="matmul: both arguments need at least 1 dimension"):
        ember.matmul(ember.tensor(2.0), ember.ones(3))
    with pytest.raises(RuntimeError, match="matmul"):
        ember.ones(3) @ ember.tensor(2.0)


def test_rank_checks():
    with pytest.raises(RuntimeError, match="mm: expected self to be a 2-D tensor"):
        ember.mm(ember.ones(2, 2, 2), ember.ones(2, 2))
    with pytest.raises(RuntimeError, match="bmm: expected batch2 to be a 3-D tensor"):
        ember.bmm(ember.ones(2, 2, 2), ember.ones(2, 2))
    with pytest.raises(RuntimeError, match=r"bmm: batch sizes differ"):
        ember.bmm(ember.ones(2, 2, 3), ember.ones(3, 3, 2))
    with pytest.raises(RuntimeError, match="mv: expected vec to be a 1-D tensor"):
        ember.mv(ember.ones(2, 3), ember.ones(3, 1))
    with pytest.raises(RuntimeError, match="dot: expected self to be a 1-D tensor"):
        ember.dot(ember.ones(2, 3), ember.ones(3))
    with pytest.raises(RuntimeError, match=r"dot: shapes \[3\] and \[4\]"):
        ember.dot(ember.ones(3), ember.ones(4))
    with pytest.raises(RuntimeError, match="outer: expected vec2 to be a 1-D tensor"):
        ember.outer(ember.ones(3), ember.ones(2, 2))


def test_matmul_with_non_tensor_is_type_error():
    with pytest.raises(TypeError):
        ember.ones(2, 2) @ 3
    with pytest.raises(TypeError):
        ember.matmul(ember.ones(2, 2), [[1.0, 0.0], [0.0, 1.0]])


# ---- threads

def test_set_num_threads_covers_blas():
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        assert ember.get_num_threads() == 1
        assert "ember's 1 threads" in ember._C._blas_info()
        a, b = random_array((256, 96)), random_array((96, 300))  # large enough to be split into blocks
        assert_close(make(a) @ make(b), a @ b, 1e-4, 1e-4)
    finally:
        ember.set_num_threads(before)
    assert ember.get_num_threads() == before
    with pytest.raises(RuntimeError, match="set_num_threads"):
        ember.set_num_threads(0)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("m,n", [(300, 70), (70, 300)])
def test_large_products_split_across_threads(ta, tb, m, n):
    # Big enough for blas::gemm to split C into row blocks (m >= n) or column
    # blocks (m < n); transposed operands exercise both pointer offsets.
    k = 40
    a = random_array((k, m) if ta else (m, k))
    b = random_array((n, k) if tb else (k, n))
    ea, eb = make(a), make(b)
    ea, a = (ea.t(), a.T) if ta else (ea, a)
    eb, b = (eb.t(), b.T) if tb else (eb, b)
    before = ember.get_num_threads()
    try:
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            assert_close(ea @ eb, a @ b, 1e-4, 1e-4)
    finally:
        ember.set_num_threads(before)
