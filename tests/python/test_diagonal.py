"""diagonal (a view), diag_embed, diag, trace and the triangle indices against
numpy (and PyTorch where importable); gradients by gradcheck, including the
double backward of the diagonal's gradient."""
import numpy as np
import pytest

import ember
from harness import OpCase, make, table_tests, torch


def np_diagonal(a, offset=0, dim1=0, dim2=1):
    return np.diagonal(a, offset, dim1, dim2)


def np_diag_embed(a, offset=0, dim1=-2, dim2=-1):
    n = a.shape[-1] + abs(offset)
    out_ndim = a.ndim + 1
    d1, d2 = dim1 % out_ndim, dim2 % out_ndim
    lo, hi = min(d1, d2), max(d1, d2)
    shape = list(a.shape[:-1])
    shape.insert(lo, n)
    shape.insert(hi, n)
    out = np.zeros(shape, dtype=a.dtype)
    moved = np.moveaxis(out, (d1, d2), (-2, -1))  # a view: writes land in out
    for i in range(a.shape[-1]):
        r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
        moved[..., r, c] = a[..., i]
    return out


DTYPES = (np.float32, np.float64, np.int64)

CASES = [
    OpCase("diagonal", lambda a: ember.diagonal(a), np_diagonal, [[(3, 4)], [(4, 3)], [(0, 2)]], dtypes=DTYPES,
           torch_fn=lambda a: __import__("torch").diagonal(a)),
    OpCase("diagonal_offset", lambda a: a.diagonal(1), lambda a: np_diagonal(a, 1), [[(3, 4)], [(2, 2)]]),
    OpCase("diagonal_negative_offset", lambda a: a.diagonal(-2), lambda a: np_diagonal(a, -2), [[(4, 3)], [(2, 5)]]),
    OpCase("diagonal_past_the_matrix", lambda a: a.diagonal(5), lambda a: np_diagonal(a, 5), [[(3, 4)]]),
    OpCase("diagonal_batched_dims", lambda a: ember.diagonal(a, 1, 2, 0), lambda a: np_diagonal(a, 1, 2, 0),
           [[(3, 2, 4)]], torch_fn=lambda a: __import__("torch").diagonal(a, 1, 2, 0)),
    OpCase("diagonal_negative_dims", lambda a: a.diagonal(0, -1, -2), lambda a: np_diagonal(a, 0, -1, -2),
           [[(2, 3, 3)]]),
    OpCase("diag_embed", lambda a: ember.diag_embed(a), np_diag_embed, [[(3,)], [(2, 3)]], dtypes=DTYPES,
           torch_fn=lambda a: __import__("torch").diag_embed(a)),
    OpCase("diag_embed_offset_dims", lambda a: ember.diag_embed(a, -1, 0, 2), lambda a: np_diag_embed(a, -1, 0, 2),
           [[(2, 3)]], torch_fn=lambda a: __import__("torch").diag_embed(a, -1, 0, 2)),
    OpCase("diag_vector", lambda a: ember.diag(a), np.diag, [[(4,)], [(1,)]], dtypes=DTYPES),
    OpCase("diag_vector_offset", lambda a: ember.diag(a, 2), lambda a: np.diag(a, 2), [[(3,)]],
           torch_fn=lambda a: __import__("torch").diag(a, 2)),
    OpCase("diag_matrix", lambda a: a.diag(-1), lambda a: np.diag(a, -1), [[(3, 4)]], dtypes=DTYPES),
    OpCase("trace", lambda a: ember.trace(a), np.trace, [[(3, 4)], [(4, 2)]], dtypes=(np.float32, np.float64)),
]

test_forward, test_gradcheck = table_tests(CASES)


def test_diagonal_is_a_view():
    x = ember.zeros(3, 3)
    d = x.diagonal()
    d.fill_(1.0)
    np.testing.assert_array_equal(x.numpy(), np.eye(3, dtype=np.float32))
    assert x.diagonal(1).stride() == (4,) and x.diagonal(1).storage_offset() == 1


def test_in_place_write_through_the_diagonal_is_differentiable():
    w = ember.randn(3, 3, dtype=ember.float64, requires_grad=True)
    y = w * 2
    y.diagonal().mul_(10)
    y.sum().backward()
    expected = np.full((3, 3), 2.0)
    np.fill_diagonal(expected, 20.0)
    np.testing.assert_allclose(w.grad.numpy(), expected)


def test_double_backward_of_the_diagonal():
    x = make(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)

    def first_grad(t):
        (g,) = ember.autograd.grad((t.diagonal(1) ** 3).sum(), t, create_graph=True)
        return g

    assert ember.autograd.gradcheck(first_grad, (x,))


@pytest.mark.parametrize("row,col,offset", [(3, 3, 0), (4, 3, 1), (3, 5, -1), (0, 3, 0), (3, 3, 10), (3, 3, -10),
                                            (7, 4, -2), (4, 9, 3), (5, 0, 0), (6, 6, -6), (6, 6, 5)])
def test_triangle_indices(row, col, offset):
    lower = ember.tril_indices(row, col, offset)
    upper = ember.triu_indices(row, col, offset)
    assert lower.dtype == ember.int64 and lower.shape[0] == 2
    np.testing.assert_array_equal(lower.numpy(), np.stack(np.tril_indices(row, offset, col)).reshape(2, -1))
    np.testing.assert_array_equal(upper.numpy(), np.stack(np.triu_indices(row, offset, col)).reshape(2, -1))
    if torch is not None:
        np.testing.assert_array_equal(lower.numpy(), torch.tril_indices(row, col, offset).numpy())
        np.testing.assert_array_equal(upper.numpy(), torch.triu_indices(row, col, offset).numpy())
    assert ember.tril_indices(row, col, offset, dtype=ember.int32).dtype == ember.int32


@pytest.mark.parametrize("fn", [ember.tril_indices, ember.triu_indices])
def test_triangle_indices_refuse_sizes_past_int64(fn):
    # 2^31 x 2^31 holds about 2^61 pairs: refused before any allocation (it used to exhaust memory).
    with pytest.raises(RuntimeError, match="indices: storage size calculation overflowed"):
        fn(2 ** 31, 2 ** 31)


def test_triangle_indices_walk_only_rows_that_hold_indices():
    # 2^40 rows of which only the last (or first) few hold indices: answered at once.
    rows = 2 ** 40
    lower = ember.tril_indices(rows, 2, -(rows - 2))
    np.testing.assert_array_equal(lower.numpy(), [[rows - 2, rows - 1, rows - 1], [0, 0, 1]])
    upper = ember.triu_indices(rows, 2, 1)
    np.testing.assert_array_equal(upper.numpy(), [[0], [1]])
    assert ember.tril_indices(rows, 0).shape == (2, 0)


def test_errors_name_the_op():
    with pytest.raises(RuntimeError, match=r"diagonal: expected a tensor with at least 2 dimensions, got shape \[3\]"):
        ember.diagonal(ember.ones(3))
    with pytest.raises(RuntimeError, match="diagonal: diagonal dimensions cannot be identical 0, -2"):
        ember.ones(2, 2).diagonal(0, 0, -2)
    with pytest.raises(IndexError):
        ember.ones(2, 2).diagonal(0, 0, 2)
    with pytest.raises(RuntimeError, match=r"diag: expected a 1-D or 2-D tensor, got shape \[2, 2, 2\]"):
        ember.diag(ember.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match=r"trace: expected a matrix, got shape \[3\]"):
        ember.trace(ember.ones(3))
    with pytest.raises(RuntimeError, match="diag_embed: expected a tensor with at least 1 dimension"):
        ember.diag_embed(ember.tensor(1.0))
    with pytest.raises(RuntimeError, match="tril_indices: row and col must be non-negative"):
        ember.tril_indices(-1, 3)
