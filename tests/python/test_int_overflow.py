"""Integer arithmetic at the overflow edges wraps around (two's complement),
as numpy and PyTorch give: INT_MAX + 1 is INT_MIN, -INT_MIN and abs(INT_MIN)
are INT_MIN, int64 sums wrap. In C++ signed overflow is undefined behaviour,
so the kernels compute in unsigned types (core/int_math.h); these tests pin
the results on contiguous inputs (the vectorized loops), on transposed,
sliced and expanded ones (the strided loops) and on broadcast operands and
Python numbers (the broadcast-scalar loop). With GCC the undefined versions
happened to give the wrapped values too, so most of these pass without the
fix; tests/cpp/test_int_overflow.cpp, built with -fsanitize=signed-integer-
overflow (cmake -DEMBER_UBSAN_INT=ON), is what catches the undefined ones.
arange's exact length is the exception: it was wrong before the fix."""
import numpy as np
import pytest

import ember
from harness import DEVICE, assert_close, layouts, make, to_numpy

INT_DTYPES = [np.int8, np.int32, np.int64]


def edges(dtype):
    """The values where + - * and negation overflow, and small ones."""
    info = np.iinfo(dtype)
    vals = [info.max, info.min, info.min + 1, info.max - 1, info.max // 2 + 1, info.min // 2 - 1,
            -1, 0, 1, 2, -2, 3]
    return np.array(vals, dtype=dtype)


def grid(dtype):
    """Every pair of edge values, as two 2-D arrays of 144 elements."""
    e = edges(dtype)
    a, b = np.meshgrid(e, e, indexing="ij")
    return np.ascontiguousarray(a), np.ascontiguousarray(b)


def tiled(dtype, repeats=8):
    """Edge values repeated into a row long enough for the vector loops."""
    return np.tile(edges(dtype), (2, repeats))


def numpy_wraps(f, *arrays):
    with np.errstate(over="ignore"):
        return f(*arrays)


# ---- binary arithmetic

BINARY = [
    ("add", lambda a, b: a + b, np.add),
    ("sub", lambda a, b: a - b, np.subtract),
    ("mul", lambda a, b: a * b, np.multiply),
    ("add_alpha", lambda a, b: ember.add(a, b, alpha=3), lambda a, b: a + b * a.dtype.type(3)),
    ("sub_alpha", lambda a, b: ember.sub(a, b, alpha=-5), lambda a, b: a - b * a.dtype.type(-5)),
]


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,ember_fn,numpy_fn", BINARY, ids=[b[0] for b in BINARY])
def test_binary_wraps_on_every_layout(name, ember_fn, numpy_fn, dtype):
    a, b = grid(dtype)
    expected = numpy_wraps(numpy_fn, a, b)
    for la, ta in layouts(a):
        for lb, tb in layouts(b):
            out = ember_fn(ta, tb)
            assert out.dtype == ember.tensor(a).dtype
            assert_close(out, expected, msg=f"{name} {la} x {lb}")


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,ember_fn,numpy_fn", BINARY, ids=[b[0] for b in BINARY])
def test_binary_wraps_with_broadcast_operands(name, ember_fn, numpy_fn, dtype):
    e = edges(dtype)
    col, row = e.reshape(-1, 1), e.reshape(1, -1)
    assert_close(ember_fn(make(col), make(row)), numpy_wraps(numpy_fn, col, row), msg=f"{name} column x row")
    long_row = tiled(dtype)
    for v in (e[0], e[1], e[6]):  # max, min, -1 as a 0-d tensor: the broadcast-scalar loop
        assert_close(ember_fn(make(long_row), make(np.array(v, dtype=dtype))),
                     numpy_wraps(numpy_fn, long_row, np.array(v, dtype=dtype)), msg=f"{name} row x {v}")
        assert_close(ember_fn(make(np.array(v, dtype=dtype)), make(long_row)),
                     numpy_wraps(numpy_fn, np.array(v, dtype=dtype), long_row), msg=f"{name} {v} x row")


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_python_numbers_wrap(dtype):
    info = np.iinfo(dtype)
    t = make(np.full((3, 40), info.max, dtype=dtype))
    assert_close(t + 1, np.full((3, 40), info.min, dtype=dtype))
    assert_close(1 + t, np.full((3, 40), info.min, dtype=dtype))
    assert_close(t * 2, np.full((3, 40), -2, dtype=dtype))
    m = make(np.full((3, 40), info.min, dtype=dtype))
    assert_close(m - 1, np.full((3, 40), info.max, dtype=dtype))
    assert_close(m * -1, np.full((3, 40), info.min, dtype=dtype))
    assert_close(-1 * m, np.full((3, 40), info.min, dtype=dtype))
    assert_close(m.transpose(0, 1) - 1, np.full((40, 3), info.max, dtype=dtype))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_in_place_arithmetic_wraps(dtype):
    info = np.iinfo(dtype)
    t = make(np.full((2, 33), info.max, dtype=dtype))
    t += 1
    assert_close(t, np.full((2, 33), info.min, dtype=dtype))
    t.mul_(-1)
    assert_close(t, np.full((2, 33), info.min, dtype=dtype))
    s = make(np.full((33, 2), info.min, dtype=dtype)).transpose(0, 1)
    s.sub_(make(np.ones((2, 33), dtype=dtype)))
    assert_close(s, np.full((2, 33), info.max, dtype=dtype))


# ---- unary

UNARY = [
    ("neg", lambda t: -t, np.negative),
    ("neg_fn", ember.neg, np.negative),
    ("abs", ember.abs, np.abs),
    ("square", ember.square, np.square),
    ("pow2", lambda t: ember.pow(t, 2), lambda a: np.power(a, 2)),
    ("pow3", lambda t: t ** 3, lambda a: np.power(a, 3)),
    ("pow63", lambda t: ember.pow(t, 63), lambda a: np.power(a, 63)),
]


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,ember_fn,numpy_fn", UNARY, ids=[u[0] for u in UNARY])
def test_unary_wraps_on_every_layout(name, ember_fn, numpy_fn, dtype):
    a = tiled(dtype)
    expected = numpy_wraps(numpy_fn, a)
    for layout, t in layouts(a):
        assert_close(ember_fn(t), expected, msg=f"{name} {layout}")
    row = np.broadcast_to(a[:1], a.shape)  # an expanded input
    assert_close(ember_fn(make(a[:1]).expand(*a.shape)), numpy_wraps(numpy_fn, row), msg=f"{name} expanded")
    for v in edges(dtype):  # 0-d
        assert_close(ember_fn(make(np.array(v, dtype=dtype))), numpy_wraps(numpy_fn, np.array(v, dtype=dtype)))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_pow_with_tensor_exponent_wraps(dtype):
    a = tiled(dtype)
    e = np.tile(np.array([0, 1, 2, 3, 7, 31, 62, 63], dtype=dtype), (2, a.shape[1] // 8))
    assert_close(ember.pow(make(a), make(e)), numpy_wraps(np.power, a, e))


def test_abs_and_neg_of_int_min_are_int_min():
    for dtype in INT_DTYPES:
        m = np.iinfo(dtype).min
        t = make(np.array([m] * 37, dtype=dtype))
        assert (to_numpy(ember.abs(t)) == m).all()
        assert (to_numpy(-t) == m).all()


# ---- reductions

@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_sum_accumulates_in_int64_and_wraps(dtype):
    info = np.iinfo(dtype)
    # 100000 elements: long enough that one row is split across threads.
    a = np.full(100000, info.max, dtype=dtype)
    a[::7] = info.min
    s = ember.sum(make(a))
    assert s.dtype == ember.int64
    assert to_numpy(s) == numpy_wraps(lambda x: x.sum(dtype=np.int64), a)
    m = a.reshape(100, 1000)
    for name, t in layouts(m):
        for dim in (0, 1):
            assert_close(ember.sum(t, dim), numpy_wraps(lambda x: x.sum(axis=dim, dtype=np.int64), m),
                         msg=f"sum dim {dim} {name}")


def test_int64_sum_wraps():
    big = np.iinfo(np.int64).max
    a = np.array([big, big, big, 1, -5] * 4000, dtype=np.int64)
    assert to_numpy(ember.sum(make(a))) == numpy_wraps(np.sum, a)
    m = a.reshape(40, 500)
    assert_close(ember.sum(make(m), 0), numpy_wraps(lambda x: x.sum(axis=0), m))
    assert_close(ember.sum(make(m), 1), numpy_wraps(lambda x: x.sum(axis=1), m))
    assert_close(ember.sum(make(m).transpose(0, 1), 0), numpy_wraps(lambda x: x.T.sum(axis=0), m))
    assert to_numpy(ember.sum(make(np.array([big, 1], dtype=np.int64)))) == np.iinfo(np.int64).min


def test_sum_with_int32_dtype_wraps():
    a = np.array([2**31 - 1] * 5, dtype=np.int32)
    s = ember.sum(make(a), dtype=ember.int32)
    assert s.dtype == ember.int32
    assert to_numpy(s) == numpy_wraps(lambda x: x.sum(dtype=np.int32), a)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_prod_wraps(dtype):
    a = np.array([3] * 50 + [-1, np.iinfo(dtype).min], dtype=dtype)
    p = ember.prod(make(a))
    assert p.dtype == ember.int64
    assert to_numpy(p) == numpy_wraps(lambda x: x.prod(dtype=np.int64), a)
    m = np.tile(np.array([3, 7, -5, 2, 11], dtype=dtype), (45, 4))
    for name, t in layouts(m):
        assert_close(ember.prod(t, 0), numpy_wraps(lambda x: x.prod(axis=0, dtype=np.int64), m), msg=name)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_cumsum_wraps(dtype):
    info = np.iinfo(dtype)
    a = np.array([info.max, info.max, info.min, 1, -1] * 10, dtype=dtype)
    c = ember.cumsum(make(a), 0)
    assert c.dtype == ember.int64
    assert_close(c, numpy_wraps(lambda x: np.cumsum(x, dtype=np.int64), a))
    big = np.array([np.iinfo(np.int64).max, 1, 1, np.iinfo(np.int64).min, -1] * 3, dtype=np.int64)
    assert_close(ember.cumsum(make(big), 0), numpy_wraps(np.cumsum, big))
    m = np.stack([big, big[::-1]])
    for name, t in layouts(m):
        assert_close(ember.cumsum(t, 1), numpy_wraps(lambda x: np.cumsum(x, axis=1), m), msg=name)
        assert_close(ember.cumsum(t, 0), numpy_wraps(lambda x: np.cumsum(x, axis=0), m), msg=name)


# ---- accumulating index ops, integer matmul

@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_accumulating_index_ops_wrap(dtype):
    info = np.iinfo(dtype)
    base = np.array([info.max, info.min, 0, 5], dtype=dtype)
    idx = np.array([0, 1, 0, 3, 1], dtype=np.int64)
    vals = np.array([1, -1, info.max, info.max, info.min], dtype=dtype)
    expected = base.copy()
    with np.errstate(over="ignore"):
        np.add.at(expected, idx, vals)
    t = make(base)
    t.index_put_((make(idx),), make(vals), accumulate=True)
    assert_close(t, expected, msg="index_put_ accumulate")
    assert_close(ember.index_add(make(base), 0, make(idx), make(vals)), expected, msg="index_add")
    assert_close(ember.scatter_add(make(base), 0, make(idx), make(vals)), expected, msg="scatter_add")


@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_integer_matmul_wraps(dtype):
    if DEVICE != "cpu":
        pytest.skip(f"integer matmul is CPU-only (no integer GEMM on {DEVICE}, as in PyTorch)")
    info = np.iinfo(dtype)
    a = np.array([[info.max, info.max], [info.min, 3]], dtype=dtype)
    b = np.array([[2, info.min], [info.max, -1]], dtype=dtype)
    assert_close(ember.matmul(make(a), make(b)), numpy_wraps(np.matmul, a, b))


# ---- arange beyond int64's differences

@pytest.mark.parametrize("start,end,step", [
    (-2**63, 2**63 - 1, 2**62),
    (2**63 - 1, -2**63, -2**62),
    (-2**63, 2**63 - 1, 3 * 2**61),
    (2**63 - 10, 2**63 - 1, 4),
    (-2**63, -2**63 + 3, 1),
    (-5, 2**63 - 1, 2**63 - 1),
    (2**63 - 1, -2**63, -(2**63 - 1)),
])
def test_arange_near_the_int64_limits(start, end, step):
    # end - start does not fit in int64 here; the length used to come out
    # wrong (empty) from the overflowed difference. The reference is Python's
    # range: numpy's arange sizes in doubles and drops the last element of the
    # last two rows.
    t = ember.arange(start, end, step, device=DEVICE)
    assert t.dtype == ember.int64
    np.testing.assert_array_equal(to_numpy(t), np.array(range(start, end, step), dtype=np.int64))


def test_arange_rejects_a_range_doubles_cannot_tell_apart():
    # 2**62 + 1 and 2**62 are the same double; the integer check sees end < start.
    with pytest.raises(RuntimeError, match="arange: upper bound and larger bound inconsistent"):
        ember.arange(2**62 + 1, 2**62, 1)
    with pytest.raises(RuntimeError, match="arange: upper bound and larger bound inconsistent"):
        ember.arange(2**62, 2**62 + 1, -1)


# ---- front-end size arithmetic with steps, strides, paddings near 2**63
# (the UBSan build caught these; several gave wrong results before)

MAX = 2**63 - 1


def test_slice_with_a_step_past_the_end_keeps_the_first_element():
    x = make(np.arange(10.0))
    assert_close(x[::MAX], np.array([0.0]))  # was empty: 10 + step - 1 overflowed
    assert_close(x[3::MAX], np.array([3.0]))
    m = make(np.arange(16.0).reshape(4, 4))
    assert_close(m[::MAX], np.arange(4.0).reshape(1, 4))  # stride 4 * step overflows too
    assert_close(m[:, 1::MAX], np.array([[1.0], [5.0], [9.0], [13.0]]))


def test_chunk_and_split_with_huge_sizes():
    x = make(np.arange(10.0))
    pieces = x.chunk(MAX)  # ceil(10 / MAX) = 1: ten pieces (was an error)
    assert [tuple(p.shape) for p in pieces] == [(1,)] * 10
    assert [tuple(p.shape) for p in x.split(MAX)] == [(10,)]
    # MAX + MAX + 12 wraps to 10 in int64: it must not pass for x's size.
    with pytest.raises(RuntimeError, match="split: split_with_sizes expects split_sizes to sum exactly to 10"):
        x.split([MAX, MAX, 12])


def test_view_and_repeat_whose_sizes_overflow_raise():
    x = make(np.arange(10.0))
    with pytest.raises(RuntimeError, match=r"view: shape \[4611686018427387904, 4611686018427387904\] is invalid"):
        x.view(2**62, 2**62)
    with pytest.raises(RuntimeError, match="reshape: shape .* is invalid for input of size 10"):
        x.reshape(2**62, 4, -1)
    with pytest.raises(RuntimeError, match="repeat: repeats"):
        x.repeat(2**62, 2**62)


def test_conv_and_pool_with_huge_strides_paddings_dilations():
    F = ember.nn.functional
    img = make(np.arange(16.0, dtype=np.float32).reshape(1, 1, 4, 4))
    w = make(np.ones((1, 1, 2, 2), dtype=np.float32))
    # One window at the origin: the kernels' ceil divisions used to overflow.
    assert_close(F.conv2d(img, w, stride=MAX), np.array([[[[10.0]]]]))
    assert_close(F.max_pool2d(img, 2, stride=MAX), np.array([[[[5.0]]]]))
    assert_close(F.avg_pool2d(img, 2, stride=MAX), np.array([[[[2.5]]]]))
    with pytest.raises(RuntimeError, match="conv2d: padding .* or dilation .* is too large"):
        F.conv2d(img, w, padding=2**62)
    with pytest.raises(RuntimeError, match="conv2d: padding .* or dilation .* is too large"):
        F.conv2d(img, w, dilation=MAX)
    # The dilated 3x3 kernel spans 2**63 + 1: this came out as an empty tensor.
    with pytest.raises(RuntimeError, match="conv2d: padding .* or dilation .* is too large"):
        F.conv2d(img, make(np.ones((1, 1, 3, 3), dtype=np.float32)), dilation=2**62, stride=2**62)
    with pytest.raises(RuntimeError, match="conv_transpose2d: stride .* is too large"):
        F.conv_transpose2d(img, w, stride=2**62)
    # A kernel larger than the input: no output (avg_pool2d gave a 1x1 result).
    with pytest.raises(RuntimeError, match="max_pool2d: given input of size .* is too small"):
        F.max_pool2d(img, MAX)
    with pytest.raises(RuntimeError, match="avg_pool2d: given input of size .* is too small"):
        F.avg_pool2d(img, MAX)
    with pytest.raises(RuntimeError, match="max_pool2d: kernel_size .* spans more than int64 can index"):
        F.max_pool2d(img, 3, dilation=2**62, padding=2**62)
