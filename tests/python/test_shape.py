"""Shape family: views (view, reshape, flatten, squeeze, unsqueeze, transpose,
t, permute, expand, narrow, select, slice, split, chunk, unbind, unflatten),
contiguous, and copies (cat, stack, flip, roll, repeat, tril, triu) against numpy, on
non-contiguous inputs, under gradcheck, and their errors."""
import numpy as np
import pytest

import ember
from harness import OpCase, assert_close, make, parametrize_cases, random_array, table_tests

ALL_DTYPES = (np.float32, np.float64, np.int64, np.int32, np.bool_)


def pieces(parts):
    """Joins split pieces so that their order and sizes matter."""
    return ember.cat([p.reshape(-1) * (i + 1) for i, p in enumerate(parts)])


def np_pieces(parts):
    return np.concatenate([p.reshape(-1) * (i + 1) for i, p in enumerate(parts)])


def np_tri(a, k, lower):
    rows, cols = a.shape[-2:]
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    keep = (j - i <= k) if lower else (j - i >= k)
    return np.where(keep, a, np.zeros_like(a))


CASES = [
    # Splitting the last dim is a view for any strides (so also on the fuzz test's layouts).
    OpCase("view", lambda a: a.view(*a.shape[:-1], 2, -1), lambda a: a.reshape(*a.shape[:-1], 2, -1),
           [[(3, 4)], [(2, 3, 2)]], dtypes=ALL_DTYPES),
    OpCase("reshape_noncontig", lambda a: a.t().reshape(-1), lambda a: a.T.reshape(-1), [[(3, 4)], [(2, 5)]]),
    OpCase("reshape_fn", lambda a: ember.reshape(a, shape=(a.shape[-1], -1)), lambda a: a.reshape(a.shape[-1], -1),
           [[(3, 4)], [(6,)]]),
    OpCase("flatten", lambda a: a.flatten(1), lambda a: a.reshape(a.shape[0], -1), [[(2, 3, 4)], [(3, 1)]]),
    OpCase("flatten_all", lambda a: ember.flatten(a), lambda a: a.reshape(-1), [[(2, 3, 4)], [()]]),
    OpCase("squeeze", lambda a: a.squeeze(), lambda a: np.squeeze(a), [[(1, 3, 2)], [(1,)]], dtypes=ALL_DTYPES),
    OpCase("squeeze_dim", lambda a: ember.squeeze(a, -3), lambda a: np.squeeze(a, -3), [[(2, 1, 3, 2)]]),
    OpCase("unsqueeze", lambda a: a.unsqueeze(1), lambda a: np.expand_dims(a, 1), [[(3, 4)], [(5,)]],
           dtypes=ALL_DTYPES),
    OpCase("unsqueeze_neg", lambda a: ember.unsqueeze(a, dim=-1), lambda a: np.expand_dims(a, -1), [[(3, 4)]]),
    OpCase("transpose", lambda a: a.transpose(0, -1), lambda a: np.swapaxes(a, 0, -1), [[(3, 4)], [(2, 3, 4)]],
           dtypes=ALL_DTYPES),
    OpCase("t", lambda a: ember.t(a), lambda a: a.T, [[(3, 4)], [(5,)]]),
    OpCase("permute", lambda a: a.permute(2, 0, 1), lambda a: np.transpose(a, (2, 0, 1)), [[(2, 3, 4)]],
           dtypes=ALL_DTYPES),
    OpCase("expand", lambda a: a.unsqueeze(-1).expand(2, -1, -1, 3),
           lambda a: np.broadcast_to(a[..., None], (2,) + a.shape + (3,)), [[(4, 2)]], dtypes=ALL_DTYPES),
    OpCase("expand_as", lambda a, b: a.expand_as(b), lambda a, b: np.broadcast_to(a, b.shape), [[(1, 3), (2, 3)]]),
    OpCase("contiguous", lambda a: a.t().contiguous(), lambda a: np.ascontiguousarray(a.T), [[(3, 4)]],
           dtypes=ALL_DTYPES),
    OpCase("narrow", lambda a: a.narrow(1, 1, 2), lambda a: a[:, 1:3], [[(3, 4)], [(2, 3, 5)]],
           dtypes=ALL_DTYPES),
    OpCase("narrow_neg", lambda a: ember.narrow(a, -1, -3, 2), lambda a: a[..., -3:-1], [[(3, 4)], [(4,)]]),
    OpCase("select", lambda a: a.select(1, 2), lambda a: a[:, 2], [[(3, 4)], [(2, 3, 5)]], dtypes=ALL_DTYPES),
    OpCase("select_neg", lambda a: ember.select(a, -1, -1), lambda a: a[..., -1], [[(3, 4)], [(5,)]]),
    OpCase("slice_step", lambda a: a[1:, ::2], lambda a: a[1:, ::2], [[(3, 4)], [(4, 5, 2)]], dtypes=ALL_DTYPES),
    OpCase("slice_clamp", lambda a: a[-10:10, 1:-1:3], lambda a: a[-10:10, 1:-1:3], [[(3, 7)]]),
    OpCase("slice_empty", lambda a: a[3:1], lambda a: a[3:1], [[(4, 2)]]),
    OpCase("unflatten", lambda a: a.unflatten(1, (2, -1)), lambda a: a.reshape(a.shape[0], 2, -1, *a.shape[2:]),
           [[(3, 4)], [(2, 6, 1)]]),
    OpCase("split_int", lambda a: pieces(a.split(2, 1)), lambda a: np_pieces(np.split(a, range(2, a.shape[1], 2), 1)),
           [[(3, 5)], [(2, 4, 3)]]),
    OpCase("split_sizes", lambda a: pieces(ember.split(a, [1, 0, 3], -1)),
           lambda a: np_pieces(np.split(a, [1, 1], -1)), [[(3, 4)], [(4,)]]),
    OpCase("chunk", lambda a: pieces(a.chunk(3, 0)), lambda a: np_pieces(np.split(a, range(2, a.shape[0], 2), 0)),
           [[(5, 2)], [(6,)]]),
    OpCase("unbind", lambda a: pieces(a.unbind(-1)), lambda a: np_pieces([a[..., i] for i in range(a.shape[-1])]),
           [[(3, 4)], [(2, 2, 3)]]),
    OpCase("cat0", lambda a, b: ember.cat([a, b]), lambda a, b: np.concatenate([a, b]),
           [[(2, 3), (4, 3)], [(1,), (3,)]], dtypes=ALL_DTYPES),
    OpCase("cat_neg", lambda a, b, c: ember.cat((a, b, c), -1), lambda a, b, c: np.concatenate([a, b, c], -1),
           [[(2, 3), (2, 1), (2, 0)], [(2, 2, 1), (2, 2, 3), (2, 2, 2)]]),
    OpCase("cat_skips_empty_1d", lambda a, b: ember.cat([a, ember.zeros(0, dtype=a.dtype, device=a.device), b], 1),
           lambda a, b: np.concatenate([a, b], 1), [[(2, 3), (2, 2)]]),
    OpCase("stack", lambda a, b: ember.stack([a, b]), lambda a, b: np.stack([a, b]), [[(2, 3), (2, 3)], [(1,), (1,)]],
           dtypes=ALL_DTYPES),
    OpCase("stack_neg", lambda a, b: ember.stack([a, b, a], -1), lambda a, b: np.stack([a, b, a], -1),
           [[(2, 3), (2, 3)], [(4,), (4,)]]),
    OpCase("flip", lambda a: a.flip(0), lambda a: np.flip(a, 0), [[(3, 4)], [(5,)]], dtypes=ALL_DTYPES),
    OpCase("flip_many", lambda a: ember.flip(a, (-1, 0)), lambda a: np.flip(a, (-1, 0)), [[(3, 4)], [(2, 3, 4)]]),
    OpCase("roll", lambda a: a.roll(1, 0), lambda a: np.roll(a, 1, 0), [[(3, 4)], [(5,)]], dtypes=ALL_DTYPES),
    OpCase("roll_many", lambda a: ember.roll(a, (-1, 5), (1, -1)), lambda a: np.roll(a, (-1, 5), (1, -1)),
           [[(3, 4)], [(2, 3, 4)]]),
    OpCase("roll_flat", lambda a: a.roll(2), lambda a: np.roll(a, 2), [[(3, 4)], [(5,)]]),
    OpCase("repeat", lambda a: a.repeat(2, 3), lambda a: np.tile(a, (2, 3)), [[(3, 4)], [(2,)]],
           dtypes=ALL_DTYPES),
    OpCase("repeat_more", lambda a: a.repeat(2, 1, 3, 0) if a.ndim <= 4 else a,
           lambda a: np.tile(a, (2, 1, 3, 0)), [[(2, 3)], [(1, 2, 3)]]),
    OpCase("tril", lambda a: a.tril(), lambda a: np_tri(a, 0, True), [[(3, 4)], [(2, 4, 3)]], dtypes=ALL_DTYPES),
    OpCase("tril_k", lambda a: ember.tril(a, -1), lambda a: np_tri(a, -1, True), [[(3, 4)], [(4, 4)]]),
    OpCase("triu", lambda a: a.triu(), lambda a: np_tri(a, 0, False), [[(3, 4)], [(2, 4, 3)]], dtypes=ALL_DTYPES),
    OpCase("triu_k", lambda a: ember.triu(a, diagonal=2), lambda a: np_tri(a, 2, False), [[(3, 5)], [(2, 1, 4)]]),
]


# forward against numpy for every row; float64 gradcheck for differentiable rows
test_forward, test_gradcheck = table_tests(CASES)


def layouts(array):
    """(name, tensor) pairs with array's values: contiguous, transposed, sliced, expanded."""
    out = [("contiguous", make(array))]
    if array.ndim >= 2:
        out.append(("transposed", make(np.ascontiguousarray(np.swapaxes(array, -1, -2))).transpose(-1, -2)))
    padded = np.zeros(array.shape[:-1] + (array.shape[-1] * 2,), dtype=array.dtype)
    padded[..., ::2] = array
    out.append(("sliced", make(padded)[..., ::2]))
    row = array[:1]
    out.append(("expanded", make(row).expand(*array.shape)))
    return out


@parametrize_cases([c for c in CASES if len(c.shapes[0]) == 1])
def test_noncontiguous(case):
    shape = case.shapes[0][0]
    base = random_array(shape, case.dtypes[0])
    for name, t in layouts(base):
        expected = base if name != "expanded" else np.broadcast_to(base[:1], shape)
        if name != "contiguous":
            assert not t.is_contiguous() or name == "expanded" and shape[0] == 1, name
        assert_close(case.ember_fn(t), case.numpy_fn(np.ascontiguousarray(expected)), msg=f"{case.name} {name}")


def test_cat_noncontiguous_and_promotion():
    a = random_array((3, 4))
    ta = make(a.T.copy()).t()
    b = random_array((3, 2)).astype(np.float64)
    tb = make(b)
    out = ember.cat([ta, tb, make(np.arange(3, dtype=np.int64).reshape(3, 1))], 1)
    assert out.dtype == ember.float64
    assert_close(out, np.concatenate([a, b, np.arange(3).reshape(3, 1)], 1), rtol=1e-6)
    assert ember.cat([ember.tensor([1, 2]), ember.tensor([True])]).dtype == ember.int64
    assert ember.cat([ember.zeros(0), ember.zeros(0)]).shape == (0,)


def test_views_share_memory_and_version():
    x = ember.zeros(3, 4)
    for view in (x.narrow(1, 1, 2), x.select(0, 1), x[1:, ::2], x.split(2, 1)[1], x.chunk(2)[0], x.unbind(1)[3],
                 x.unflatten(1, (2, 2))):
        v0 = x._version
        view.fill_(7.0)
        assert x._version == v0 + 1 and view._version == x._version
    expected = np.zeros((3, 4))
    expected[:, 1:3] = 7
    expected[1] = 7
    expected[1:, ::2] = 7
    expected[:, 2:] = 7
    expected[:2] = 7
    expected[:, 3] = 7
    expected[:] = 7
    assert_close(x, expected)
    y = ember.zeros(2, 3)
    s = y[:, 1]
    s.add_(ember.ones(2))
    assert y.tolist() == [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]


def test_copies_do_not_alias():
    x = ember.ones(2, 3)
    for out in (ember.cat([x]), x.flip(0), x.roll(1), x.repeat(1, 1), x.tril(), ember.stack([x])):
        out.fill_(0.0)
    assert x.tolist() == [[1.0] * 3] * 2


def test_zero_dim_inputs():
    # (the harness's make() turns 0-d arrays into 1-d ones, so 0-d is tested here)
    a, b = ember.tensor(1.5), ember.tensor(2.5)
    assert ember.stack([a, b]).tolist() == [1.5, 2.5]
    assert a.repeat(2, 2).tolist() == [[1.5, 1.5], [1.5, 1.5]]
    assert a.flip(0).tolist() == 1.5 and a.roll(3).tolist() == 1.5


def test_split_shapes():
    x = ember.zeros(5, 2)
    assert [p.shape for p in x.split(2)] == [(2, 2), (2, 2), (1, 2)]
    assert [p.shape for p in x.chunk(2)] == [(3, 2), (2, 2)]
    assert [p.shape for p in x.chunk(6)] == [(1, 2)] * 5
    assert [p.shape for p in ember.split(x, [5, 0])] == [(5, 2), (0, 2)]
    assert isinstance(x.split(2), tuple) and len(x.unbind(1)) == 2


def test_cat_grad_flows_to_skipped_empty():
    a = ember.ones(2, 2, dtype=ember.float64, requires_grad=True)
    e = ember.zeros(0, dtype=ember.float64, requires_grad=True)
    (ember.cat([a, e]) * 2).sum().backward()
    assert a.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert e.grad.shape == (0,)


def test_getitem_view_grad():
    x = make(random_array((4, 5), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: t[1:3, ::2].select(1, -1) * t[0, 1], [x])
    assert ember.autograd.gradcheck(lambda t: ember.stack([t[0], t[-1].flip(0)], 1).tril(), [x])


@pytest.mark.parametrize("fn, exc, match", [
    (lambda: ember.cat([ember.zeros(2, 3), ember.zeros(2, 4)]), RuntimeError,
     r"cat: sizes of tensors must match except in dimension 0.*\[2, 3\] and \[2, 4\]"),
    (lambda: ember.cat([ember.zeros(2, 3), ember.zeros(3)]), RuntimeError, r"cat: tensors must have same number"),
    (lambda: ember.cat([]), RuntimeError, "cat: expected a non-empty"),
    (lambda: ember.cat([ember.tensor(1.0)]), RuntimeError, "cat: zero-dimensional"),
    (lambda: ember.cat([ember.zeros(2)], 1), IndexError, "cat"),
    (lambda: ember.cat(ember.zeros(2)), TypeError, "cat"),
    (lambda: ember.stack([ember.zeros(2, 3), ember.zeros(3)]), RuntimeError,
     r"stack: expects each tensor to be equal size, but got \[2, 3\] at entry 0 and \[3\] at entry 1"),
    (lambda: ember.zeros(3).narrow(0, 2, 2), RuntimeError, r"narrow: start \(2\) \+ length \(2\) exceeds"),
    (lambda: ember.zeros(3).narrow(0, 2, 2**63 - 2), RuntimeError, r"exceeds"),  # start + length past int64
    (lambda: ember.zeros(3).narrow(0, 4, 0), IndexError, "narrow: start out of range"),
    (lambda: ember.zeros(3).select(0, 3), IndexError, "select: index 3 is out of bounds for dimension 0 with size 3"),
    (lambda: ember.zeros(3).select(1, 0), IndexError, "select"),
    (lambda: ember.tensor(1.0).select(0, 0), IndexError, "select"),
    (lambda: ember.zeros(5).split([2, 2]), RuntimeError, "split.*sum exactly to 5"),
    (lambda: ember.zeros(5).chunk(0), RuntimeError, "chunk"),
    (lambda: ember.zeros(3).flip(0, 0), RuntimeError, "flip: dim 0 appears multiple times"),
    (lambda: ember.zeros(3).roll((1, 2), 0), RuntimeError, "roll: shifts and dimensions must align"),
    (lambda: ember.zeros(2, 3).repeat(2), RuntimeError, "repeat"),
    (lambda: ember.zeros(3).tril(), RuntimeError, "tril: input tensor must have at least 2 dimensions"),
    (lambda: ember.zeros(2, 6).unflatten(1, (4, -1)), RuntimeError, "unflatten"),
])
def test_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()


def test_shapes_given_as_tensors():
    # A tensor of ints alone is the shape; inside a sequence only a one-element
    # one is an int (as PyTorch), and anything else says where it is.
    x = ember.zeros(2, 3)
    assert x.reshape(ember.tensor([3, 2])).shape == (3, 2)
    assert x.view(ember.tensor([6])).shape == (6,)
    assert x.permute(ember.tensor([1, 0])).shape == (3, 2)
    assert x.reshape(ember.tensor(3), 2).shape == (3, 2)
    with pytest.raises(TypeError, match=r"reshape: expected a sequence of ints, got a tensor of shape \[2\] "
                                        r"\(int64\) at position 0; pass its values as a list"):
        x.reshape(ember.tensor([3, 2]), 1)
    with pytest.raises(TypeError, match="reshape: expected integers, got a float32 tensor"):
        x.reshape(ember.tensor([3.0, 2.0]))


def test_view_refuses_incompatible_strides_and_names_reshape():
    t = ember.zeros(3, 4).t()
    with pytest.raises(RuntimeError, match=r"view: .*Use \.reshape"):
        t.view(12)
    assert t.reshape(12).shape == (12,)
    assert ember.tensor(2.0).unsqueeze(0).tolist() == [2.0]


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16, ember.int8, ember.bool,
                                   ember.complex64, ember.complex128])
@pytest.mark.parametrize("shape", [(64, 96), (37, 45), (3, 100, 70), (2, 3, 65, 129)])
def test_contiguous_copy_of_transposed_views(dtype, shape):
    # The CPU copies these in 32 x 32 tiles of 8 x 8 blocks: full and partial tiles, batches, every
    # element size, and leading dims with a negative stride.
    a = (ember.randn(*shape) * 3).to(dtype)
    want = np.swapaxes(a.numpy(), -1, -2)
    np.testing.assert_array_equal(a.transpose(-1, -2).contiguous().numpy(), want)
    if len(shape) > 2:
        flipped = a.flip(0)
        np.testing.assert_array_equal(flipped.transpose(-1, -2).contiguous().numpy(),
                                      np.swapaxes(flipped.numpy(), -1, -2))
    nchw = ember.randn(2, 16, 9, 40)
    np.testing.assert_array_equal(nchw.permute(0, 2, 3, 1).contiguous().numpy(),
                                  nchw.numpy().transpose(0, 2, 3, 1))  # NCHW -> NHWC


@pytest.mark.parametrize("dtype", [ember.bool, ember.float16, ember.float32, ember.int64, ember.complex128])
@pytest.mark.parametrize("k", [2, 3, 4, 7, 300])
def test_contiguous_copy_of_a_repeated_last_dim(dtype, k):
    # x.unsqueeze(-1).expand(..., k): the CPU writes each element k times in a row (every element
    # size; a view with an offset; size-1 leading dims); a leading dim that is not contiguous
    # takes the general path.
    base = (ember.randn(2, 3, 1, 5000) * 3).to(dtype)[1:]  # a storage offset
    want = np.repeat(base.numpy()[..., None], k, axis=-1)
    got = base.unsqueeze(-1).expand(*base.shape, k).contiguous()
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(ember.repeat_interleave(base, k, dim=-1).numpy(), want.reshape(1, 3, 1, -1))
    strided = base[:, ::2]
    np.testing.assert_array_equal(strided.unsqueeze(-1).expand(*strided.shape, k).contiguous().numpy(),
                                  np.repeat(strided.numpy()[..., None], k, axis=-1))


@pytest.mark.parametrize("dtype", [ember.uint8, ember.float32, ember.complex128])
def test_large_contiguous_copies_split_across_threads(dtype):
    # Contiguous copies over 1 MB are cut into one byte range per thread; odd sizes and a
    # storage offset check the ranges' edges.
    base = (ember.randn(3 * 1_000_003 + 1) * 50).to(dtype)[1:]
    np.testing.assert_array_equal(base.clone().numpy(), base.numpy())
    out = ember.zeros(base.shape, dtype=dtype)
    out.copy_(base)
    np.testing.assert_array_equal(out.numpy(), base.numpy())


def test_copy_from_an_overlapping_view_reads_the_original_values():
    z = ember.arange(10000, dtype=ember.float32).reshape(100, 100)
    want = z.numpy().T.copy()
    z.copy_(z.t())
    np.testing.assert_array_equal(z.numpy(), want)
    v = ember.arange(10, dtype=ember.float32)
    v[1:].copy_(v[:-1])  # a shifted overlap
    assert v.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]


@pytest.mark.parametrize("dtype", [ember.bool, ember.int8, ember.float32, ember.int64, ember.complex128])
@pytest.mark.parametrize("diagonal", [0, 2, -3, 9, -9, 2**62, -2**62])
def test_tril_triu_rows_of_any_layout(dtype, diagonal):
    # Each row keeps one span of columns: diagonals past either edge, batches, a transposed
    # (column-strided) input and a batch-strided one, every element size.
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 7, 8)) * 4).astype(np.float32)
    base = ember.from_numpy(a).to(dtype)
    for x in (base, base.transpose(1, 2), base[::2], base.transpose(0, 2)[1:]):
        want = x.numpy()
        lower = np.tril(want, k=max(min(diagonal, 99), -99))
        upper = np.triu(want, k=max(min(diagonal, 99), -99))
        np.testing.assert_array_equal(ember.tril(x, diagonal).numpy(), lower)
        np.testing.assert_array_equal(ember.triu(x, diagonal).numpy(), upper)


@pytest.mark.parametrize("dtype", [ember.bool, ember.int8, ember.float16, ember.float32, ember.int64, ember.complex128])
def test_flip_of_the_last_dim_reverses_each_row(dtype):
    # A flip of the last dim copies each row reversed (one loop per row); other dims and views too.
    a = (np.random.default_rng(6).standard_normal((3, 5, 37)) * 9).astype(np.float32)
    x = ember.from_numpy(a).to(dtype)
    for view, axes in ((x, (-1,)), (x, (0, 2)), (x[:, 1:4], (2,)), (x.transpose(0, 1), (-1,))):
        want = np.flip(view.numpy(), axes)
        np.testing.assert_array_equal(view.flip(axes).numpy(), want)


@pytest.mark.parametrize("op", [lambda x, d: x.transpose(0, d), lambda x, d: x.flatten(0, d),
                                lambda x, d: ember.swapaxes(x, d, 0)], ids=["transpose", "flatten", "swapaxes"])
def test_a_0d_tensor_takes_only_dims_0_and_minus_1(op):
    x = make(np.array(2.0, dtype=np.float32))
    for d in (0, -1):
        op(x, d)  # accepted, as in torch
    for d in (1, -2):
        with pytest.raises(IndexError, match=r"dimension out of range \(expected to be in range of \[-1, 0\]"):
            op(x, d)
