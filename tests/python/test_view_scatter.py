"""slice_scatter / select_scatter against numpy (and PyTorch where importable),
and the gradients of the views that use them: slice and select write the
gradient into zeros of the input's shape, split / chunk / unbind join their
pieces' gradients in one node; all of them differentiable again (double
backward checked by gradcheck of a gradient)."""
import numpy as np
import pytest

import ember
from harness import OpCase, assert_close, make, table_tests


def np_slice_scatter(a, b, dim, start, end, step):
    out = a.copy()
    index = [slice(None)] * a.ndim
    index[dim] = slice(start, end, step)
    out[tuple(index)] = b
    return out


def np_select_scatter(a, b, dim, i):
    out = a.copy()
    index = [slice(None)] * a.ndim
    index[dim] = i
    out[tuple(index)] = b
    return out


DTYPES = (np.float32, np.float64, np.int64, np.bool_)

CASES = [
    OpCase("slice_scatter_rows", lambda a, b: ember.slice_scatter(a, b, start=1, end=3),
           lambda a, b: np_slice_scatter(a, b, 0, 1, 3, 1), [[(4, 3), (2, 3)]], dtypes=DTYPES,
           torch_fn=lambda a, b: __import__("torch").slice_scatter(a, b, start=1, end=3)),
    OpCase("slice_scatter_step", lambda a, b: a.slice_scatter(b, dim=-1, start=1, step=2),
           lambda a, b: np_slice_scatter(a, b, -1, 1, None, 2), [[(2, 3, 6), (2, 3, 3)], [(5,), (2,)]]),
    OpCase("slice_scatter_clamped", lambda a, b: ember.slice_scatter(a, b, 1, -10, 10),
           lambda a, b: np_slice_scatter(a, b, 1, -10, 10, 1), [[(2, 3), (2, 3)]]),
    OpCase("select_scatter", lambda a, b: ember.select_scatter(a, b, 1, -1),
           lambda a, b: np_select_scatter(a, b, 1, -1), [[(3, 4), (3,)], [(2, 3, 2), (2, 2)]], dtypes=DTYPES,
           torch_fn=lambda a, b: __import__("torch").select_scatter(a, b, 1, -1)),
    OpCase("select_scatter_0d", lambda a, b: a.select_scatter(b, 0, 2), lambda a, b: np_select_scatter(a, b, 0, 2),
           [[(4,), ()]]),
]

test_forward, test_gradcheck = table_tests(CASES)


def double_backward(fn, inputs):
    """gradcheck of the gradient of sum(fn(*inputs) * w): the gradient formulas
    must themselves be differentiable."""
    w = ember.from_numpy(np.random.default_rng(0).standard_normal(tuple(fn(*inputs).shape)))

    def grads(*xs):
        return ember.autograd.grad((fn(*xs) * w).sum(), list(xs), create_graph=True)

    return ember.autograd.gradcheck(grads, inputs)


def leaf(*shape, seed=1):
    return ember.from_numpy(np.random.default_rng(seed).standard_normal(shape)).requires_grad_()


@pytest.mark.parametrize("fn", [
    lambda x: x[:, 1:5:2] ** 2,
    lambda x: x[2] ** 3,
    lambda x: x.narrow(1, 2, 3).exp(),
    lambda x: x.split(2, 1)[1] ** 2,
    lambda x: x.split([1, 2, 3], 1)[2] ** 2 + x.split([1, 2, 3], 1)[0] ** 3,
    lambda x: x.chunk(3, 0)[1].sin(),
    lambda x: x.unbind(1)[3] ** 3,
], ids=["slice", "select", "narrow", "split", "split_sizes", "chunk", "unbind"])
def test_view_gradients_are_differentiable(fn):
    assert double_backward(fn, (leaf(4, 6),))


def test_scatter_double_backward():
    x, s, r = leaf(4, 6), leaf(4, 2, seed=2), leaf(6, seed=3)
    assert double_backward(lambda a, b: ember.slice_scatter(a, b, 1, 1, 5, 2) ** 2, (x, s))
    assert double_backward(lambda a, b: ember.select_scatter(a, b, 0, -1) ** 2, (x, r))


def test_split_pieces_share_one_node_and_match_numpy():
    x = leaf(4, 6)
    a, b, c = x.split(2, dim=1)
    assert a.grad_fn is b.grad_fn is c.grad_fn and a.grad_fn.name() == "SplitBackward0"
    assert ember.split(x, [1, 5], 1)[0].grad_fn.name() == "SplitWithSizesBackward0"
    assert x.unbind(0)[0].grad_fn.name() == "UnbindBackward0"
    (a * 2 + c.sin()).sum().backward()  # b gets no gradient: zeros in its place
    xn = x.detach().numpy()
    expected = np.concatenate([np.full((4, 2), 2.0), np.zeros((4, 2)), np.cos(xn[:, 4:])], 1)
    assert_close(x.grad, expected, rtol=1e-12)


def test_unbind_rows_gradient():
    x = leaf(3, 2)
    rows = x.unbind(0)
    (rows[0] * 3 + rows[2] ** 2).sum().backward()
    xn = x.detach().numpy()
    assert_close(x.grad, np.stack([np.full(2, 3.0), np.zeros(2), 2 * xn[2]]), rtol=1e-12)


def test_inplace_on_a_split_piece_keeps_gradients_right():
    x = leaf(2, 4)
    y = x * 1.0
    a, b = y.split(2, 1)
    a.mul_(3.0)
    (y * y).sum().backward()
    xn = x.detach().numpy()
    expected = 2 * xn * np.concatenate([np.full((2, 2), 9.0), np.ones((2, 2))], 1)
    assert_close(x.grad, expected, rtol=1e-12)
    assert b.grad_fn is not None


def test_scatter_casts_src_like_copy():
    out = ember.slice_scatter(ember.zeros(2), ember.ones(1, dtype=ember.float64), start=1)
    assert out.dtype == ember.float32 and out.tolist() == [0.0, 1.0]


def test_scatter_does_not_write_its_input():
    base = ember.zeros(3, 3)
    out = ember.select_scatter(base, ember.ones(3), 0, 1)
    assert base.sum().item() == 0 and out.sum().item() == 3


@pytest.mark.parametrize("fn, exc, match", [
    (lambda: ember.slice_scatter(ember.zeros(8, 8), ember.ones(3, 8), start=6), RuntimeError,
     r"slice_scatter: expected src to have a size equal to the slice of self. src size = \[3, 8\], "
     r"slice size = \[2, 8\]"),
    (lambda: ember.select_scatter(ember.zeros(2, 3), ember.ones(2), 0, 0), RuntimeError,
     r"select_scatter: .*src size = \[2\], slice size = \[3\]"),
    (lambda: ember.select_scatter(ember.zeros(2, 3), ember.ones(3), 0, 2), IndexError, "select: index 2"),
    (lambda: ember.slice_scatter(ember.zeros(2), ember.ones(1), step=0), ValueError, "step must be greater than zero"),
])
def test_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()
