"""Index family: index_select, gather, scatter, scatter_add, index_add,
take_along_dim, one_hot, nonzero, masked_select, advanced indexing
(index / index_put_) and Tensor.__getitem__ / __setitem__, against numpy,
under gradcheck, and their errors."""
import numpy as np
import pytest

import ember
from harness import OpCase, assert_close, make, parametrize_cases, random_array, table_tests, to_numpy


def L(v, like=None):
    """An int64 index tensor, on like's device when given (test_cuda_ops runs the rows on CUDA)."""
    t = ember.tensor(np.asarray(v, dtype=np.int64))
    return t if like is None else t.to(like.device)


SEL = [2, 0, 2, 1]
GATHER_IDX = np.array([[0, 3], [1, 1], [2, 0]])            # along dim 1 of a (3, 4) tensor
SCATTER_IDX = np.array([[0, 1, 2], [2, 0, 1]])            # along dim 0 of a (3, 4): rows differ per column
ADD_IDX = np.array([[0, 0, 2, 1], [2, 0, 0, 0]])          # duplicates, for scatter_add


def np_scatter(a, dim, idx, src, add=False):
    out = a.copy()
    for pos in np.ndindex(*idx.shape):
        target = list(pos)
        target[dim] = idx[pos]
        if add:
            out[tuple(target)] += src[pos]
        else:
            out[tuple(target)] = src[pos]
    return out


def np_index_add(a, dim, idx, src, alpha=1):
    out = np.moveaxis(a.copy(), dim, 0)
    s = np.moveaxis(src, dim, 0)
    for i, j in enumerate(idx):
        out[j] += alpha * s[i]
    return np.moveaxis(out, 0, dim)


def getitem_case(name, key, shape=(4, 5, 6), dtypes=(np.float32,), grad=True):
    return OpCase(f"getitem_{name}", lambda a: a[key() if callable(key) else key],
                  lambda a: a[key_np(key)], [[shape]], dtypes=dtypes, grad=grad)


def key_np(key):
    """The numpy spelling of a subscript that holds ember tensors."""
    key = key() if callable(key) else key
    conv = lambda k: k.numpy() if isinstance(k, ember.Tensor) else k  # noqa: E731
    return tuple(conv(k) for k in key) if isinstance(key, tuple) else conv(key)


MASK = np.array([[True, False, True, True, False], [False] * 5, [True] * 5, [False, True, False, False, False]])

CASES = [
    OpCase("index_select", lambda a: a.index_select(1, L(SEL, a)), lambda a: np.take(a, SEL, 1),
           [[(3, 4)], [(2, 3, 5)]], dtypes=(np.float32, np.float64, np.int64, np.bool_)),
    OpCase("index_select_neg_dim", lambda a: ember.index_select(a, -1, L([1, 1], a)), lambda a: np.take(a, [1, 1], -1),
           [[(3, 4)], [(2,)]]),
    OpCase("gather", lambda a: a.gather(1, L(GATHER_IDX, a)), lambda a: np.take_along_axis(a, GATHER_IDX, 1),
           [[(3, 4)]], dtypes=(np.float32, np.int32, np.bool_)),
    OpCase("gather_dim0_smaller", lambda a: ember.gather(a, -2, L([[2, 0]], a)),
           lambda a: np.take_along_axis(a[:, :2], np.array([[2, 0]]), 0), [[(3, 4)]]),
    OpCase("scatter", lambda a, s: a.scatter(0, L(SCATTER_IDX, a), s),
           lambda a, s: np_scatter(a, 0, SCATTER_IDX, s), [[(3, 4), (2, 3)], [(3, 4), (3, 4)]],
           dtypes=(np.float32, np.int64)),
    OpCase("scatter_value", lambda a: a.scatter(0, L(SCATTER_IDX, a), value=-1.5),
           lambda a: np_scatter(a, 0, SCATTER_IDX, np.full(SCATTER_IDX.shape, -1.5, a.dtype)), [[(3, 4)]]),
    OpCase("scatter_add", lambda a, s: a.scatter_add(0, L(ADD_IDX, a), s), lambda a, s: np_scatter(a, 0, ADD_IDX, s, True),
           [[(3, 4), (2, 4)], [(3, 5), (3, 5)]], dtypes=(np.float32, np.float64, np.int64)),
    OpCase("index_add", lambda a, s: a.index_add(1, L([3, 0, 3], a), s, alpha=2),
           lambda a, s: np_index_add(a, 1, [3, 0, 3], s, 2), [[(2, 4), (2, 3)], [(3, 4, 2), (3, 3, 2)]],
           dtypes=(np.float32, np.int64)),
    OpCase("take_along_dim", lambda a: a.take_along_dim(L([[0, 2]], a), 1),
           lambda a: np.take_along_axis(a, np.broadcast_to([[0, 2]], (a.shape[0], 2)), 1), [[(3, 4)]]),
    OpCase("take_along_dim_flat", lambda a: ember.take_along_dim(a, L([5, 0, 5], a)),
           lambda a: a.reshape(-1)[[5, 0, 5]], [[(3, 4)], [(2, 3, 2)]]),
    OpCase("masked_select", lambda a: a.masked_select(ember.tensor(MASK, device=a.device)), lambda a: a[MASK], [[(4, 5)]],
           dtypes=(np.float32, np.int64)),
    OpCase("masked_select_broadcast", lambda a: ember.masked_select(a, ember.tensor(MASK[2:3], device=a.device)),
           lambda a: np.broadcast_to(a, (3, 5))[np.broadcast_to(MASK[2:3], (3, 5))], [[(3, 1)]]),
    OpCase("nonzero", lambda a: ember.nonzero(a), lambda a: np.argwhere(a), [[(3, 4)], [(5,)], [(2, 0)]],
           dtypes=(np.bool_, np.int64, np.float32), grad=False),
    getitem_case("int", lambda: (1,)),
    getitem_case("neg_int", lambda: (-1, 2)),
    getitem_case("slices", lambda: (slice(1, None), slice(None, None, 2), slice(-4, -1))),
    getitem_case("step_overshoot", lambda: (slice(None, 100, 3),)),
    getitem_case("none_ellipsis", lambda: (None, Ellipsis, 1, None)),
    getitem_case("ellipsis_mid", lambda: (0, Ellipsis, slice(1, 3))),
    getitem_case("list", lambda: [3, 0, 3]),
    getitem_case("tensor_2d", lambda: L([[0, 1], [3, -1]])),
    getitem_case("adjacent_tensors", lambda: (slice(None), L([0, 4, 1]), L([2, 2, 5]))),
    getitem_case("nonadjacent_tensors", lambda: (L([0, 3]), slice(1, 4), L([[5], [0]]))),
    getitem_case("broadcast_tensors", lambda: (L([[0], [2]]), L([1, 4, 0]))),
    getitem_case("numpy_array", lambda: (np.array([1, 0]), Ellipsis)),
    getitem_case("mask", lambda: ember.tensor(MASK), shape=(4, 5)),
    getitem_case("mask_dim1", lambda: (slice(None), ember.tensor(MASK[0])), shape=(3, 5)),
    getitem_case("mask_and_slice", lambda: (ember.tensor(MASK[:, 0]), slice(1, 3)), shape=(4, 5)),
    getitem_case("bool_true", lambda: (True, 1)),
    getitem_case("bool_false", lambda: (slice(None), False)),
    getitem_case("int_tensor_0d", lambda: (L(2), slice(0, 2))),
    getitem_case("int_dtypes", lambda: (slice(None), 1, L([0, 3])), dtypes=(np.int64, np.bool_, np.float64)),
]


# forward against numpy for every row; float64 gradcheck for differentiable rows
test_forward, test_gradcheck = table_tests(CASES)


@parametrize_cases([c for c in CASES if len(c.shapes[0]) == 1 and len(c.shapes[0][0]) >= 2 and c.shapes[0][0][-1] > 1])
def test_noncontiguous(case):
    shape = case.shapes[0][0]
    base = random_array(shape, case.dtypes[0])
    stored = make(np.ascontiguousarray(np.swapaxes(base, -1, -2))).transpose(-1, -2)
    padded = np.zeros(shape[:-1] + (shape[-1] * 2,), dtype=base.dtype)
    padded[..., 1::2] = base
    sliced = make(padded)[..., 1::2]
    for t in (stored, sliced):
        assert not t.is_contiguous()
        assert_close(case.ember_fn(t), case.numpy_fn(base), msg=case.name)
    row = base[:1]
    expanded = make(row).expand(*shape)
    assert_close(case.ember_fn(expanded), case.numpy_fn(np.broadcast_to(row, shape).copy()), msg=case.name)


def test_index_put_accumulate_and_noncontiguous_index():
    x = np.zeros((3, 4))
    idx = L([[0, 9], [2, 9], [0, 9], [0, 9]])[:, 0]  # non-contiguous
    t = make(x)
    t.index_put_((idx, L([1, 1, 3, 1])), ember.tensor(1.0, dtype=ember.float64), accumulate=True)
    np.add.at(x, ([0, 2, 0, 0], [1, 1, 3, 1]), 1.0)
    assert_close(t, np.broadcast_to(x, (3, 4)))
    t2 = ember.index_put(make(np.zeros(5)), (L([4, 0]),), make(np.array([1.0, 2.0])))
    assert t2.tolist() == [2.0, 0, 0, 0, 1.0]


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_gradcheck(accumulate):
    x = make(random_array((4, 3), np.float64), requires_grad=True)
    v = make(random_array((2, 1), np.float64), requires_grad=True)
    rows = L([[0], [2]]) if not accumulate else L([[0], [0]])
    fn = lambda x, v: ember.index_put(x, (rows, L([1, 2])), v, accumulate=accumulate)  # noqa: E731
    assert ember.autograd.gradcheck(fn, [x, v])

    def inplace(x, v):
        y = x * 1.0
        # (duplicates without accumulate have no defined winner, as in PyTorch)
        y.index_put_((None, L([2, 0, 2] if accumulate else [2, 0])), v, accumulate=accumulate)
        return y
    assert ember.autograd.gradcheck(inplace, [x, make(random_array((4, 1), np.float64), requires_grad=True)])


def test_one_hot():
    x = L([[0, 2], [1, 0]])
    assert_close(ember._C._one_hot(x), np.eye(3, dtype=np.int64)[x.numpy()])
    assert ember._C._one_hot(x, 5).shape == (2, 2, 5)
    assert ember._C._one_hot(x, num_classes=3).dtype == ember.int64
    with pytest.raises(RuntimeError, match="one_hot"):
        ember._C._one_hot(x, 2)
    with pytest.raises(RuntimeError, match="one_hot"):
        ember._C._one_hot(L([-1]))
    with pytest.raises(RuntimeError, match="one_hot"):
        ember._C._one_hot(ember.tensor([1.0]))


def test_zero_dim_and_empty():
    s = ember.tensor(3.0)
    assert s.index_select(0, L([0])).tolist() == 3.0
    assert s.gather(0, L(0)).tolist() == 3.0
    assert s.scatter_add(0, L(0), ember.tensor(2.0)).tolist() == 5.0
    assert s.masked_select(ember.tensor(True)).tolist() == [3.0]
    assert ember.nonzero(s).shape == (1, 0)
    assert [t.tolist() for t in ember.nonzero(s, as_tuple=True)] == [[0]]
    assert ember.zeros(2)[ember.tensor(True)].shape == (1, 2)
    assert ember.zeros(2)[False].shape == (0, 2)
    assert ember.zeros(3, 2)[[]].shape == (0, 2)
    assert ember.zeros(0, 2).gather(0, ember.zeros(0, 2, dtype=ember.int64)).shape == (0, 2)
    assert ember.cat([ember.zeros(0), ember.zeros(0, dtype=ember.int64)]).shape == (0,)
    x = ember.zeros(2)
    x[True] = 1.0
    x[L([])] = 5.0
    assert x.tolist() == [1.0, 1.0]
    with pytest.raises(IndexError, match="index_select"):
        s.index_select(0, L([0, 0]))
    with pytest.raises(IndexError, match="out of bounds for dimension 0 with size 0"):
        ember.zeros(0, 2)[L([0])]


def test_nonzero_as_tuple():
    a = np.array([[0, 1, 0], [2, 0, 3]])
    rows, cols = ember.nonzero(ember.tensor(a), as_tuple=True)
    assert rows.tolist() == [0, 1, 1] and cols.tolist() == [1, 0, 2]
    assert ember.tensor(a).nonzero().shape == (3, 2)


SETITEM_KEYS = [
    ((1,), 3.5),
    ((slice(None), slice(1, None, 2)), -1.0),
    ((Ellipsis, 0), np.arange(5.0)),                    # broadcast over the leading dim
    ((0,), np.ones((1, 5, 6))),                         # leading 1s are dropped
    ((None, 1, slice(0, 2)), np.arange(6.0)),
    ((L([0, 3]),), 7.0),
    ((slice(None), L([4, 1]), L([0, 5])), np.arange(2.0)),
    ((L([1, 2]), slice(1, 3), L([[5], [0]])), np.arange(4.0).reshape(2, 1, 2)),
    (lambda: ember.tensor(np.arange(120).reshape(4, 5, 6) % 7 == 0), 0.0),
    ((np.array([2, 0]), 1), np.arange(6.0)),
    ((True, 0), 9.0),
    # One boolean mask and one value: masked_fill_ over the dims the mask covers.
    (lambda: (ember.tensor(np.arange(20).reshape(4, 5) % 3 == 0),), -2.0),
    (lambda: (slice(None), ember.tensor(np.arange(30).reshape(5, 6) % 4 == 1)), 5.0),
    (lambda: (ember.tensor(np.array([True, False, True, True])),), np.array([8.0])),
    (lambda: (Ellipsis, ember.tensor(np.arange(6) % 2 == 0)), np.array(4.0)),
    (lambda: (0, ember.tensor(np.arange(30).reshape(5, 6) > 20)), 1.5),
]


@pytest.mark.parametrize("key, value", SETITEM_KEYS, ids=[str(i) for i in range(len(SETITEM_KEYS))])
def test_setitem(key, value):
    base = random_array((4, 5, 6), np.float64)
    key = key() if callable(key) else key
    expected = base.copy()
    expected[key_np(key)] = value
    t = make(base)
    v0 = t._version
    t[key] = make(np.asarray(value)) if isinstance(value, np.ndarray) else value
    assert_close(t, expected)
    assert t._version > v0
    # Under autograd: a non-leaf takes the history of the assignment.
    x = make(base, requires_grad=True)
    if isinstance(value, np.ndarray):
        v = make(value, requires_grad=True)
        def fn(x, v):
            y = x * 1.0
            y[key] = v
            return y * make(base)
        assert ember.autograd.gradcheck(fn, [x, v])
    else:
        def fn(x):
            y = x * 2.0
            y[key] = value
            return y
        assert ember.autograd.gradcheck(fn, [x])


def test_setitem_dtype_cast_and_scalars():
    t = ember.zeros(2, 3, dtype=ember.int64)
    t[0] = 2.7          # cast like copy_
    t[1, 1:] = True
    t[ember.tensor([1]), 0] = ember.tensor(5, dtype=ember.int32)
    assert t.tolist() == [[2, 2, 2], [5, 1, 1]]
    assert t.dtype == ember.int64


def test_basic_indexing_returns_views():
    x = ember.zeros(3, 4)
    for key in [(1,), (slice(None), slice(1, 3)), (Ellipsis, None, 2), (-1, slice(None, None, 3)), (slice(None),),
                (Ellipsis,)]:
        view = x[key]
        v0 = x._version
        view.fill_(float(len(key)))
        assert x._version == v0 + 1 and view._version == x._version
    assert x[Ellipsis].data_ptr() == x.data_ptr()
    y = ember.zeros(3, 4)
    y[1][2] = 5.0  # assignment through a view reaches the base
    assert y.tolist()[1] == [0.0, 0.0, 5.0, 0.0]
    z = ember.zeros(3)
    copy = z[[0, 1]]  # advanced indexing copies
    copy.fill_(1.0)
    assert z.tolist() == [0.0, 0.0, 0.0]


def test_pytorch_int_and_tensor_placement():
    # PyTorch applies ints before tensors: x[0, :, idx] has the index dims last.
    x = ember.zeros(2, 3, 4)
    assert x[0, :, L([0, 1])].shape == (3, 2)
    assert x[L([0, 1]), :, 0].shape == (2, 3)
    assert x[None, L([1]), None].shape == (1, 1, 1, 3, 4)
    assert x[..., L([[1, 2, 3]])].shape == (2, 3, 1, 3)


def test_index_grads_accumulate_duplicates():
    x = ember.ones(3, dtype=ember.float64, requires_grad=True)
    x[L([0, 0, 2, 0])].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]
    w = ember.ones(4, 2, dtype=ember.float64, requires_grad=True)
    w.index_select(0, L([1, 1, 3])).sum().backward()
    assert w.grad.tolist() == [[0, 0], [2, 2], [0, 0], [1, 1]]


def test_inplace_forms():
    x = make(np.zeros((3, 4)))
    x.scatter_(0, L(SCATTER_IDX, x), make(np.ones((2, 3))))
    x.scatter_add_(1, L([[0], [0], [3]], x), make(np.full((3, 1), 2.0)))
    x.index_add_(0, L([2], x), make(np.ones((1, 4))), alpha=-1)
    x.scatter_(1, L([[1]], x), value=9.0)
    expected = np_scatter(np.zeros((3, 4)), 0, SCATTER_IDX, np.ones((2, 3)))
    expected = np_scatter(expected, 1, np.array([[0], [0], [3]]), np.full((3, 1), 2.0), add=True)
    expected[2] -= 1
    expected[0, 1] = 9.0
    assert_close(x, expected)
    leaf = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.scatter_(0, L([0]), value=1.0)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf[0] = 1.0
    with pytest.raises(RuntimeError, match="leaf"):
        leaf[L([0])] = 1.0
    with ember.no_grad():
        leaf[1] = 2.0
    assert leaf.tolist() == [0.0, 2.0, 0.0]


def test_setitem_on_view_under_grad_rewrites_the_base_history():
    a = ember.ones(2, 3, requires_grad=True)
    y = a * 2
    row = y[0]
    row[1] = 5.0
    assert y.tolist() == [[2.0, 5.0, 2.0], [2.0, 2.0, 2.0]]
    assert y.grad_fn.name() == "CopySlices"
    y.sum().backward()
    assert a.grad.tolist() == [[2.0, 0.0, 2.0], [2.0, 2.0, 2.0]]


def test_inplace_through_views_gradcheck():
    def fn(a, w):
        b = a * 1
        b[1:].mul_(w)          # through a slice view
        c = b.view(3, 1)
        c[0] = a[2] * 5        # through a view of the view
        return b * b

    a = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64, requires_grad=True)
    w = ember.tensor([0.5, -2.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(fn, (a, w))


def test_stale_view_history_is_rederived_from_the_base():
    x = ember.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = (x * 1).view(2, 2)
    y[:, 0].mul_(3)  # written through a sibling of y
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 1.0, 3.0, 1.0]
    x.grad = None
    b = x * 1
    v = b[0:2]
    b.mul_(2)  # written through the base
    v.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 0.0, 0.0]


def test_inplace_on_view_of_leaf_is_refused():
    w = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        w[0].add_(1)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w[1:] = 0.0
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        w.view(3)[1:].zero_()


def test_setitem_records_history_on_nonleaf():
    a = ember.ones(4, dtype=ember.float64, requires_grad=True)
    v = ember.tensor([5.0, 6.0], dtype=ember.float64, requires_grad=True)
    y = a * 3
    y[1:3] = v
    y[L([0])] = 0.0
    assert y.requires_grad and y.grad_fn is not None
    (y * ember.tensor([1.0, 2.0, 3.0, 4.0], dtype=ember.float64)).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0, 12.0]
    assert v.grad.tolist() == [2.0, 3.0]


@pytest.mark.parametrize("fn, exc, match", [
    (lambda: ember.zeros(3)[3], IndexError, "index 3 is out of bounds for dimension 0 with size 3"),
    (lambda: ember.zeros(3, 2)[:, -3], IndexError, "out of bounds for dimension 1 with size 2"),
    (lambda: ember.zeros(3)[L([0, 5])], IndexError, "index: index 5 is out of bounds for dimension 0 with size 3"),
    (lambda: ember.zeros(3)[L([-4])], IndexError, "index -4 is out of bounds"),
    (lambda: ember.zeros(3)[0, 0], IndexError, "too many indices"),
    (lambda: ember.zeros(3)[..., ...], IndexError, "ellipsis"),
    (lambda: ember.zeros(3)[::-1], ValueError, "step must be greater than zero"),
    (lambda: ember.zeros(3)[::0], ValueError, "step cannot be zero"),
    (lambda: ember.zeros(3)[1.5], IndexError, "only integers, slices"),
    (lambda: ember.zeros(3)[ember.tensor([0.0])], IndexError, "tensors used as indices must be long, int, byte or bool"),
    (lambda: ember.zeros(3, 2)[ember.tensor([True, False])], IndexError, "shape of the mask"),
    (lambda: ember.zeros(3, 2)[L([0, 1]), L([0, 1, 1])], IndexError, "shape mismatch"),
    (lambda: ember.zeros(3).index_select(0, L([3])), IndexError, "index_select: index 3 is out of bounds"),
    (lambda: ember.zeros(3).index_select(0, L([[0]])), IndexError, "index_select"),
    (lambda: ember.zeros(3).index_select(0, ember.tensor([0.0])), RuntimeError, "index_select"),
    (lambda: ember.zeros(3, 2).gather(1, L([[2]])), RuntimeError, "gather: index 2 is out of bounds for dimension 1"),
    (lambda: ember.zeros(3, 2).gather(1, L([[-1]])), RuntimeError, "gather: index -1 is out of bounds"),
    (lambda: ember.zeros(3, 2).gather(1, ember.tensor([[0]], dtype=ember.int32)), RuntimeError, "gather.*int64"),
    (lambda: ember.zeros(3, 2).gather(1, L([0])), RuntimeError, "gather.*same number of dimensions"),
    (lambda: ember.zeros(3, 2).scatter(0, L([[3]]), ember.ones(1, 1)), RuntimeError, "scatter: index 3"),
    (lambda: ember.zeros(3, 2).scatter(0, L([[0]]), ember.ones(1, 1, dtype=ember.float64)), RuntimeError, "scatter"),
    (lambda: ember.zeros(3, 2).scatter_add(0, L([[0, 1]]), ember.ones(1, 1)), RuntimeError, "scatter_add"),
    (lambda: ember.zeros(3, 2).scatter(0, L([[0]]), ember.ones(3)), RuntimeError, "scatter: index tensor must have"),
    (lambda: ember.zeros(3, 2).index_add(0, L([5]), ember.ones(1, 2)), IndexError, "index_add: index 5"),
    (lambda: ember.zeros(3, 2).index_add(0, L([0, 1]), ember.ones(1, 2)), RuntimeError, "index_add: number of indices"),
    (lambda: ember.zeros(3, 2).take_along_dim(ember.tensor([[0]], dtype=ember.int32), 1), RuntimeError,
     "take_along_dim: dtype of indices"),
    (lambda: ember.zeros(3).masked_select(ember.tensor([1, 0, 1])), RuntimeError, "masked_select"),
    (lambda: ember.zeros(3).index_put_((L([0]),), ember.ones(2)), RuntimeError, "shape mismatch"),
])
def test_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()


@pytest.mark.parametrize("dtype", [ember.bool, ember.int8, ember.float16, ember.float32, ember.int64, ember.complex128])
@pytest.mark.parametrize("shape, dim, count", [
    ((100_000, 8), 0, 200_000),  # short rows, split across threads
    ((40, 300, 3), 1, 5_000),    # blocks inside an outer dim
    ((6, 50, 40), 1, 7),         # blocks over 16 elements: memcpy
    ((5_000,), 0, 70_000),       # single elements
    ((4, 0, 3), 2, 9),           # empty blocks
    ((4, 5), 1, 0),              # no indices
])
def test_index_select_of_contiguous_blocks(dtype, shape, dim, count):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(shape) * 4).astype(np.float32)
    x = ember.from_numpy(a).to(dtype)
    index = rng.integers(0, shape[dim], count) if shape[dim] else np.zeros(0, dtype=np.int64)
    got = ember.index_select(x, dim, ember.from_numpy(index))
    want = np.take(x.to(ember.float64).numpy() if dtype != ember.complex128 else x.numpy(), index, axis=dim)
    np.testing.assert_array_equal(got.to(ember.complex128 if dtype == ember.complex128 else ember.float64).numpy(),
                                  want)


@pytest.mark.parametrize("dtype", [ember.bool, ember.int32, ember.int64, ember.float16, ember.float32, ember.float64])
def test_index_add_rows_with_repeats_and_broadcast_sources(dtype):
    # Whole contiguous rows added at one index each (repeated indices accumulate), from a
    # contiguous source, a broadcast one (stride 0, as a sum's gradient is) and a strided one.
    rng = np.random.default_rng(2)
    index = rng.integers(0, 6, 40)
    base = rng.integers(-3, 4, (6, 33)).astype(np.float64)
    src = rng.integers(-3, 4, (40, 33)).astype(np.float64)
    x = ember.from_numpy(base).to(dtype)
    for source in (ember.from_numpy(src).to(dtype), ember.ones(1, 1, dtype=dtype).expand(40, 33),
                   ember.from_numpy(np.ascontiguousarray(src.T)).to(dtype).t()):
        want = x.to(ember.float64).numpy().copy()  # bool as 0/1: a sum != 0 is the logical or
        np.add.at(want, index, source.to(ember.float64).numpy())
        got = ember.index_add(x, 0, ember.from_numpy(index), source).to(ember.float64).numpy()
        np.testing.assert_array_equal(got, (want != 0) if dtype == ember.bool else want)


@pytest.mark.parametrize("bad", [-1, 7, 2**62, -(2**63)])
@pytest.mark.parametrize("dim, where", [(1, (0, 0)), (1, (63, 700)), (1, (40, 999)), (0, (5, 3)), (0, (63, 500))])
def test_gather_names_an_out_of_range_index_anywhere(bad, dim, where):
    # The CPU kernel checks indices as it reads them (contiguous rows in
    # blocks, strided columns one by one, rows split across threads): a bad
    # value anywhere raises, naming it, and never reads outside x.
    x = ember.arange(64 * 7, dtype=ember.float32).reshape(64, 7) if dim == 1 else \
        ember.arange(7 * 1000, dtype=ember.float32).reshape(7, 1000)
    index = np.random.default_rng(0).integers(0, 7, (64, 1000))
    index[where] = bad
    with pytest.raises(RuntimeError, match=f"gather: index {bad} is out of bounds for dimension {dim} with size 7"):
        ember.gather(x, dim, ember.from_numpy(index))
    with pytest.raises(RuntimeError, match=f"index {bad} is out of bounds"):
        ember.take_along_dim(x, ember.from_numpy(index), dim)


def test_setitem_errors():
    x = ember.zeros(3, 2)
    with pytest.raises(RuntimeError):
        x[0] = ember.ones(3)
    with pytest.raises(IndexError, match="out of bounds"):
        x[L([7])] = 1.0
    with pytest.raises(IndexError):
        x[5] = 1.0
    with pytest.raises(IndexError, match="mask"):  # a mask of another shape is refused, not broadcast
        x[ember.tensor([True, False])] = 1.0
    assert x.tolist() == [[0.0, 0.0]] * 3  # nothing was written


def test_gather_from_an_empty_dim_raises_without_reading():
    # With no element along dim, the kernel has nothing to read in place of a bad index: the
    # range check runs first (a long row used to read past the empty storage).
    with pytest.raises(RuntimeError, match="gather: index 0 is out of bounds for dimension 0 with size 0"):
        ember.gather(ember.zeros(0, 100_000, dtype=ember.float64), 0, ember.zeros(1, 100_000, dtype=ember.int64))
    assert ember.gather(ember.zeros(0, 5), 0, ember.zeros(0, 5, dtype=ember.int64)).shape == (0, 5)


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.float16, np.float32, np.int64, np.complex128])
@pytest.mark.parametrize("shape, mask_dims", [((300_001,), 1), ((700, 301), 2), ((700, 301), 1), ((90, 40, 37), 2),
                                              ((5, 3), 2), ((0, 4), 1)])
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_mask_select_and_nonzero_against_numpy(dtype, shape, mask_dims, density):
    # Large inputs take the threaded two-pass compaction (chunks of at least 32768 elements):
    # every chunk's writes must land in its own range, whatever the density.
    rng = np.random.default_rng(len(shape) * 7 + mask_dims)
    a = (rng.standard_normal(shape) * 100).astype(dtype)
    mask = rng.random(shape[:mask_dims]) < density
    x, m = make(a), make(mask)
    np.testing.assert_array_equal(to_numpy(x[m]), a[mask])
    np.testing.assert_array_equal(to_numpy(ember.nonzero(m)), np.argwhere(mask))
    if mask_dims == len(shape):
        np.testing.assert_array_equal(to_numpy(ember.masked_select(x, m)), a[mask])
    if dtype is not np.complex128:  # nonzero takes no complex tensors (docs/complex.md)
        np.testing.assert_array_equal(to_numpy(ember.nonzero(x)), np.argwhere(a != 0))


def test_a_0d_integer_tensor_indexes_like_an_integer():
    # torch reads x[t] for a 0-d integer t as x[int(t)]: a view that writes through.
    a = make(np.zeros((3, 2)))
    a[ember.tensor(1)][0] = 5.0
    a[ember.tensor(2, dtype=ember.int32), :] = 7.0
    np.testing.assert_array_equal(to_numpy(a), [[0, 0], [5, 0], [7, 7]])
    assert a[ember.tensor(1)].shape == (2,) and a[ember.tensor([1])].shape == (1, 2)


def test_a_list_holding_tensors_or_sequences_is_a_tuple_of_indices():
    # torch's (deprecated, warned) reading: x[[i, j]] with tensors or lists inside is x[i, j].
    a = make(np.arange(12.0).reshape(3, 4))
    with pytest.warns(UserWarning, match="reads it as a tuple of indices"):
        assert a[[ember.tensor(0), ember.tensor(2)]].item() == 2.0
    with pytest.warns(UserWarning, match="tuple of indices"):
        np.testing.assert_array_equal(to_numpy(a[[[0, 1], [1, 2]]]), [1.0, 6.0])
    with pytest.warns(UserWarning, match="tuple of indices"):
        np.testing.assert_array_equal(to_numpy(a[[0, slice(1, 3)]]), [1.0, 2.0])
    np.testing.assert_array_equal(to_numpy(a[[0, 2]]), np.arange(12.0).reshape(3, 4)[[0, 2]])  # plain ints: rows
    np.testing.assert_array_equal(to_numpy(a[range(2)]), np.arange(8.0).reshape(2, 4))
