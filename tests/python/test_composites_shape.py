"""Shape composites against numpy (and torch when importable): movedim /
moveaxis, tile, meshgrid, broadcast_tensors / broadcast_shapes,
repeat_interleave, tensor_split, hsplit / vsplit / dsplit, atleast_*d, the
*stack joins, cartesian_prod, block_diag, rot90, fliplr / flipud, diff; on
non-contiguous inputs, under gradcheck, and their errors."""
import numpy as np
import pytest

import ember
from harness import OpCase, assert_close, make, random_array, table_tests, torch

FLOATS = (np.float32, np.float64)
MIXED = (np.float32, np.int64, np.bool_)


def pieces(parts):
    """Joins split pieces so that their number, order and sizes matter."""
    return ember.cat([p.reshape(-1) * (i + 1) for i, p in enumerate(parts)])


def np_pieces(parts):
    return np.concatenate([p.reshape(-1) * (i + 1) for i, p in enumerate(parts)])


def np_repeat(a, repeats, axis=None):
    return np.repeat(a, repeats, axis=axis)


def np_block_diag(*blocks):
    blocks = [b.reshape(1, -1) if b.ndim < 2 else b for b in blocks]
    dtype = np.result_type(*blocks)
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype)
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


CASES = [
    OpCase("movedim", lambda a: ember.movedim(a, 0, -1), lambda a: np.moveaxis(a, 0, -1), [[(2, 3, 4)], [(3,)]],
           dtypes=MIXED, torch_fn=lambda a: torch.movedim(a, 0, -1)),
    OpCase("movedim_tuple", lambda a: a.movedim((0, 1), (2, 0)), lambda a: np.moveaxis(a, (0, 1), (2, 0)),
           [[(2, 3, 4)], [(1, 2, 3, 2)]]),
    OpCase("moveaxis", lambda a: ember.moveaxis(a, -1, 0), lambda a: np.moveaxis(a, -1, 0), [[(2, 3, 4)]]),
    OpCase("tile", lambda a: ember.tile(a, (2,)), lambda a: np.tile(a, (2,)), [[(2, 3)], [(3,)], [()]],
           dtypes=MIXED),
    OpCase("tile_more_dims", lambda a: a.tile(2, 1, 3), lambda a: np.tile(a, (2, 1, 3)), [[(2, 3)], [(0, 2)]]),
    OpCase("tile_empty_reps", lambda a: a.tile(()), lambda a: np.tile(a, ()), [[(2, 3)]]),
    OpCase("meshgrid_ij", lambda a, b: ember.stack(ember.meshgrid(a, b, indexing="ij")),
           lambda a, b: np.stack(np.meshgrid(a, b, indexing="ij")), [[(3,), (4,)], [(), (2,)], [(0,), (2,)]],
           dtypes=MIXED),
    OpCase("meshgrid_xy", lambda a, b, c: ember.stack(ember.meshgrid([a, b, c], indexing="xy")),
           lambda a, b, c: np.stack(np.meshgrid(a, b, c, indexing="xy")), [[(3,), (4,), (2,)]]),
    OpCase("broadcast_tensors", lambda a, b: ember.stack(ember.broadcast_tensors(a, b)),
           lambda a, b: np.stack(np.broadcast_arrays(a, b)), [[(2, 1), (4,)], [(3,), ()], [(2, 3), (2, 3)]],
           dtypes=MIXED),
    OpCase("repeat_interleave_int", lambda a: ember.repeat_interleave(a, 2, dim=1),
           lambda a: np_repeat(a, 2, axis=1), [[(2, 3)], [(1, 0, 2)]], dtypes=MIXED),
    OpCase("repeat_interleave_flat", lambda a: a.repeat_interleave(3), lambda a: np_repeat(a, 3), [[(2, 3)], [()]]),
    OpCase("repeat_interleave_tensor", lambda a: ember.repeat_interleave(a, ember.tensor([1, 0, 2], device=a.device), dim=0),
           lambda a: np_repeat(a, [1, 0, 2], axis=0), [[(3, 2)], [(3,)]], dtypes=MIXED),
    OpCase("repeat_interleave_one_count", lambda a: a.repeat_interleave(ember.tensor([2], device=a.device), dim=-1),
           lambda a: np_repeat(a, 2, axis=-1), [[(2, 3)]]),
    OpCase("tensor_split_sections", lambda a: pieces(ember.tensor_split(a, 3, dim=1)),
           lambda a: np_pieces(np.array_split(a, 3, axis=1)), [[(2, 7)], [(2, 2)], [(1, 0)]], dtypes=MIXED[:2]),
    OpCase("tensor_split_indices", lambda a: pieces(a.tensor_split([1, 5, 10])),
           lambda a: np_pieces(np.split(a, [1, 5, 10])), [[(7,)], [(7, 2)]]),
    OpCase("tensor_split_unsorted", lambda a: pieces(ember.tensor_split(a, [5, 1, -2])),
           lambda a: np_pieces([a[:5], a[5:1], a[1:-2], a[-2:]]), [[(7,)]]),
    OpCase("hsplit", lambda a: pieces(ember.hsplit(a, 2)), lambda a: np_pieces(np.hsplit(a, 2)), [[(3, 4)], [(6,)]]),
    OpCase("hsplit_indices", lambda a: pieces(a.hsplit([1, 3])), lambda a: np_pieces(np.hsplit(a, [1, 3])),
           [[(2, 5)], [(4,)]]),
    OpCase("vsplit", lambda a: pieces(ember.vsplit(a, [2])), lambda a: np_pieces(np.vsplit(a, [2])), [[(3, 2)]]),
    OpCase("dsplit", lambda a: pieces(a.dsplit(3)), lambda a: np_pieces(np.dsplit(a, 3)), [[(2, 1, 6)]]),
    OpCase("hstack", lambda a, b: ember.hstack([a, b]), lambda a, b: np.hstack([a, b]),
           [[(2, 3), (2, 1)], [(3,), (2,)], [(), ()]], dtypes=MIXED),
    OpCase("vstack", lambda a, b: ember.vstack((a, b)), lambda a, b: np.vstack([a, b]),
           [[(2, 3), (3,)], [(3,), (3,)], [(1, 2, 2), (2, 2, 2)]], dtypes=MIXED),
    OpCase("row_stack", lambda a, b: ember.row_stack((a, b)), lambda a, b: np.vstack([a, b]), [[(2, 3), (1, 3)]]),
    OpCase("dstack", lambda a, b: ember.dstack([a, b]), lambda a, b: np.dstack([a, b]),
           [[(3,), (3,)], [(2, 3), (2, 3)], [(2, 2, 1), (2, 2, 3)]], dtypes=MIXED),
    OpCase("column_stack", lambda a, b, c: ember.column_stack([a, b, c]), lambda a, b, c: np.column_stack([a, b, c]),
           [[(3,), (3, 2), (3,)], [(), (1, 2), ()]], dtypes=MIXED),
    OpCase("atleast_3d", lambda a: ember.atleast_3d(a), lambda a: np.atleast_3d(a), [[()], [(3,)], [(2, 3)], [(1, 2, 3)]]),
    OpCase("atleast_2d", lambda a: ember.atleast_2d(a), lambda a: np.atleast_2d(a), [[()], [(3,)], [(2, 3)]]),
    OpCase("atleast_1d", lambda a: ember.atleast_1d(a), lambda a: np.atleast_1d(a), [[()], [(3,)]]),
    OpCase("cartesian_prod", lambda a, b: ember.cartesian_prod(a, b),
           lambda a, b: np.stack([g.reshape(-1) for g in np.meshgrid(a, b, indexing="ij")], 1),
           [[(2,), (3,)], [(0,), (2,)]], dtypes=MIXED, torch_fn=lambda a, b: torch.cartesian_prod(a, b)),
    OpCase("cartesian_prod_3", lambda a, b, c: ember.cartesian_prod(a, b, c),
           lambda a, b, c: np.stack([g.reshape(-1) for g in np.meshgrid(a, b, c, indexing="ij")], 1),
           [[(2,), (1,), (3,)]]),
    OpCase("block_diag", lambda a, b, c: ember.block_diag(a, b, c), lambda a, b, c: np_block_diag(a, b, c),
           [[(2, 2), (), (3,)], [(1, 3), (2, 0), (0, 2)]], dtypes=MIXED),
    OpCase("rot90", lambda a: ember.rot90(a), lambda a: np.rot90(a), [[(2, 3)], [(2, 3, 4)]], dtypes=MIXED,
           torch_fn=lambda a: torch.rot90(a)),
    OpCase("rot90_k", lambda a: a.rot90(-1, [2, 0]), lambda a: np.rot90(a, -1, (2, 0)), [[(2, 3, 4)]]),
    OpCase("rot90_k2", lambda a: ember.rot90(a, 6, (1, 0)), lambda a: np.rot90(a, 6, (1, 0)), [[(2, 3)]]),
    OpCase("rot90_k0", lambda a: ember.rot90(a, 4), lambda a: np.rot90(a, 4), [[(2, 3)]]),
    OpCase("fliplr", lambda a: ember.fliplr(a), lambda a: np.fliplr(a), [[(2, 3)], [(2, 3, 2)]], dtypes=MIXED),
    OpCase("flipud", lambda a: a.flipud(), lambda a: np.flipud(a), [[(4,)], [(2, 3)]]),
    OpCase("diff", lambda a: ember.diff(a), lambda a: np.diff(a), [[(5,)], [(2, 4)], [(3, 1)], [(2, 0)]],
           dtypes=(np.float32, np.float64, np.int64, np.bool_), torch_fn=lambda a: torch.diff(a)),
    OpCase("diff_n_dim", lambda a: a.diff(n=2, dim=0), lambda a: np.diff(a, n=2, axis=0), [[(5, 3)], [(2, 2)], [(1, 2)]]),
    OpCase("diff_prepend_append", lambda a, p, q: ember.diff(a, dim=1, prepend=p, append=q),
           lambda a, p, q: np.diff(a, axis=1, prepend=p, append=q), [[(2, 3), (2, 1), (2, 2)]]),
]

test_forward, test_gradcheck = table_tests(CASES)


@pytest.mark.parametrize("name", ["transposed", "sliced"])
def test_non_contiguous_inputs(name):
    a = random_array((4, 6))
    t = make(np.ascontiguousarray(a.T)).t() if name == "transposed" else make(np.repeat(a, 2, axis=1))[:, ::2]
    assert not t.is_contiguous()
    assert_close(ember.movedim(t, 0, 1), a.T)
    assert_close(ember.tile(t, (2, 1)), np.tile(a, (2, 1)))
    assert_close(ember.repeat_interleave(t, ember.tensor([2, 0, 1, 1], device=t.device), dim=0),
                 np.repeat(a, [2, 0, 1, 1], axis=0))
    assert_close(pieces(ember.tensor_split(t, 4, dim=1)), np_pieces(np.array_split(a, 4, axis=1)))
    assert_close(ember.hstack([t, t]), np.hstack([a, a]))
    assert_close(ember.diff(t, n=2, dim=0), np.diff(a, n=2, axis=0))


def test_views_share_storage():
    x = ember.arange(24.0).reshape(2, 3, 4)
    moved = ember.movedim(x, 0, -1)
    parts = ember.tensor_split(x, 2, dim=2)
    grids = ember.meshgrid(ember.arange(3.0), ember.arange(2.0), indexing="ij")
    x[0, 0, 0] = 100.0
    assert moved[0, 0, 0].item() == 100.0 and parts[0][0, 0, 0].item() == 100.0
    assert grids[0].stride() == (1, 0)  # an expanded view, no copy


def test_repeat_interleave_index_form_and_output_size():
    assert ember.repeat_interleave(ember.tensor([1, 2, 3])).tolist() == [0, 1, 1, 2, 2, 2]
    out = ember.repeat_interleave(ember.tensor([[1, 2], [3, 4]]), ember.tensor([1, 2]), dim=0, output_size=3)
    assert out.tolist() == [[1, 2], [3, 4], [3, 4]]
    assert ember.repeat_interleave(ember.tensor(5), 3).tolist() == [5, 5, 5]


def test_repeat_interleave_gradient_sums_the_copies():
    x = make(random_array((3, 2), np.float64), requires_grad=True)
    repeats = ember.tensor([2, 0, 3], device=x.device)
    assert ember.autograd.gradcheck(lambda x: ember.repeat_interleave(x, repeats, dim=0), [x])
    y = ember.tensor([1.0, 2.0], requires_grad=True)
    ember.repeat_interleave(y, ember.tensor([3, 1])).sum().backward()
    assert y.grad.tolist() == [3.0, 1.0]


def test_tensor_split_with_tensor_indices():
    x = ember.arange(7)
    assert [p.tolist() for p in ember.tensor_split(x, ember.tensor(3))] == [[0, 1, 2], [3, 4], [5, 6]]
    assert [p.tolist() for p in x.tensor_split(ember.tensor([1, 4]))] == [[0], [1, 2, 3], [4, 5, 6]]


def test_atleast_with_several_tensors_returns_a_tuple():
    a, b = ember.atleast_2d(ember.tensor(1.0), ember.ones(3))
    assert tuple(a.shape) == (1, 1) and tuple(b.shape) == (1, 3)
    (c,) = ember.atleast_1d([ember.tensor(2.0)])
    assert tuple(c.shape) == (1,)


def test_meshgrid_default_indexing_is_ij():
    a, b = ember.meshgrid(ember.arange(2), ember.arange(3))
    assert tuple(a.shape) == (2, 3) and tuple(b.shape) == (2, 3)


def test_broadcast_shapes():
    assert ember.broadcast_shapes((2, 1), (3,)) == ember.Size([2, 3])
    assert ember.broadcast_shapes(2, (3, 1)) == (3, 2)
    assert ember.broadcast_shapes() == ()
    assert ember.broadcast_shapes(ember.Size([1, 4]), [5, 1], (0, 1, 1)) == (0, 5, 4)
    assert isinstance(ember.broadcast_shapes((1,)), ember.Size)
    with pytest.raises(RuntimeError, match=r"broadcast_shapes: shape \[4\] at index 1 .*\[2, 3\]"):
        ember.broadcast_shapes((2, 3), (4,))
    with pytest.raises(ValueError, match="broadcast_shapes: .*negative"):
        ember.broadcast_shapes((-1,))
    with pytest.raises(TypeError, match="broadcast_shapes"):
        ember.broadcast_shapes(("a",))
    if torch is not None:
        for shapes in [((2, 1), (3,)), (2, (3, 1)), ((1, 4), (5, 1), (0, 1, 1))]:
            assert tuple(ember.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))


def test_block_diag_against_torch():
    if torch is None:
        pytest.skip("torch is not importable")
    blocks = [random_array((2, 2)), np.array(3.0, np.float32), np.arange(3)]
    ours = ember.block_diag(*[make(b) for b in blocks])
    theirs = torch.block_diag(*[torch.from_numpy(np.asarray(b)) for b in blocks])
    assert ours.dtype == ember.float32 and theirs.dtype == torch.float32
    assert_close(ours, theirs.numpy())


def test_block_diag_empty_and_gradient():
    empty = ember.block_diag()
    assert tuple(empty.shape) == (1, 0) and empty.dtype == ember.float32
    a = make(random_array((2, 2), np.float64), requires_grad=True)
    b = make(random_array((3,), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: ember.block_diag(a, b), [a, b])


def test_diff_bool_and_large_n():
    assert ember.diff(ember.tensor([True, False, False])).tolist() == [True, False]
    assert tuple(ember.diff(ember.tensor([1.0, 2.0]), n=5).shape) == (0,)
    assert ember.diff(ember.ones(2, 3), dim=0, prepend=ember.zeros(1, 3, dtype=ember.int64)).dtype == ember.float32


ERRORS = [
    (lambda: ember.movedim(ember.ones(2, 3, 4), 0, 5), IndexError, "movedim"),
    (lambda: ember.movedim(ember.ones(2, 3, 4), (0, 1), (0,)), RuntimeError, "movedim: Invalid source or destination"),
    (lambda: ember.movedim(ember.ones(2, 3, 4), (0, 0), (1, 2)), RuntimeError, "movedim: repeated dim in `source`"),
    (lambda: ember.movedim(ember.ones(2, 3, 4), (0, 1), (2, -1)), RuntimeError, "movedim: repeated dim in `destination`"),
    (lambda: ember.tile(ember.ones(2, 3), (-1,)), RuntimeError, "tile: repeats must be non-negative"),
    (lambda: ember.meshgrid(ember.ones(2, 2), ember.ones(3), indexing="ij"), RuntimeError, r"meshgrid: .*\[2, 2\]"),
    (lambda: ember.meshgrid(ember.ones(2), ember.ones(3), indexing="yx"), RuntimeError, "meshgrid: indexing must be"),
    (lambda: ember.meshgrid(ember.ones(2), ember.ones(3, dtype=ember.float64)), RuntimeError, "meshgrid: .*same dtype"),
    (lambda: ember.meshgrid(), RuntimeError, "meshgrid: expects a non-empty"),
    (lambda: ember.broadcast_tensors(ember.ones(2, 3), ember.ones(4)), RuntimeError, r"broadcast_tensors: .*\[4\]"),
    (lambda: ember.repeat_interleave(ember.ones(2, 2), ember.tensor([1, 2, 3]), dim=0), RuntimeError,
     "repeat_interleave: repeats must have the same size as input along dim"),
    (lambda: ember.repeat_interleave(ember.ones(2, 2), ember.tensor([-1, 2]), dim=0), RuntimeError,
     "repeat_interleave: repeats can not be negative"),
    (lambda: ember.repeat_interleave(ember.ones(2, 2), -1), RuntimeError, "repeat_interleave: repeats must be non-neg"),
    (lambda: ember.repeat_interleave(ember.ones(2, 2), ember.tensor([1.0, 2.0]), dim=0), NotImplementedError,
     "repeat_interleave: repeats must be an integer tensor"),
    (lambda: ember.repeat_interleave(ember.ones(2, 2), ember.tensor([1, 2]), dim=0, output_size=4), RuntimeError,
     "repeat_interleave: output_size is 4"),
    (lambda: ember.repeat_interleave(ember.ones(2, 2), 2, dim=2), IndexError, "repeat_interleave"),
    (lambda: ember.tensor_split(ember.arange(7), 0), RuntimeError, "tensor_split: number of sections must be larger"),
    (lambda: ember.tensor_split(ember.tensor(7), 1), RuntimeError, "tensor_split: expected at least a 1-dimensional"),
    (lambda: ember.tensor_split(ember.arange(7), ember.tensor([1.0])), RuntimeError, "tensor_split: .*int64"),
    (lambda: ember.hsplit(ember.ones(2, 5), 2), RuntimeError,
     "hsplit: attempted to split along dimension 1, but the size of the dimension 5 is not divisible"),
    (lambda: ember.hsplit(ember.tensor(1.0), 1), RuntimeError, "hsplit: requires a tensor with at least 1 dimension"),
    (lambda: ember.vsplit(ember.ones(6), 2), RuntimeError, "vsplit: requires a tensor with at least 2 dimensions"),
    (lambda: ember.dsplit(ember.ones(2, 2), [1]), RuntimeError, "dsplit: requires a tensor with at least 3 dimensions"),
    (lambda: ember.hsplit(ember.ones(2, 6), 0), RuntimeError, "hsplit: .*number of sections must be larger than 0"),
    (lambda: ember.cartesian_prod(ember.ones(2, 2)), RuntimeError, r"cartesian_prod: expected 1-D tensors.*\[2, 2\]"),
    (lambda: ember.cartesian_prod(), RuntimeError, "cartesian_prod: expects a non-empty"),
    (lambda: ember.block_diag(ember.ones(2, 2, 2)), RuntimeError,
     "block_diag: input tensors must have 2 or fewer dimensions. Input 0 has 3"),
    (lambda: ember.rot90(ember.ones(2, 3), 1, [0, 0]), RuntimeError, "rot90: expected rotation dims to be different"),
    (lambda: ember.rot90(ember.ones(3), 1), RuntimeError, "rot90: expected total dims >= 2"),
    (lambda: ember.rot90(ember.ones(2, 3), 1, [0]), RuntimeError, "rot90: expected total rotation dims == 2"),
    (lambda: ember.fliplr(ember.ones(3)), RuntimeError, "fliplr: input must be >= 2-d"),
    (lambda: ember.flipud(ember.tensor(1.0)), RuntimeError, "flipud: input must be >= 1-d"),
    (lambda: ember.hstack([]), RuntimeError, "hstack: expects a non-empty TensorList"),
    (lambda: ember.hstack([ember.ones(2, 3), ember.ones(3, 3)]), RuntimeError, "hstack: cat"),
    (lambda: ember.vstack(ember.ones(2, 3)), TypeError, "vstack: argument 'tensors' must be a tuple or list"),
    (lambda: ember.dstack([ember.ones(2), 3]), TypeError, "dstack: expected Tensors"),
    (lambda: ember.diff(ember.tensor(1.0)), RuntimeError, "diff: expects input to be at least one-dimensional"),
    (lambda: ember.diff(ember.ones(2), n=-1), RuntimeError, "diff: order must be non-negative"),
    (lambda: ember.diff(ember.ones(2, 3), dim=0, prepend=ember.zeros(3)), RuntimeError,
     "diff: expects prepend or append to be the same dimension"),
    (lambda: ember.diff(ember.ones(2, 3), dim=0, prepend=ember.zeros(1, 2)), RuntimeError, "diff: cat"),
]


@pytest.mark.parametrize("fn,exc,match", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()


def test_repeat_interleave_counts_adding_up_past_int64_raise():
    with pytest.raises(RuntimeError, match="repeats add up to more than an int64 holds"):
        ember.repeat_interleave(ember.tensor([2**63 - 1, 2**63 - 1, 3]))
