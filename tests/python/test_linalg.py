"""The linalg family: ember.linalg's factorizations, solvers and norms and
the top-level aliases (inverse, det, logdet, slogdet, pinverse,
matrix_power). Forward against numpy.linalg (and torch.linalg when it is
importable) on batched float32/float64 and non-contiguous inputs, gradcheck
of every differentiable function, and the errors PyTorch raises.

Decompositions are unique only up to signs (eigenvectors, singular vectors,
Q's columns), so the table rows return sign-free quantities (U diag(w) U^T,
Q and R with R's diagonal made positive): the same rows then compare the CPU
with CUDA in test_cuda_ops.py."""
import math

import numpy as np
import pytest

import ember
from harness import DEVICE, OpCase, assert_close, layouts, make, random_array, table_tests, to_numpy, torch

FLOATS = (np.float32, np.float64)
LA = ember.linalg


# ---- helpers: well-conditioned inputs built inside the rows (so gradcheck
# and the fuzz test see the raw inputs), in ember and in numpy

def _eye_like(a):
    return ember.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def well_conditioned(a):
    """a + 4 I: diagonally dominant for entries in [-2, 2] and n <= 4."""
    return a + 4 * _eye_like(a)


def np_well_conditioned(a):
    return a + 4 * np.eye(a.shape[-1], dtype=a.dtype)


def spd(a):
    """a a^T + n I: symmetric positive-definite."""
    return a @ a.transpose(-2, -1) + a.shape[-1] * _eye_like(a)


def np_spd(a):
    return a @ np.swapaxes(a, -1, -2) + a.shape[-1] * np.eye(a.shape[-1], dtype=a.dtype)


def sym(a):
    return a + a.transpose(-2, -1)


def np_sym(a):
    return a + np.swapaxes(a, -1, -2)


def weights(n, like):
    """Distinct weights 1..n, to fold vectors into sign-free matrices."""
    return ember.arange(1, n + 1, dtype=like.dtype, device=like.device)


def fold(V, w):
    """V diag(w) V^T: independent of the signs of V's columns."""
    return (V * w.unsqueeze(-2)) @ V.transpose(-2, -1)


def np_fold(V, w):
    return (V * w[..., None, :]) @ np.swapaxes(V, -1, -2)


def diag(M):
    return (M * _eye_like(M)).sum(-1)


def pack(*ts):
    """One tensor from several results (the table compares one array): each
    flattened over its last two dims when it is a matrix, then concatenated."""
    nd = max(t.dim() for t in ts)
    return ember.cat([t.flatten(-2) if t.dim() == nd else t for t in ts], -1)


def np_pack(*arrays):
    nd = max(a.ndim for a in arrays)
    return np.concatenate([a.reshape(a.shape[:-2] + (-1,)) if a.ndim == nd else a for a in arrays], -1)


def qr_positive(a, mode="reduced"):
    """Q and R with R's diagonal made nonnegative: the unique QR."""
    Q, R = LA.qr(a, mode=mode)
    k = min(a.shape[-2], a.shape[-1])
    d = ember.sign(diag(R[..., :k, :k]))
    return Q[..., :k] * d.unsqueeze(-2), R[..., :k, :] * d.unsqueeze(-1)


def np_qr_positive(a):
    Q, R = np.linalg.qr(a)
    d = np.sign(np.diagonal(R, axis1=-2, axis2=-1))
    return Q * d[..., None, :], R * d[..., :, None]


def svd_folded(a):
    U, S, Vh = LA.svd(a, full_matrices=False)
    k = S.shape[-1]
    w = weights(k, a)
    return fold(U, w), S, fold(Vh.transpose(-2, -1), w)


def np_svd_folded(a):
    U, S, Vh = np.linalg.svd(a, full_matrices=False)
    w = np.arange(1, S.shape[-1] + 1, dtype=a.dtype)
    return np_fold(U, w), S, np_fold(np.swapaxes(Vh, -1, -2), w)


def eigh_folded(a):
    w, V = LA.eigh(sym(a))
    return w, fold(V, weights(w.shape[-1], a))


def np_eigh_folded(a):
    w, V = np.linalg.eigh(np_sym(a))
    return w, np_fold(V, np.arange(1, w.shape[-1] + 1, dtype=a.dtype))


SQUARE = [[(3, 3)], [(2, 4, 4)], [(1, 1)], [(2, 1, 2, 2)], [(0, 3, 3)], [(0, 0)]]
SQUARE_NONEMPTY = [[(3, 3)], [(2, 4, 4)], [(1, 1)], [(2, 1, 2, 2)]]
RECT = [[(4, 3)], [(3, 4)], [(2, 3, 2)], [(3, 3)], [(1, 4)]]

# The fuzz test's "expanded" layout repeats the first row: a rank-1 matrix whose null-space vectors any
# basis may span, so decompositions returning vectors are compared on the other layouts only.
RANK_DEFICIENT_AMBIGUOUS = {"fuzz_layouts": ["contiguous", "transposed", "transposed_view", "sliced", "permuted"]}

CASES = [
    OpCase("linalg.inv", lambda a: LA.inv(well_conditioned(a)), lambda a: np.linalg.inv(np_well_conditioned(a)),
           SQUARE, dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    OpCase("linalg.solve", lambda a, b: LA.solve(well_conditioned(a), b),
           lambda a, b: np.linalg.solve(np_well_conditioned(a), b),
           [[(3, 3), (3, 2)], [(2, 3, 3), (3, 1)], [(3, 3), (2, 3, 4)], [(2, 1, 2, 2), (3, 2, 5)], [(0, 2, 2), (2, 1)]],
           dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    OpCase("linalg.solve_vector", lambda a, b: LA.solve(well_conditioned(a), b),
           lambda a, b: np.linalg.solve(np_well_conditioned(a), b[..., None])[..., 0],
           [[(3, 3), (3,)], [(2, 3, 3), (2, 3)]], dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    OpCase("linalg.solve_left_false", lambda a, b: LA.solve(well_conditioned(a), b, left=False),
           lambda a, b: np.swapaxes(np.linalg.solve(np.swapaxes(np_well_conditioned(a), -1, -2),
                                                    np.swapaxes(b, -1, -2)), -1, -2),
           [[(3, 3), (2, 3)], [(2, 3, 3), (2, 4, 3)]], dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    OpCase("linalg.solve_triangular", lambda a, b: LA.solve_triangular(well_conditioned(a), b, upper=True),
           lambda a, b: np.linalg.solve(np.triu(np_well_conditioned(a)), b),
           [[(3, 3), (3, 2)], [(2, 3, 3), (3, 1)], [(1, 1), (2, 1, 4)], [(0, 2, 2), (2, 3)]], dtypes=FLOATS,
           rtol=1e-4, atol=1e-5),
    OpCase("linalg.solve_triangular_lower_right", lambda a, b: LA.solve_triangular(
               well_conditioned(a), b, upper=False, left=False, unitriangular=True),
           lambda a, b: np.swapaxes(np.linalg.solve(np.swapaxes(np.tril(a, -1) + np.eye(a.shape[-1], dtype=a.dtype),
                                                                -1, -2), np.swapaxes(b, -1, -2)), -1, -2),
           [[(3, 3), (2, 3)], [(2, 3, 3), (2, 4, 3)]], dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    OpCase("linalg.det", LA.det, np.linalg.det, SQUARE, dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    OpCase("linalg.slogdet", lambda a: ember.stack(list(LA.slogdet(well_conditioned(a)))),
           lambda a: np.stack(np.linalg.slogdet(np_well_conditioned(a))), SQUARE, dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    OpCase("linalg.cholesky", lambda a: LA.cholesky(spd(a)), lambda a: np.linalg.cholesky(np_spd(a)), SQUARE,
           dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    OpCase("linalg.cholesky_upper", lambda a: LA.cholesky(spd(a), upper=True),
           lambda a: np.swapaxes(np.linalg.cholesky(np_spd(a)), -1, -2), [[(3, 3)], [(2, 2, 2)]], dtypes=FLOATS,
           rtol=1e-4, atol=1e-5),
    OpCase("linalg.qr", lambda a: pack(*qr_positive(a)), lambda a: np_pack(*np_qr_positive(a)), [[(4, 3)], [(3, 3)], [(2, 3, 2)], [(2, 5, 1)]],
           dtypes=FLOATS, rtol=1e-4, atol=1e-5, extra=RANK_DEFICIENT_AMBIGUOUS),
    OpCase("linalg.eigh", lambda a: pack(*eigh_folded(a)), lambda a: np_pack(*np_eigh_folded(a)), [[(3, 3)], [(2, 4, 4)], [(1, 1)]], dtypes=FLOATS,
           rtol=1e-4, atol=1e-4, extra=RANK_DEFICIENT_AMBIGUOUS),
    OpCase("linalg.eigvalsh", lambda a: LA.eigvalsh(sym(a)), lambda a: np.linalg.eigvalsh(np_sym(a)),
           [[(3, 3)], [(2, 4, 4)], [(0, 0)]], dtypes=FLOATS, rtol=1e-4, atol=1e-4),
    OpCase("linalg.svd", lambda a: pack(*svd_folded(a)), lambda a: np_pack(*np_svd_folded(a)), RECT, dtypes=FLOATS,
           rtol=1e-4, atol=1e-4, extra=RANK_DEFICIENT_AMBIGUOUS),
    OpCase("linalg.svdvals", LA.svdvals, lambda a: np.linalg.svd(a, compute_uv=False), RECT + [[(2, 0, 3)]],
           dtypes=FLOATS, rtol=1e-4, atol=1e-4),
    OpCase("linalg.pinv", LA.pinv, np.linalg.pinv, [[(4, 3)], [(3, 4)], [(2, 3, 3)]], dtypes=FLOATS, rtol=1e-3,
           atol=1e-4),
    OpCase("linalg.matrix_power", lambda a: LA.matrix_power(a, 3), lambda a: np.linalg.matrix_power(a, 3),
           [[(3, 3)], [(2, 2, 2)], [(0, 0)]], dtypes=FLOATS, rtol=1e-4, atol=1e-4),
    OpCase("linalg.matrix_power_neg", lambda a: LA.matrix_power(well_conditioned(a), -2),
           lambda a: np.linalg.matrix_power(np_well_conditioned(a), -2), [[(3, 3)], [(2, 2, 2)]], dtypes=FLOATS,
           rtol=1e-4, atol=1e-5),
    OpCase("logdet", lambda a: ember.logdet(spd(a)), lambda a: np.linalg.slogdet(np_spd(a))[1], SQUARE_NONEMPTY,
           dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    OpCase("linalg.vector_norm", lambda a: LA.vector_norm(a, 3.0, dim=-1),
           lambda a: np.linalg.norm(a, 3.0, axis=-1), [[(3, 4)], [(5,)], [(2, 0)]], dtypes=FLOATS, rtol=1e-4,
           atol=1e-5),
    OpCase("linalg.matrix_norm_fro", LA.matrix_norm, lambda a: np.linalg.norm(a, "fro", axis=(-2, -1)),
           [[(3, 4)], [(2, 3, 3)]], dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    OpCase("linalg.matrix_norm_nuc", lambda a: LA.matrix_norm(a, "nuc"),
           lambda a: np.linalg.norm(a, "nuc", axis=(-2, -1)), [[(3, 4)], [(2, 3, 3)]], dtypes=FLOATS, rtol=1e-4,
           atol=1e-4),
    OpCase("linalg.matrix_norm_1", lambda a: LA.matrix_norm(a, 1), lambda a: np.linalg.norm(a, 1, axis=(-2, -1)),
           [[(3, 4)], [(2, 3, 3)]], dtypes=FLOATS, rtol=1e-4, atol=1e-5),
]

# forward against numpy for every row; float64 gradcheck for differentiable rows
test_forward, test_gradcheck = table_tests(CASES)


@pytest.mark.parametrize("case", [c for c in CASES if len(c.shapes[0]) == 1 and c.shapes[0][0][-2:] == (3, 3)],
                         ids=lambda c: c.name)
def test_non_contiguous_inputs(case):
    for dtype in FLOATS:
        base = random_array((2, 3, 3), dtype)
        expected = case.numpy_fn(base)
        for name, t in layouts(base):
            result = case.ember_fn(t)
            if isinstance(result, tuple):
                for r, e in zip(result, expected):
                    assert_close(r, e, case.rtol, case.atol, msg=f"{case.name} {name}")
            else:
                assert_close(result, expected, case.rtol, case.atol, msg=f"{case.name} {name}")


def test_inputs_are_not_modified():
    a = random_array((2, 3, 3), np.float64) + 4 * np.eye(3)
    t = make(a)
    for fn in (LA.inv, LA.det, LA.slogdet, LA.qr, LA.svd, lambda x: LA.eigh(sym(x)), lambda x: LA.cholesky(spd(x))):
        fn(t)
        np.testing.assert_array_equal(to_numpy(t), a)
    # a column-major input is the kernels' own layout: still copied first
    tt = make(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-2, -1)
    LA.inv(tt)
    LA.cholesky(tt @ tt.transpose(-2, -1))
    np.testing.assert_array_equal(to_numpy(tt), a)


# ---- the factorizations' own properties and options

def test_inv_and_solve_raw():
    a = random_array((3, 4, 4), np.float64) + 4 * np.eye(4)
    b = random_array((3, 4, 2), np.float64)
    assert_close(LA.inv(make(a)), np.linalg.inv(a), 1e-10, 1e-12)
    assert_close(LA.solve(make(a), make(b)), np.linalg.solve(a, b), 1e-10, 1e-12)
    assert_close(ember.inverse(make(a)), np.linalg.inv(a), 1e-10, 1e-12)
    assert_close(make(a).inverse(), np.linalg.inv(a), 1e-10, 1e-12)


def test_det_signs_singular_and_permutations():
    a = np.array([[0.0, 1.0], [1.0, 0.0]])                       # one row swap: det -1
    assert LA.det(make(a)).item() == pytest.approx(-1.0)
    p = np.eye(4)[[2, 0, 3, 1]] * np.array([1.0, 2.0, 3.0, 4.0])  # permuted diagonal
    assert LA.det(make(p)).item() == pytest.approx(np.linalg.det(p))
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert LA.det(make(singular)).item() == pytest.approx(0.0, abs=1e-12)
    sign, logabsdet = LA.slogdet(make(np.zeros((2, 2))))
    assert sign.item() == 0.0 and logabsdet.item() == -math.inf
    neg = np.diag([-1.0, 2.0, 3.0])
    result = LA.slogdet(make(neg))
    assert result.sign.item() == -1.0 and result.logabsdet.item() == pytest.approx(math.log(6.0))
    assert math.isnan(ember.logdet(make(neg)).item())
    assert ember.det(make(neg)).item() == pytest.approx(-6.0)
    assert make(neg).det().item() == pytest.approx(-6.0)
    assert ember.slogdet(make(neg)).logabsdet.item() == pytest.approx(math.log(6.0))
    assert LA.det(make(np.zeros((0, 0)))).item() == 1.0


def test_cholesky_reads_one_triangle():
    a = np_spd(random_array((3, 3), np.float64))
    garbage = a + np.triu(np.full((3, 3), 100.0), 1)   # upper triangle ignored
    assert_close(LA.cholesky(make(garbage)), np.linalg.cholesky(a), 1e-10, 1e-12)
    upper = LA.cholesky(make(a), upper=True)
    assert_close(upper.transpose(-2, -1) @ upper, a, 1e-10, 1e-10)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (3, 0), (0, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_modes(shape, mode):
    a = random_array(shape, np.float64)
    Q, R = LA.qr(make(a), mode=mode)
    Qn, Rn = np.linalg.qr(a, mode=mode) if mode != "r" else (None, np.linalg.qr(a, mode="r"))
    assert tuple(R.shape) == Rn.shape
    if mode == "r":
        assert tuple(Q.shape) == (0,)
        assert_close(np.abs(to_numpy(R)), np.abs(Rn), 1e-10, 1e-10)
        return
    assert tuple(Q.shape) == Qn.shape
    q, r = to_numpy(Q), to_numpy(R)
    assert_close(q @ r, a, 1e-10, 1e-10)
    assert_close(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2),
                 1e-10, 1e-10)
    assert np.allclose(np.tril(r, -1), 0)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (3, 0), (2, 1, 3)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_shapes_and_reconstruction(shape, full):
    a = random_array(shape, np.float64)
    U, S, Vh = LA.svd(make(a), full_matrices=full)
    Un, Sn, Vhn = np.linalg.svd(a, full_matrices=full)
    assert tuple(U.shape) == Un.shape and tuple(S.shape) == Sn.shape and tuple(Vh.shape) == Vhn.shape
    assert_close(S, Sn, 1e-10, 1e-10)
    k = Sn.shape[-1]
    u, vh = to_numpy(U)[..., :k], to_numpy(Vh)[..., :k, :]
    assert_close((u * to_numpy(S)[..., None, :]) @ vh, a, 1e-10, 1e-10)
    for m in (to_numpy(U), np.swapaxes(to_numpy(Vh), -1, -2)):
        assert_close(np.swapaxes(m, -1, -2) @ m, np.broadcast_to(np.eye(m.shape[-1]), m.shape[:-2] + (m.shape[-1],) * 2),
                     1e-10, 1e-10)


def test_eigh_uplo_and_result_fields():
    a = random_array((4, 4), np.float64)  # not symmetric: only one triangle is read
    for uplo in ("L", "U"):
        res = LA.eigh(make(a), UPLO=uplo)
        wn, vn = np.linalg.eigh(a, UPLO=uplo)
        assert_close(res.eigenvalues, wn, 1e-10, 1e-10)
        v = to_numpy(res.eigenvectors)
        assert_close(np.abs(v), np.abs(vn), 1e-8, 1e-8)
        assert_close(LA.eigvalsh(make(a), UPLO=uplo), wn, 1e-10, 1e-10)
    q = LA.qr(make(a))
    assert q.Q.shape == q[0].shape and q.R.shape == q[1].shape
    s = LA.svd(make(a))
    assert s.U.shape == (4, 4) and s.S.shape == (4,) and s.Vh.shape == (4, 4)
    assert type(s).__name__ == "linalg_svd" and type(LA.slogdet(make(a))).__name__ == "linalg_slogdet"


def test_pinv_rank_deficient_and_hermitian():
    a = random_array((4, 2), np.float64)
    low_rank = a @ random_array((2, 5), np.float64)     # rank 2
    assert_close(LA.pinv(make(low_rank)), np.linalg.pinv(low_rank), 1e-8, 1e-10)
    s = np_sym(random_array((3, 3), np.float64))
    assert_close(LA.pinv(make(s), hermitian=True), np.linalg.pinv(s, hermitian=True), 1e-8, 1e-10)
    assert_close(ember.pinverse(make(low_rank)), np.linalg.pinv(low_rank, rcond=1e-15), 1e-8, 1e-10)
    assert_close(make(low_rank).pinverse(), np.linalg.pinv(low_rank, rcond=1e-15), 1e-8, 1e-10)
    big_atol = LA.pinv(make(np.diag([3.0, 1e-3])), atol=1e-2)
    assert_close(big_atol, np.diag([1 / 3.0, 0.0]), 1e-12, 1e-12)


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5])
def test_matrix_power(n):
    a = random_array((2, 3, 3), np.float64) + 3 * np.eye(3)
    assert_close(LA.matrix_power(make(a), n), np.linalg.matrix_power(a, n), 1e-9, 1e-9)
    assert_close(ember.matrix_power(make(a), n), np.linalg.matrix_power(a, n), 1e-9, 1e-9)
    assert_close(make(a).matrix_power(n), np.linalg.matrix_power(a, n), 1e-9, 1e-9)


def test_matrix_rank_and_cond():
    a = random_array((4, 2), np.float64) @ random_array((2, 4), np.float64)
    assert LA.matrix_rank(make(a)).item() == np.linalg.matrix_rank(a) == 2
    assert LA.matrix_rank(make(np_sym(a)), hermitian=True).item() == np.linalg.matrix_rank(np_sym(a), hermitian=True)
    b = random_array((2, 3, 3), np.float64) + 3 * np.eye(3)
    assert_close(LA.cond(make(b)), np.linalg.cond(b), 1e-9, 1e-9)
    assert_close(LA.cond(make(b), "fro"), np.linalg.cond(b, "fro"), 1e-9, 1e-9)


def test_solve_triangular_reads_one_triangle_and_divides_by_zero():
    a = random_array((4, 4), np.float64) + 4 * np.eye(4)
    b = random_array((4, 3), np.float64)
    for upper in (True, False):
        tri = np.triu(a) if upper else np.tril(a)
        assert_close(LA.solve_triangular(make(a), make(b), upper=upper), np.linalg.solve(tri, b), 1e-10, 1e-12)
    singular = np.triu(a)
    singular[3, 3] = 0.0
    x = to_numpy(LA.solve_triangular(make(singular), make(b), upper=True))
    assert np.all(np.isinf(x[3]))          # the last row divides by the zero, as PyTorch's trsm
    with pytest.raises(RuntimeError, match=r"linalg.solve_triangular: The input tensor B must have at least 2"):
        LA.solve_triangular(make(a), make(b[:, 0]), upper=True)
    with pytest.raises(TypeError):
        LA.solve_triangular(make(a), make(b))   # upper is required, as in PyTorch
    with pytest.raises(RuntimeError, match=r"linalg.solve_triangular: Incompatible shapes"):
        LA.solve_triangular(make(a), make(b[:3]), upper=False)
    t = make(random_array((3, 3), np.float64) + 3 * np.eye(3), requires_grad=True)
    rhs = make(random_array((3, 2), np.float64), requires_grad=True)
    for upper in (True, False):
        for unit in (True, False):
            assert ember.autograd.gradcheck(
                lambda x, y: LA.solve_triangular(x, y, upper=upper, unitriangular=unit), [t, rhs])
            LA.solve_triangular(t, rhs, upper=upper, unitriangular=unit).sum().backward()
            g = to_numpy(t.grad)
            untouched = np.tril(g, -1 if not unit else 0) if upper else np.triu(g, 1 if not unit else 0)
            assert np.all(untouched == 0)       # no gradient where A is not read
            t.grad = None


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (5, 3), (3, 5), (0, 2, 2)])
def test_lu_and_lu_factor(shape):
    a = random_array(shape, np.float64)
    P, L, U = LA.lu(make(a))
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    assert tuple(P.shape) == shape[:-2] + (m, m) and tuple(L.shape) == shape[:-2] + (m, k)
    assert tuple(U.shape) == shape[:-2] + (k, n)
    assert_close(P @ L @ U, a, 1e-10, 1e-12)
    lower = to_numpy(L)
    assert np.allclose(np.triu(lower, 1), 0) and np.allclose(np.diagonal(lower, axis1=-2, axis2=-1), 1)
    assert np.all(np.abs(np.tril(lower, -1)) <= 1 + 1e-12)   # partial pivoting: |L| <= 1
    LU, pivots = LA.lu_factor(make(a))
    assert pivots.dtype == ember.int32 and tuple(pivots.shape) == shape[:-2] + (k,)
    lu_ = to_numpy(LU)
    assert_close(np.triu(lu_[..., :k, :]), to_numpy(U), 1e-12, 1e-12)
    if torch is not None:
        tLU, tpiv = torch.linalg.lu_factor(torch.from_numpy(a))
        assert_close(LU, tLU.numpy(), 1e-10, 1e-12)
        np.testing.assert_array_equal(to_numpy(pivots), tpiv.numpy())


def test_lu_solve_and_the_ex_variants():
    a = random_array((2, 4, 4), np.float64) + 4 * np.eye(4)
    b = random_array((2, 4, 3), np.float64)
    LU, pivots = LA.lu_factor(make(a))
    assert_close(LA.lu_solve(LU, pivots, make(b)), np.linalg.solve(a, b), 1e-10, 1e-12)
    at = np.swapaxes(a, -1, -2)
    assert_close(LA.lu_solve(LU, pivots, make(b), adjoint=True), np.linalg.solve(at, b), 1e-10, 1e-12)
    bt = np.swapaxes(b, -1, -2)
    assert_close(LA.lu_solve(LU, pivots, make(bt), left=False), bt @ np.linalg.inv(a), 1e-10, 1e-12)
    assert_close(LA.lu_solve(LU, pivots, make(b[0])), np.linalg.solve(a, b[0]), 1e-10, 1e-12)   # broadcast B
    singular = make(np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]]))
    with pytest.raises(RuntimeError, match=r"linalg.lu_factor: \(Batch element 0\): U\[2,2\] is zero"):
        LA.lu_factor(singular)
    assert LA.lu_factor_ex(singular).info.tolist() == [2, 0]
    res = LA.inv_ex(singular)
    assert res.info.tolist() == [2, 0]
    assert_close(res.inverse[1], np.eye(2), 1e-12, 1e-12)
    with pytest.raises(RuntimeError, match=r"linalg.inv_ex"):
        LA.inv_ex(singular, check_errors=True)
    not_pd = make(np.stack([np.eye(3), np.diag([1.0, -1.0, 1.0])]))
    ch = LA.cholesky_ex(not_pd)
    assert ch.info.tolist() == [0, 2]
    assert_close(ch.L[0], np.eye(3), 1e-12, 1e-12)
    with pytest.raises(RuntimeError, match=r"leading minor of order 2"):
        LA.cholesky_ex(not_pd, check_errors=True)
    with pytest.raises(RuntimeError, match=r"linalg.lu_solve: pivots must be int32"):
        LA.lu_solve(LU, pivots.long(), make(b))
    # Pivots outside [1, n] would make getrs swap rows outside the matrix: refused by value.
    for bad in ([0, 2, 3, 4], [1, 2, 3, 5], [2**31 - 1, 2, 3, 4], [-5, 2, 3, 4]):
        wrong = pivots.clone()
        wrong[1] = ember.tensor(bad, dtype=ember.int32, device=LU.device)
        with pytest.raises(RuntimeError, match=rf"linalg.lu_solve: pivots must lie in \[1, 4\].*got {bad[0] if bad[0] != 1 else 5}"):
            LA.lu_solve(LU, wrong, make(b))
    with pytest.raises(RuntimeError, match=r"pivots must lie in"):
        ember.lu_solve(make(b[0]), LU[0], ember.tensor([0, 0, 0, 0], dtype=ember.int32, device=LU.device))
    with pytest.raises(NotImplementedError, match=r"linalg.lu_factor: LU without pivoting"):
        LA.lu_factor(make(a), pivot=False)


def test_cholesky_solve_and_inverse():
    p = np_spd(random_array((2, 3, 3), np.float64))
    b = random_array((2, 3, 2), np.float64)
    L = LA.cholesky(make(p))
    assert_close(ember.cholesky_solve(make(b), L), np.linalg.solve(p, b), 1e-10, 1e-12)
    U = LA.cholesky(make(p), upper=True)
    assert_close(ember.cholesky_solve(make(b), U, upper=True), np.linalg.solve(p, b), 1e-10, 1e-12)
    assert_close(ember.cholesky_inverse(L), np.linalg.inv(p), 1e-10, 1e-12)
    assert_close(L.cholesky_inverse(), np.linalg.inv(p), 1e-10, 1e-12)
    assert_close(make(b).cholesky_solve(L), np.linalg.solve(p, b), 1e-10, 1e-12)


def test_gradcheck_lu_family():
    a = make(random_array((3, 3), np.float64) + 2 * np.eye(3), requires_grad=True)
    b = make(random_array((3, 2), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x: tuple(LA.lu(x)[1:]), [a])
    assert ember.autograd.gradcheck(lambda x: LA.lu_factor(x).LU, [a])
    piv = LA.lu_factor(a.detach()).pivots
    lu_ = make(to_numpy(LA.lu_factor(a.detach()).LU), requires_grad=True)
    for adjoint in (False, True):
        for left in (True, False):
            rhs = b if left else b.transpose(-2, -1)
            assert ember.autograd.gradcheck(lambda x, y: LA.lu_solve(x, piv, y, left=left, adjoint=adjoint), [lu_, rhs])
    assert ember.autograd.gradcheck(lambda x, y: ember.cholesky_solve(y, LA.cholesky(spd(x))), [a, b])
    assert ember.autograd.gradcheck(lambda x: ember.cholesky_inverse(LA.cholesky(spd(x))), [a])
    assert ember.autograd.gradcheck(lambda x: LA.inv_ex(x).inverse, [a])
    assert ember.autograd.gradcheck(lambda x: LA.cholesky_ex(spd(x)).L, [a])
    wide = make(random_array((2, 3), np.float64), requires_grad=True)
    with pytest.raises(NotImplementedError, match=r"linalg.lu: the derivative is implemented for square"):
        LA.lu(wide)[2].sum().backward()


def test_solve_ex():
    a = random_array((2, 3, 3), np.float64) + 3 * np.eye(3)
    b = random_array((2, 3), np.float64)
    res = LA.solve_ex(make(a), make(b))
    assert_close(res.result, np.linalg.solve(a, b[..., None])[..., 0], 1e-10, 1e-12)
    assert res.info.tolist() == [0, 0]
    singular = make(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert LA.solve_ex(singular, make(np.ones((2, 1)))).info.item() == 2
    x = make(a, requires_grad=True)
    y = make(random_array((3, 2), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda p, q: LA.solve_ex(p, q).result, [x, y])


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_lstsq(shape):
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, shape)
    b = rng.uniform(-1, 1, shape[:-1] + (2,))
    res = LA.lstsq(make(a), make(b))
    if a.ndim == 3:
        ref = np.stack([np.linalg.lstsq(a[i], b[i], rcond=None)[0] for i in range(a.shape[0])])
    else:
        ref = np.linalg.lstsq(a, b, rcond=None)[0]
    assert_close(res.solution, ref, 1e-9, 1e-10)
    if DEVICE == "cpu":
        assert res.residuals.numel() == 0          # the default gelsy driver computes none, as PyTorch's
        full = LA.lstsq(make(a), make(b), driver="gelsd")
        if shape[-2] > shape[-1]:
            assert_close(full.residuals, np.linalg.lstsq(a, b, rcond=None)[1], 1e-9, 1e-10)
        assert_close(full.singular_values, np.linalg.svd(a, compute_uv=False), 1e-10, 1e-12)
        low = a[..., :1] @ np.ones(shape[:-2] + (1, shape[-1]))   # rank 1
        assert np.all(to_numpy(LA.lstsq(make(low), make(b)).rank) == 1)
    else:
        # As PyTorch's on CUDA: gels is the only driver (and the default); it
        # assumes full rank, returns neither rank nor singular values, and
        # gives residuals when m > n.
        full = res
        if shape[-2] > shape[-1]:
            assert_close(res.residuals, np.linalg.lstsq(a, b, rcond=None)[1], 1e-9, 1e-10)
        else:
            assert res.residuals.numel() == 0
        assert res.rank.numel() == 0 and res.singular_values.numel() == 0
        assert_close(LA.lstsq(make(a), make(b), driver="gels").solution, ref, 1e-9, 1e-10)
        with pytest.raises(RuntimeError, match="linalg.lstsq: parameter `driver` should be one of"):
            LA.lstsq(make(a), make(b), driver="gelsd")
    if torch is not None:
        tres = torch.linalg.lstsq(torch.from_numpy(a), torch.from_numpy(b), driver="gelsd")
        assert_close(full.solution, tres.solution.numpy(), 1e-9, 1e-10)
    x = make(a, requires_grad=True)
    y = make(b, requires_grad=True)
    assert ember.autograd.gradcheck(lambda p, q: LA.lstsq(p, q).solution, [x, y])
    with pytest.raises(RuntimeError, match="linalg.lstsq"):
        LA.lstsq(make(a), make(b), driver="nope")


def _expm_reference(a):
    """exp(a) in float64 by scaling, a long Taylor series and squaring."""
    norm = np.abs(a).sum(-2).max()
    s = max(0, int(np.ceil(np.log2(max(norm, 1e-300)))) + 1)
    x = a / 2.0 ** s
    term = np.broadcast_to(np.eye(a.shape[-1]), a.shape).copy()
    total = term.copy()
    for k in range(1, 30):
        term = term @ x / k
        total = total + term
    for _ in range(s):
        total = total @ total
    return total


@pytest.mark.parametrize("scale", [0.01, 1.0, 20.0])
def test_matrix_exp(scale):
    a = random_array((2, 4, 4), np.float64) * scale
    assert_close(LA.matrix_exp(make(a)), _expm_reference(a), 1e-9, 1e-12)
    assert_close(LA.matrix_exp(make(a.astype(np.float32))), _expm_reference(a), 1e-3, 1e-3)
    if torch is not None:
        assert_close(LA.matrix_exp(make(a)), torch.linalg.matrix_exp(torch.from_numpy(a)).numpy(), 1e-9, 1e-12)
    assert_close(LA.matrix_exp(make(np.zeros((3, 3)))), np.eye(3), 1e-15, 1e-15)
    x = make(random_array((3, 3), np.float64) * scale, requires_grad=True)
    assert ember.autograd.gradcheck(LA.matrix_exp, [x], rtol=1e-3, atol=1e-5 * max(1.0, scale ** 4))


def test_multi_dot_and_vecdot():
    mats = [random_array(s, np.float64) for s in [(5,), (5, 2), (2, 6), (6, 3), (3,)]]
    assert_close(LA.multi_dot([make(m) for m in mats]), np.linalg.multi_dot(mats), 1e-10, 1e-12)
    assert_close(LA.multi_dot([make(m) for m in mats[1:4]]), np.linalg.multi_dot(mats[1:4]), 1e-10, 1e-12)
    with pytest.raises(RuntimeError, match="multi_dot"):
        LA.multi_dot([make(mats[1])])
    x, y = random_array((2, 3), np.float64), random_array((3,), np.float64)
    assert_close(LA.vecdot(make(x), make(y)), x @ y, 1e-12, 1e-12)
    assert_close(LA.vecdot(make(x), make(x), dim=0), (x * x).sum(0), 1e-12, 1e-12)


# ---- norms

@pytest.mark.parametrize("ord", [2, 1, 3.5, math.inf, -math.inf, 0, -1])
def test_vector_norm(ord):
    x = random_array((3, 4), np.float64)
    assert_close(LA.vector_norm(make(x), ord), np.linalg.norm(x.ravel(), ord), 1e-10, 1e-12)
    assert_close(LA.vector_norm(make(x), ord, dim=1), np.linalg.norm(x, ord, axis=1), 1e-10, 1e-12)
    assert_close(LA.vector_norm(make(x), ord, dim=(0, 1), keepdim=True),
                 np.linalg.norm(x.ravel(), ord).reshape(1, 1), 1e-10, 1e-12)
    f = LA.vector_norm(make(x.astype(np.float32)), ord, dim=0, dtype=ember.float64)
    assert f.dtype == ember.float64


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
@pytest.mark.parametrize("dim", [(-2, -1), (-1, -2), (0, 2)])
def test_matrix_norm(ord, dim):
    a = random_array((3, 2, 4), np.float64)
    expected = np.linalg.norm(a, ord, axis=dim)
    assert_close(LA.matrix_norm(make(a), ord, dim), expected, 1e-10, 1e-12)
    kept = LA.matrix_norm(make(a), ord, dim, keepdim=True)
    assert_close(kept, np.linalg.norm(a, ord, axis=dim, keepdims=True), 1e-10, 1e-12)
    assert_close(LA.norm(make(a), ord, dim), expected, 1e-10, 1e-12)


def test_norm_dispatch_and_consistency_with_ember_norm():
    a = random_array((3, 4), np.float64)
    v = random_array((5,), np.float64)
    assert_close(LA.norm(make(a)), np.linalg.norm(a), 1e-12, 1e-12)
    assert_close(LA.norm(make(a), 2), np.linalg.norm(a, 2), 1e-10, 1e-12)    # 2-D with ord: the matrix 2-norm
    assert_close(LA.norm(make(v), 3), np.linalg.norm(v, 3), 1e-10, 1e-12)
    assert_close(LA.norm(make(a), 1, dim=0), np.linalg.norm(a, 1, axis=0), 1e-10, 1e-12)
    assert_close(ember.norm(make(a)), LA.norm(make(a)), 1e-12, 1e-12)
    assert_close(make(a).norm(dim=1), LA.vector_norm(make(a), dim=1), 1e-12, 1e-12)
    with pytest.raises(RuntimeError, match="linalg.norm"):
        LA.norm(make(random_array((2, 2, 2))), 2)
    with pytest.raises(RuntimeError, match="linalg.matrix_norm"):
        LA.matrix_norm(make(v))
    with pytest.raises(RuntimeError, match="linalg.matrix_norm"):
        LA.matrix_norm(make(a), 3)
    with pytest.raises(RuntimeError, match="linalg.vector_norm"):
        LA.vector_norm(ember.arange(3))


def test_norm_gradients():
    a = make(random_array((3, 4), np.float64), requires_grad=True)
    for fn in (lambda x: LA.matrix_norm(x, "nuc"), lambda x: LA.matrix_norm(x, 2), lambda x: LA.matrix_norm(x, -1),
               lambda x: LA.vector_norm(x, 3, dim=0), lambda x: LA.norm(x)):
        assert ember.autograd.gradcheck(fn, [a])


# ---- gradients: raw functions (the table rows check the wrapped ones)

def test_gradcheck_raw_functions():
    a = make(random_array((2, 3, 3), np.float64) + 3 * np.eye(3), requires_grad=True)
    b = make(random_array((3, 2), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(LA.inv, [a])
    assert ember.autograd.gradcheck(LA.det, [a])
    assert ember.autograd.gradcheck(lambda x: LA.slogdet(x).logabsdet, [a])
    assert ember.autograd.gradcheck(LA.solve, [a, b])
    assert ember.autograd.gradcheck(lambda x, y: LA.solve(x, y.transpose(-2, -1).unsqueeze(0), left=False), [a, b])
    assert ember.autograd.gradcheck(lambda x: LA.pinv(x), [make(random_array((4, 3), np.float64), True)])
    assert ember.autograd.gradcheck(lambda x: LA.pinv(sym(x), hermitian=True),
                                    [make(random_array((3, 3), np.float64), True)])


def test_gradcheck_decompositions_all_outputs():
    tall = make(random_array((4, 3), np.float64), requires_grad=True)
    wide = make(random_array((3, 4), np.float64), requires_grad=True)
    sq = make(random_array((3, 3), np.float64), requires_grad=True)
    for x in (tall, wide, sq):
        assert ember.autograd.gradcheck(svd_folded, [x])
        assert ember.autograd.gradcheck(LA.svdvals, [x])
        assert ember.autograd.gradcheck(lambda y: svd_folded(y)[0] @ y, [x])
    for x in (tall, sq):
        assert ember.autograd.gradcheck(lambda y: tuple(LA.qr(y)), [x])
    assert ember.autograd.gradcheck(lambda y: tuple(LA.qr(y, mode="complete")), [sq])
    assert ember.autograd.gradcheck(lambda y: LA.cholesky(spd(y), upper=True), [sq])
    assert ember.autograd.gradcheck(lambda y: LA.eigvalsh(sym(y)), [sq])


def test_double_backward_of_inv():
    a = make(random_array((3, 3), np.float64) + 3 * np.eye(3), requires_grad=True)
    (g,) = ember.autograd.grad(LA.inv(a).sum(), [a], create_graph=True)
    (gg,) = ember.autograd.grad((g * g).sum(), [a])
    # finite differences of the first gradient's squared norm
    def first_grad_sq(x):
        y = make(x, requires_grad=True)
        (g1,) = ember.autograd.grad(LA.inv(y).sum(), [y])
        return float((to_numpy(g1) ** 2).sum())
    base = to_numpy(a)
    num = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        e = np.zeros_like(base)
        e[idx] = 1e-6
        num[idx] = (first_grad_sq(base + e) - first_grad_sq(base - e)) / 2e-6
    assert_close(gg, num, 1e-4, 1e-6)


def test_grad_fn_names():
    a = make(random_array((3, 3), np.float64) + 3 * np.eye(3), requires_grad=True)
    assert LA.inv(a).grad_fn.name() == "LinalgInvExBackward0"
    assert LA.det(a).grad_fn.name() == "LinalgDetBackward0"
    assert LA.solve(a, a).grad_fn.name() == "LinalgSolveExBackward0"
    assert LA.cholesky(spd(a)).grad_fn.name() == "LinalgCholeskyExBackward0"
    assert LA.qr(a).Q.grad_fn.name() == "LinalgQrBackward0"
    assert LA.eigh(a).eigenvalues.grad_fn.name() == "LinalgEighBackward0"
    assert LA.svd(a).S.grad_fn.name() == "LinalgSvdBackward0"
    assert LA.slogdet(a).logabsdet.grad_fn.name() == "LinalgSlogdetBackward0"


def test_qr_backward_limits():
    wide = make(random_array((2, 3), np.float64), requires_grad=True)
    with pytest.raises(NotImplementedError, match="linalg.qr"):
        LA.qr(wide)[0].sum().backward()
    with pytest.raises(RuntimeError, match="mode='r'"):
        LA.qr(make(random_array((3, 2), np.float64), True), mode="r")[1].sum().backward()


# ---- errors

def test_errors_name_the_op():
    sq = make(random_array((3, 3)))
    with pytest.raises(RuntimeError, match=r"linalg.inv: A must be batches of square matrices, but they are 2 by 3"):
        LA.inv(make(random_array((2, 3))))
    with pytest.raises(RuntimeError, match=r"linalg.det: The input tensor A must have at least 2 dimensions"):
        LA.det(make(random_array((3,))))
    with pytest.raises(RuntimeError, match=r"linalg.inv: Expected a floating point tensor as input. Got int64"):
        LA.inv(ember.ones(2, 2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match=r"linalg.cholesky: Low precision dtypes not supported"):
        LA.cholesky(ember.ones(2, 2, dtype=ember.float16))
    with pytest.raises(RuntimeError, match=r"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                                           r"\(3x3 and 4x2\)"):
        LA.solve(sq, make(random_array((4, 2))))
    with pytest.raises(RuntimeError, match=r"linalg.solve: Expected A and B to have the same dtype"):
        LA.solve(sq, make(random_array((3, 2), np.float64)))
    with pytest.raises(RuntimeError, match=r"linalg.solve"):
        LA.solve(make(random_array((2, 3, 3))), make(random_array((4, 3, 1))))   # batch dims do not broadcast
    with pytest.raises(ValueError, match=r"linalg.qr: qr received unrecognized mode 'full'"):
        LA.qr(sq, mode="full")
    with pytest.raises(RuntimeError, match=r"linalg.eigh: Expected UPLO argument to be 'L' or 'U'"):
        LA.eigh(sq, UPLO="X")
    with pytest.raises(RuntimeError, match=r"linalg.svd: keyword argument `driver=` is only supported on CUDA"):
        LA.svd(sq.cpu(), driver="gesvd")
    with pytest.raises(RuntimeError, match=r"linalg.matrix_power"):
        LA.matrix_power(make(random_array((2, 3))), 2)


def test_singular_and_not_positive_definite():
    singular = make(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(RuntimeError, match=r"linalg.inv: The diagonal element 2 is zero, the inversion could not "
                                           r"be completed because the input matrix is singular"):
        LA.inv(singular)
    with pytest.raises(RuntimeError, match=r"linalg.solve: The solver failed because the input matrix is singular"):
        LA.solve(singular, make(np.ones((2, 1))))
    batch = make(np.stack([np.eye(2), np.array([[1.0, 2.0], [2.0, 4.0]])]))
    with pytest.raises(RuntimeError, match=r"linalg.inv: \(Batch element 1\): The diagonal element 2 is zero"):
        LA.inv(batch)
    not_pd = make(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]))
    with pytest.raises(RuntimeError, match=r"linalg.cholesky: The factorization could not be completed because the "
                                           r"input is not positive-definite \(the leading minor of order 3 is not "
                                           r"positive-definite\)"):
        LA.cholesky(not_pd)
    with pytest.raises(RuntimeError, match=r"linalg.inv"):
        ember.inverse(singular)


def test_nan_is_not_positive_definite():
    # The BLAS's potrf lets NaN through; LAPACK's reference (and torch) report the first NaN pivot.
    a = np.stack([np.eye(3) * 2, np.eye(3) * 2])
    a[1, 1, 1] = np.nan
    with pytest.raises(ember.linalg.LinAlgError, match=r"linalg.cholesky: \(Batch element 1\): The factorization "
                                                       r"could not be completed .* minor of order 2"):
        LA.cholesky(make(a))
    assert to_numpy(LA.cholesky_ex(make(a)).info).tolist() == [0, 2]


def test_cholesky_inverse_of_a_zero_pivot_is_singular():
    lower = np.stack([np.eye(3), np.diag([1.0, 2.0, 0.0])])
    with pytest.raises(RuntimeError, match=r"cholesky_inverse: \(Batch element 1\): The diagonal element 3 is zero, "
                                           r"the inversion could not be completed because the input matrix is singular"):
        ember.cholesky_inverse(make(lower))
    with pytest.raises(RuntimeError, match=r"cholesky_inverse: The diagonal element 1 is zero"):
        ember.cholesky_inverse(make(np.zeros((2, 2))))
    assert ember.cholesky_inverse(make(np.zeros((0, 0)))).shape == (0, 0)


# ---- PyTorch, when importable

@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_matches_torch():
    a = random_array((2, 3, 3), np.float64) + 3 * np.eye(3)
    b = random_array((2, 3, 2), np.float64)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    ea, eb = make(a), make(b)
    assert_close(LA.inv(ea), torch.linalg.inv(ta).numpy(), 1e-10, 1e-12)
    assert_close(LA.solve(ea, eb), torch.linalg.solve(ta, tb).numpy(), 1e-10, 1e-12)
    assert_close(LA.solve(ea, eb[..., :1].transpose(-2, -1), left=False),
                 torch.linalg.solve(ta, tb[..., :1].transpose(-2, -1), left=False).numpy(), 1e-10, 1e-12)
    assert_close(LA.det(ea), torch.linalg.det(ta).numpy(), 1e-10, 1e-12)
    assert_close(ember.logdet(ea), torch.logdet(ta).numpy(), 1e-10, 1e-12)
    for ord in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        assert_close(LA.matrix_norm(ea, ord), torch.linalg.matrix_norm(ta, ord).numpy(), 1e-10, 1e-12)
    assert_close(LA.norm(ea, dim=1), torch.linalg.norm(ta, dim=1).numpy(), 1e-10, 1e-12)
    assert_close(LA.pinv(ea), torch.linalg.pinv(ta).numpy(), 1e-9, 1e-10)
    # gradients of the sign-free rows agree with torch's
    x = random_array((4, 3), np.float64)
    ex, tx = make(x, requires_grad=True), torch.from_numpy(x).requires_grad_(True)
    w = np.linspace(-1, 1, 9).reshape(3, 3)
    (LA.svdvals(ex).sum() + (LA.qr(ex).R * make(w)).sum()).backward()
    (torch.linalg.svdvals(tx).sum() + (torch.linalg.qr(tx).R * torch.from_numpy(w)).sum()).backward()
    assert_close(ex.grad, tx.grad.numpy(), 1e-9, 1e-10)
    s = random_array((3, 3), np.float64)
    s = s + s.T
    es, ts = make(s, requires_grad=True), torch.from_numpy(s).requires_grad_(True)
    wv = np.linspace(-1, 1, 9).reshape(3, 3)
    (LA.eigvalsh(es) * make(np.array([1.0, 2.0, 3.0]))).sum().backward()
    (torch.linalg.eigvalsh(ts) * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    assert_close(es.grad, ts.grad.numpy(), 1e-9, 1e-10)
    p = random_array((3, 3), np.float64)
    p = p @ p.T + 3 * np.eye(3)
    ep, tp = make(p, requires_grad=True), torch.from_numpy(p).requires_grad_(True)
    (LA.cholesky(ep) * make(wv)).sum().backward()
    (torch.linalg.cholesky(tp) * torch.from_numpy(wv)).sum().backward()
    assert_close(ep.grad, tp.grad.numpy(), 1e-9, 1e-10)


def test_review_singular_det_gradients_and_solve_left_false_shapes():
    A = ember.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=ember.float64, requires_grad=True)
    ember.linalg.det(A).backward()
    assert A.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]  # as PyTorch, instead of an error
    B = ember.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=ember.float64, requires_grad=True)
    ember.linalg.slogdet(B).logabsdet.backward()
    assert np.isinf(B.grad.numpy()).all()
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((4, 3, 3)), rng.standard_normal((4, 2, 3))
    x = ember.linalg.solve(ember.tensor(a), ember.tensor(b), left=False).numpy()
    np.testing.assert_allclose(x @ a, b, atol=1e-10)
    with pytest.raises(RuntimeError, match="Vector broadcasting of the left hand side is not supported for left=False"):
        ember.linalg.solve(ember.tensor(a), ember.tensor(rng.standard_normal((4, 3))), left=False)
    with pytest.raises(RuntimeError, match="Incompatible shapes of A and B for the equation XA = B"):
        ember.linalg.solve(ember.tensor(a), ember.tensor(rng.standard_normal((3, 4))), left=False)
