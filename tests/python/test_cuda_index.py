"""The index family on CUDA against the CPU path: index_select, gather, scatter
(src and value), scatter_add, index_add, one_hot, nonzero, advanced indexing
(getitem with tensor and bool indices, setitem / index_put_ with and without
accumulate), masked_select, take_along_dim, cat, flip, tril/triu, and the
losses that run through them; forward and gradients, several dtypes,
non-contiguous inputs, negative and duplicate indices, empty results, and the
errors (out-of-range indices raise the CPU's exception and message, mixed
devices a RuntimeError naming the op).

Every test needs a CUDA GPU and skips, saying why, without one. Inputs are
small integers (exact in float16 and bfloat16), so even sums accumulated in
another order on the GPU must match the CPU exactly.
"""
import numpy as np
import pytest

import ember
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy

FLOATS = [ember.float32, ember.float64, ember.float16, ember.bfloat16]
ALL = FLOATS + [ember.int64, ember.int32, ember.uint8, ember.int8, ember.bool]


def as_np(t):
    t = t.detach().cpu()
    if t.dtype in (ember.float16, ember.bfloat16):
        t = t.float()  # exact
    return t.numpy()


def same(got, want, msg=""):
    """got (CUDA) equals want (CPU): shape, dtype and every element."""
    assert got.is_cuda, f"{msg}: result is on {got.device}"
    assert want.device.type == "cpu"
    assert tuple(got.shape) == tuple(want.shape), f"{msg}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    assert got.dtype == want.dtype, f"{msg}: dtype {got.dtype} != {want.dtype}"
    np.testing.assert_array_equal(as_np(got), as_np(want), err_msg=msg)


def ints(shape, seed, low=-4, high=5):
    return np.random.default_rng(seed).integers(low, high, size=shape)


def pair(array, dtype=ember.float32, grad=False):
    """The same tensor on the CPU and on CUDA (leaves when grad)."""
    cpu = ember.tensor(np.asarray(array)).to(dtype)
    gpu = cpu.cuda()
    if grad:
        cpu.requires_grad_(True)
        gpu = gpu.detach().requires_grad_(True)
    return cpu, gpu


def index_pair(array):
    return pair(np.asarray(array, dtype=np.int64), ember.int64)


class Idx:
    """An index argument of check_both: stays int64."""

    def __init__(self, array):
        self.array = np.asarray(array, dtype=np.int64)


def check_both(fn, inputs, dtype=ember.float32, grad_of=(), msg=""):
    """fn over CPU and CUDA copies of inputs (Idx: int64 indices, arrays:
    tensors of `dtype`); compares the outputs and, for the input positions in
    grad_of, the gradients of sum(out * w)."""
    cpu_in, gpu_in = [], []
    for i, a in enumerate(inputs):
        if isinstance(a, Idx):
            c, g = index_pair(a.array)
        else:
            c, g = pair(a, dtype, grad=i in grad_of)
        cpu_in.append(c)
        gpu_in.append(g)
    out_cpu, out_gpu = fn(*cpu_in), fn(*gpu_in)
    same(out_gpu, out_cpu, msg or "forward")
    if grad_of:
        w = ember.tensor(ints(tuple(out_cpu.shape), 99)).to(out_cpu.dtype)
        (out_cpu * w).sum().backward()
        (out_gpu * w.cuda()).sum().backward()
        for i in grad_of:
            assert gpu_in[i].grad is not None, f"{msg}: no gradient for input {i} on CUDA"
            same(gpu_in[i].grad, cpu_in[i].grad, f"{msg}: gradient of input {i}")
    return out_cpu, out_gpu


def same_error(fn, cpu_args, gpu_args):
    with pytest.raises(Exception) as want:
        fn(*cpu_args)
    with pytest.raises(Exception) as got:
        fn(*gpu_args)
    assert type(got.value) is type(want.value), f"{type(got.value).__name__}: {got.value}"
    assert str(got.value) == str(want.value)
    return got.value


# ---- dim-wise ops ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL)
def test_index_select_dtypes_and_dims(dtype):
    x = ints((4, 5, 3), 0)
    for dim, idx in [(0, [3, 0, 3, 1]), (1, [4, 4, 0]), (-1, [2, 0]), (2, [])]:
        check_both(lambda a, i: ember.index_select(a, dim, i), [x, Idx(idx)], dtype,
                   msg=f"index_select dim {dim}")


def test_index_select_noncontiguous_int32_index_and_grad():
    x = ints((5, 6), 1)
    check_both(lambda a, i: a.t().index_select(0, i), [x, Idx([5, 0, 5, 2])], grad_of=(0,),
               msg="transposed input, duplicate indices")
    cpu, gpu = pair(x)
    ic = ember.tensor(np.array([4, 1, 4], dtype=np.int32))
    same(gpu.index_select(1, ic.cuda()), cpu.index_select(1, ic), "int32 index")
    strided = ember.tensor(np.array([[3, 9], [0, 9], [3, 9]], dtype=np.int64))[:, 0]
    same(gpu.index_select(0, strided.cuda()), cpu.index_select(0, strided), "strided index")
    same(ember.tensor(7.0).cuda().index_select(0, ember.tensor([0]).cuda()),
         ember.tensor(7.0).index_select(0, ember.tensor([0])), "0-d input")


@pytest.mark.parametrize("dtype", [ember.float32, ember.float16, ember.bfloat16, ember.int64, ember.bool])
def test_gather(dtype):
    x = ints((3, 4, 5), 2)
    idx = Idx(ints((3, 2, 5), 3, 0, 4))
    check_both(lambda a, i: a.gather(1, i), [x, idx], dtype)
    check_both(lambda a, i: ember.gather(a, -1, i), [x, Idx(ints((2, 4, 7), 4, 0, 5))], dtype,
               msg="index smaller/longer")


def test_gather_noncontiguous_and_grad():
    x = ints((4, 6), 5)
    idx = ints((6, 3), 6, 0, 4)
    check_both(lambda a, i: a.t().gather(1, i.t().contiguous().t()), [x, Idx(idx.T.copy())], grad_of=(0,),
               msg="transposed input and index")
    check_both(lambda a, i: a.gather(0, i), [x, Idx(ints((7, 6), 7, 0, 4))], ember.float64, grad_of=(0,),
               msg="duplicates accumulate in backward")


def unique_rows(shape, size, seed):
    """Index along dim 0 with no duplicates in any column (a deterministic scatter)."""
    rng = np.random.default_rng(seed)
    return Idx(np.stack([rng.permutation(size)[:shape[0]] for _ in range(shape[1])], 1))


@pytest.mark.parametrize("dtype", [ember.float32, ember.float16, ember.bfloat16, ember.int64, ember.bool])
def test_scatter_src_and_value(dtype):
    x = ints((5, 4), 8)
    src = ints((3, 4), 9)
    idx = unique_rows((3, 4), 5, 10)
    check_both(lambda a, i, s: a.scatter(0, i, s), [x, idx, src], dtype, msg="scatter src")
    check_both(lambda a, i: a.scatter(0, i, value=1), [x, idx], dtype, msg="scatter value")
    check_both(lambda a, i, s: a.scatter(0, i, s), [x, Idx(idx.array[:2, :3]), src], dtype, msg="src larger than index")


def test_scatter_grad_and_inplace():
    x, src, idx = ints((5, 4), 11), ints((3, 4), 12), unique_rows((3, 4), 5, 13)
    check_both(lambda a, i, s: a.scatter(0, i, s), [x, idx, src], grad_of=(0, 2), msg="scatter grads")
    check_both(lambda a, i: (a * 1).scatter_(0, i, value=2.5), [x, idx], grad_of=(0,), msg="scatter_ value grads")


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16, ember.bfloat16, ember.int64,
                                   ember.int32])
def test_scatter_add_accumulates_duplicates(dtype):
    x = ints((4, 6), 14)
    src = ints((9, 6), 15)
    idx = Idx(ints((9, 6), 16, 0, 4))  # many duplicates per column
    check_both(lambda a, i, s: a.scatter_add(0, i, s), [x, idx, src], dtype)
    check_both(lambda a, i, s: a.t().scatter_add(1, i.t(), s.t()), [x, idx, src], dtype, msg="transposed")


def test_scatter_add_grad():
    check_both(lambda a, i, s: a.scatter_add(1, i, s), [ints((3, 5), 17), Idx(ints((3, 8), 18, 0, 5)), ints((3, 8), 19)],
               grad_of=(0, 2))


@pytest.mark.parametrize("dtype", [ember.int8, ember.uint8], ids=str)
def test_byte_accumulate_wraps_like_the_cpu(dtype):
    # 8-bit atomics are a compare-and-swap on the enclosing 32-bit word: every
    # byte of a small tensor is a target, with many duplicates, and sums wrap.
    rng = np.random.default_rng(5)
    x = ember.tensor(rng.integers(0, 120, (5, 7)), dtype=dtype)
    src = ember.tensor(rng.integers(0, 100, (64, 7)), dtype=dtype)
    idx = ember.tensor(rng.integers(0, 5, (64, 7)), dtype=ember.int64)
    want = x.scatter_add(0, idx, src)
    got = x.cuda().scatter_add(0, idx.cuda(), src.cuda())
    assert got.dtype == dtype and bool((got.cpu() == want).all())
    flat = ember.tensor(rng.integers(0, 35, 300), dtype=ember.int64)
    vals = ember.tensor(rng.integers(0, 100, 300), dtype=dtype)
    want = x.clone().reshape(-1).index_put_((flat,), vals, accumulate=True)
    got = x.cuda().reshape(-1).index_put_((flat.cuda(),), vals.cuda(), accumulate=True)
    assert bool((got.cpu() == want).all())


@pytest.mark.parametrize("dtype", [ember.float32, ember.float16, ember.bfloat16, ember.int64])
def test_index_add(dtype):
    x, src = ints((3, 5, 2), 20), ints((3, 7, 2), 21)
    idx = Idx([4, 0, 4, 4, 1, 0, 2])
    check_both(lambda a, i, s: a.index_add(1, i, s), [x, idx, src], dtype)
    check_both(lambda a, i, s: ember.index_add(a, 1, i, s, alpha=2), [x, idx, src], dtype, msg="alpha")


def test_index_add_grad():
    check_both(lambda a, i, s: a.index_add(0, i, s, alpha=3), [ints((4, 3), 22), Idx([1, 1, 3]), ints((3, 3), 23)],
               grad_of=(0, 2))


def test_take_along_dim_and_masked_select():
    check_both(lambda a, i: a.take_along_dim(i, 1), [ints((3, 4), 24), Idx(ints((3, 6), 25, 0, 4))], grad_of=(0,))
    check_both(lambda a, i: ember.take_along_dim(a, i), [ints((3, 4), 26), Idx([11, 0, 11, 3])], grad_of=(0,),
               msg="flat")
    mask = ints((4, 5), 27, 0, 2).astype(bool)
    cm, gm = pair(mask, ember.bool)
    for dtype in (ember.float32, ember.int64, ember.bool):
        cx, gx = pair(ints((4, 5), 28), dtype)
        same(gx.masked_select(gm), cx.masked_select(cm), f"masked_select {dtype}")
    cx, gx = pair(ints((4, 1), 29), ember.float32, grad=True)
    out_c, out_g = ember.masked_select(cx, cm), ember.masked_select(gx, gm)
    same(out_g, out_c, "masked_select broadcast")
    out_c.sum().backward()
    out_g.sum().backward()
    same(gx.grad, cx.grad, "masked_select grad")


def test_one_hot():
    c, g = index_pair([[0, 3], [2, 2], [1, 0]])
    same(ember._C._one_hot(g), ember._C._one_hot(c), "num_classes=-1")
    same(ember._C._one_hot(g, 6), ember._C._one_hot(c, 6), "num_classes=6")
    same(ember.nn.functional.one_hot(g[:, 0], 4), ember.nn.functional.one_hot(c[:, 0], 4), "F.one_hot")
    same_error(lambda t: ember._C._one_hot(t, 3), [c], [g])
    cn, gn = index_pair([1, -1])
    same_error(lambda t: ember._C._one_hot(t), [cn], [gn])
    ce, ge = index_pair(np.zeros(0, dtype=np.int64))
    same(ember._C._one_hot(ge, 3), ember._C._one_hot(ce, 3), "empty")
    same_error(lambda t: ember._C._one_hot(t), [ce], [ge])


# ---- nonzero and masks -----------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 4), (2, 0, 3), (3, 70, 50), (20011,)])
def test_nonzero_orders_like_the_cpu(shape):
    rng = np.random.default_rng(30)
    a = rng.integers(0, 3, size=shape) * (rng.random(shape) < 0.3)  # sparse: tiles with and without hits
    for dtype in (ember.bool, ember.int64, ember.float32, ember.float16, ember.uint8):
        c, g = pair(a, dtype)
        same(ember.nonzero(g), ember.nonzero(c), f"nonzero {shape} {dtype}")
    c, g = pair(a)
    for gc, cc in zip(ember.nonzero(g, as_tuple=True), ember.nonzero(c, as_tuple=True)):
        same(gc, cc, "as_tuple")


def test_nonzero_special_values_and_layouts():
    a = np.array([[0.0, -0.0, np.nan], [np.inf, 1e-30, 0.0]], dtype=np.float32)
    c, g = pair(a)
    same(ember.nonzero(g), ember.nonzero(c), "NaN counts, -0.0 does not")
    same(ember.nonzero(g.t()), ember.nonzero(c.t()), "transposed")
    b = ints((3, 1), 31, 0, 2)
    cb, gb = pair(b)
    same(ember.nonzero(gb.expand(3, 5)), ember.nonzero(cb.expand(3, 5)), "expanded")
    z = np.zeros((5000,))
    z[[0, 4095, 4096, 4999]] = 1  # tile boundaries
    cz, gz = pair(z)
    same(ember.nonzero(gz), ember.nonzero(cz), "tile edges")
    same(ember.nonzero(ember.ones(9000, dtype=ember.bool, device="cuda")),
         ember.arange(9000).reshape(9000, 1), "all true")


def test_bool_mask_getitem_and_setitem():
    x = ints((4, 5, 3), 32)
    mask = ints((4, 5), 33, 0, 2).astype(bool)
    cm, gm = pair(mask, ember.bool)
    check_both(lambda a: a[gm if a.is_cuda else cm], [x], grad_of=(0,), msg="x[mask]")
    check_both(lambda a: a[:, gm[1] if a.is_cuda else cm[1]], [x], grad_of=(0,), msg="x[:, mask]")
    none = np.zeros((4, 5), dtype=bool)
    cn, gn = pair(none, ember.bool)
    check_both(lambda a: a[gn if a.is_cuda else cn], [x], msg="empty result")
    check_both(lambda a: a[ember.tensor(True, device=a.device)], [x], msg="0-d True")
    check_both(lambda a: a[False], [x], msg="False")
    for dtype in (ember.float32, ember.float16, ember.int64, ember.bool):
        c, g = pair(x, dtype)
        c[cm] = 1
        g[gm] = 1
        same(g, c, f"x[mask] = 1 ({dtype})")
    c, g = pair(x)
    values = ember.tensor(np.arange(int(mask.sum()) * 3, dtype=np.float32).reshape(-1, 3))
    c[cm] = values
    g[gm] = values.cuda()
    same(g, c, "x[mask] = tensor")
    # uint8 masks index as bool masks
    c, g = pair(x)
    same(g[gm.to(ember.uint8)], c[cm.to(ember.uint8)], "uint8 mask")


# ---- advanced indexing -----------------------------------------------------------------------

KEYS = [
    ("list", lambda L: [3, 0, -1, 3]),
    ("tensor_2d", lambda L: L([[0, 1], [3, -4]])),
    ("adjacent", lambda L: (slice(None), L([0, 4, -1]), L([2, 2, 0]))),
    ("nonadjacent", lambda L: (L([0, 3]), slice(1, 4), L([[2], [0]]))),
    ("broadcast", lambda L: (L([[0], [2]]), L([1, 4, 0]))),
    ("three", lambda L: (L([1, 0]), L([4, 4]), L([-1, 0]))),
    ("int_and_tensor", lambda L: (slice(None), 1, L([0, 2, 2]))),
    ("0d_tensor", lambda L: (L(2), slice(0, 2))),
]


def on(device):
    return lambda v: ember.tensor(np.asarray(v, dtype=np.int64), device=device)


@pytest.mark.parametrize("name,key", KEYS, ids=[k[0] for k in KEYS])
def test_getitem(name, key):
    x = ints((4, 5, 3), 34)
    for dtype in (ember.float32, ember.bfloat16, ember.int64, ember.bool):
        check_both(lambda a: a[key(on(a.device))], [x], dtype, msg=f"{name} {dtype}")
    check_both(lambda a: a[key(on(a.device))], [x], grad_of=(0,), msg=f"{name} grad")
    check_both(lambda a: a.permute(2, 0, 1)[key(on(a.device))], [x.transpose(1, 2, 0).copy()],
               msg=f"{name} non-contiguous")


def test_cpu_indices_on_a_gpu_tensor_are_moved():
    cx, gx = pair(ints((4, 5), 35))
    idx = ember.tensor([3, -1, 0])
    same(gx[idx], cx[idx], "CPU index")
    mask = ember.tensor(ints((4,), 36, 0, 2).astype(bool))
    same(gx[mask], cx[mask], "CPU mask")
    gx[idx, 1] = ember.tensor(5.0)
    cx[idx, 1] = ember.tensor(5.0)
    same(gx, cx, "CPU index, 0-d CPU value")


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16, ember.bfloat16, ember.int64,
                                   ember.int32])
def test_index_put_accumulate_duplicates(dtype):
    x = ints((4, 3), 37)
    rows = np.array([0, 2, 0, 0, -1, 2])
    cols = np.array([1, 1, 1, 2, 0, 1])
    v = ints((6,), 38)
    cx, gx = pair(x, dtype)
    cv, gv = pair(v, dtype)
    cx.index_put_((ember.tensor(rows), ember.tensor(cols)), cv, accumulate=True)
    gx.index_put_((ember.tensor(rows).cuda(), ember.tensor(cols).cuda()), gv, accumulate=True)
    same(gx, cx, "accumulate")
    same(ember.index_put(gx, (ember.tensor(rows).cuda(),), gv[0], accumulate=True),
         ember.index_put(cx, (ember.tensor(rows),), cv[0], accumulate=True), "broadcast value, accumulate")


def test_index_put_without_accumulate_and_grads():
    x = ints((5, 4), 39)
    rows = np.array([4, 0, -2])
    check_both(lambda a, v: ember.index_put(a, (on(a.device)(rows),), v), [x, ints((3, 4), 40)], grad_of=(0, 1),
               msg="index_put")
    check_both(lambda a, v: ember.index_put(a, (on(a.device)(rows), on(a.device)([1, 1, 3])), v),
               [x, ints((3,), 41)], grad_of=(0, 1), msg="index_put two indices")
    check_both(lambda a, v: ember.index_put(a, (on(a.device)([1, 1, 3]),), v, accumulate=True),
               [x, ints((3, 4), 42)], grad_of=(0, 1), msg="index_put accumulate grads")

    def setitem(a, v):
        y = a * 1
        y[on(a.device)([0, 3]), 1:3] = v
        return y
    check_both(setitem, [x, ints((2, 2), 43)], grad_of=(0, 1), msg="setitem grads")
    cx, gx = pair(x, ember.bool)
    cx[ember.tensor([1, 3])] = True
    gx[ember.tensor([1, 3]).cuda()] = True
    same(gx, cx, "bool setitem")
    cx, gx = pair(x, ember.bool)
    cx.index_put_((ember.tensor([1, 1]),), ember.tensor(True), accumulate=True)
    gx.index_put_((ember.tensor([1, 1]).cuda(),), ember.tensor(True).cuda(), accumulate=True)
    same(gx, cx, "bool accumulate (logical or)")


# ---- errors ----------------------------------------------------------------------------------

def bounds_error(fn, cpu_args, gpu_args):
    e = same_error(fn, cpu_args, gpu_args)
    assert "out of bounds" in str(e), str(e)
    return e


def test_out_of_range_indices_raise_like_the_cpu():
    cx, gx = pair(ints((3, 4), 44))
    for bad in ([0, 4, 1], [-1], [2, 9, -7]):
        ci, gi = index_pair(bad)
        assert isinstance(bounds_error(lambda x, i: x.index_select(1, i), [cx, ci], [gx, gi]), IndexError)
        bounds_error(lambda x, i: x.index_add(1, i, ember.ones(3, len(bad), device=x.device)), [cx, ci], [gx, gi])
    for bad in ([0, 4, 1], [-5], [2, 9, -7]):  # negative indices count from the end here
        ci, gi = index_pair(bad)
        e = bounds_error(lambda x, i: x[:, i], [cx, ci], [gx, gi])
        assert isinstance(e, IndexError) and "out of bounds" in str(e)
        bounds_error(lambda x, i: x[:, i], [cx, ci], [gx, ci])  # a CPU index for a GPU tensor: checked on the CPU
        put = lambda x, i: x.index_put_((None, i), ember.tensor(1.0, device=x.device))  # noqa: E731
        assert "out of bounds" in str(bounds_error(put, [cx, ci], [gx, gi]))
    ci, gi = index_pair([[0, 1, 5, 2]])
    assert type(bounds_error(lambda x, i: x.gather(0, i), [cx, ci], [gx, gi])) is RuntimeError
    bounds_error(lambda x, i: x.scatter(0, i, 1.0), [cx, ci], [gx, gi])
    bounds_error(lambda x, i: x.scatter_add(0, i, x[:1]), [cx, ci], [gx, gi])
    ci, gi = index_pair([[0, -1, 0, 0]])
    bounds_error(lambda x, i: x.gather(0, i), [cx, ci], [gx, gi])
    ci, gi = index_pair([-4, 0])
    bounds_error(lambda x, i: x[i], [cx, ci], [gx, gi])
    ci, gi = index_pair([[0], [3]])
    bounds_error(lambda x, i: x.take_along_dim(i, 0), [cx, ci], [gx, gi])


def test_mixed_devices_raise_runtime_error():
    g = ember.zeros(3, 4, device="cuda")
    c = ember.zeros(3, 4)
    ci = ember.tensor([[0, 1, 2, 0]])
    for op, fn in [("index_select", lambda: g.index_select(0, ci[0])),
                   ("gather", lambda: g.gather(0, ci)),
                   ("scatter", lambda: g.scatter(0, ci, c[:1])),
                   ("scatter_add", lambda: g.scatter_add(0, ci.cuda(), c)),
                   ("index_add", lambda: g.index_add(0, ci[0, :3].cuda(), c)),
                   ("cat", lambda: ember.cat([g, c])),
                   ("index_put_", lambda: g.index_put_((ci[0].cuda(),), c))]:
        with pytest.raises(RuntimeError, match=op) as e:
            fn()
        assert "cpu" in str(e.value) and "cuda" in str(e.value), str(e.value)
    with pytest.raises(RuntimeError, match="index"):
        c[ci[0].cuda()]


# ---- cat, flip, tril/triu ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL)
def test_cat(dtype):
    a, b, c = ints((2, 3, 4), 45), ints((2, 1, 4), 46), ints((2, 0, 4), 47)
    check_both(lambda x, y, z: ember.cat([x, y, z], 1), [a, b, c], dtype)
    check_both(lambda x, y: ember.cat([x, y.transpose(0, 2).contiguous().transpose(0, 2)], 1), [a, b], dtype,
               msg="non-contiguous input")
    check_both(lambda x, y: ember.cat([x, ember.zeros(0, dtype=x.dtype, device=x.device), x], -1), [a, b], dtype,
               msg="skips 1-D empty")
    check_both(lambda x, y: ember.stack([x, x.flip(1)], 0), [a, b], dtype, msg="stack")


def test_cat_promotes_and_grads():
    a, b = ints((3, 2), 48), ints((3, 5), 49)
    cpu = ember.cat([ember.tensor(a).to(ember.int64), ember.tensor(b).to(ember.float16)], 1)
    gpu = ember.cat([ember.tensor(a).to(ember.int64).cuda(), ember.tensor(b).to(ember.float16).cuda()], 1)
    same(gpu, cpu, "int64 + float16 -> float16")
    check_both(lambda x, y: ember.cat([x, y, x], 1), [a, b], grad_of=(0, 1), msg="cat grads")
    check_both(lambda x: x.roll(2, 1), [b], grad_of=(0,), msg="roll")
    check_both(lambda x, y: ember.cat([x, y], 1).t(), [a, b], grad_of=(0, 1), msg="cat then view")


@pytest.mark.parametrize("dtype", ALL)
def test_flip(dtype):
    x = ints((3, 4, 5), 50)
    for dims in [(0,), (-1,), (0, 2), (0, 1, 2)]:
        check_both(lambda a: a.flip(dims), [x], dtype, msg=f"flip {dims}")
        check_both(lambda a: a.transpose(0, 2).flip(dims), [x], dtype, msg=f"flip {dims} transposed")
    check_both(lambda a: a[:, ::2].flip(1), [x], dtype, msg="flip sliced")


def test_flip_grad():
    check_both(lambda a: ember.flip(a, (0, -1)), [ints((3, 4), 51)], grad_of=(0,))


@pytest.mark.parametrize("dtype", ALL)
def test_tril_triu(dtype):
    x = ints((2, 4, 6), 52)
    for k in (-2, 0, 1, 7):
        check_both(lambda a: a.tril(k), [x], dtype, msg=f"tril {k}")
        check_both(lambda a: a.triu(k), [x], dtype, msg=f"triu {k}")
        check_both(lambda a: a.transpose(1, 2).tril(k), [x], dtype, msg=f"tril {k} transposed")
        check_both(lambda a: ember.triu(a[:, 1:, ::2], k), [x], dtype, msg=f"triu {k} sliced")


def test_tril_grad_and_causal_mask():
    check_both(lambda a: a.tril(-1), [ints((5, 5), 53)], grad_of=(0,))
    check_both(lambda a: ember.triu(a, 1), [ints((3, 4, 5), 54)], grad_of=(0,))
    L, S = 7, 9
    mask = ember.ones(L, S, dtype=ember.bool, device="cuda").tril()
    same(mask, ember.ones(L, S, dtype=ember.bool).tril(), "causal mask")
    scores = ember.zeros(L, S, device="cuda").masked_fill(~mask, float("-inf"))
    assert np.isinf(as_np(scores)[0, 1]) and as_np(scores)[1, 1] == 0


# ---- callers of the index ops ------------------------------------------------------------------

def test_cross_entropy_label_smoothing_with_weights_and_probability_targets():
    F = ember.nn.functional
    logits = np.random.default_rng(55).standard_normal((6, 5))
    target = np.array([0, 4, 2, -100, 2, 1])
    weight = np.array([1.0, 2.0, 0.5, 1.5, 3.0])
    for reduction in ("mean", "sum", "none"):
        cl, gl = pair(logits, grad=True)
        ct, gt = index_pair(target)
        cw, gw = pair(weight)
        out_c = F.cross_entropy(cl, ct, weight=cw, reduction=reduction, label_smoothing=0.2)
        out_g = F.cross_entropy(gl, gt, weight=gw, reduction=reduction, label_smoothing=0.2)
        np.testing.assert_allclose(as_np(out_g), as_np(out_c), rtol=1e-5, atol=1e-6)
        out_c.sum().backward()
        out_g.sum().backward()
        np.testing.assert_allclose(as_np(gl.grad), as_np(cl.grad), rtol=1e-5, atol=1e-6)
    probs = np.random.default_rng(56).random((6, 5))
    probs /= probs.sum(1, keepdims=True)
    cl, gl = pair(logits, grad=True)
    cp, gp = pair(probs)
    cw, gw = pair(weight)
    out_c = F.cross_entropy(cl, cp, weight=cw, label_smoothing=0.1)
    out_g = F.cross_entropy(gl, gp, weight=gw, label_smoothing=0.1)
    np.testing.assert_allclose(as_np(out_g), as_np(out_c), rtol=1e-5, atol=1e-6)
    out_c.backward()
    out_g.backward()
    np.testing.assert_allclose(as_np(gl.grad), as_np(cl.grad), rtol=1e-5, atol=1e-6)


def test_embedding_scale_grad_by_freq():
    F = ember.nn.functional
    idx = np.array([[1, 3, 1], [0, 1, 3]])
    cw, gw = pair(ints((5, 4), 57), grad=True)
    ci, gi = index_pair(idx)
    out_c = F.embedding(ci, cw, scale_grad_by_freq=True)
    out_g = F.embedding(gi, gw, scale_grad_by_freq=True)
    same(out_g, out_c, "embedding")
    out_c.sum().backward()
    out_g.sum().backward()
    np.testing.assert_allclose(as_np(gw.grad), as_np(cw.grad), rtol=1e-6)


def test_large_tensors_take_64_bit_offsets():
    n = 2 ** 31 + 2 ** 29  # > 2^31 elements; 16 rows of n / 16
    free, _ = ember.cuda.mem_get_info()
    if free < 4 * n:
        pytest.skip(f"needs {4 * n} free bytes on the GPU, has {free}")
    row = n // 16
    x = ember.zeros(n, dtype=ember.uint8, device="cuda")
    ends = ember.tensor([r * row + row - 1 for r in range(16)]).cuda()
    x[ends] = ember.arange(1, 17).to(ember.uint8).cuda()
    expected = list(range(1, 17))
    y = x.flip(0)  # n elements: 64-bit linear indices
    assert y[n - 1 - ends].cpu().tolist() == expected
    del y
    rows = x.view(16, row)
    # offsets up to 15 * row > 2^31 in a strided copy, a gather and an index_select
    assert rows[:, -2:].flip(0)[:, 1].cpu().tolist() == expected[::-1]
    assert ember.cat([rows[:, -1:], rows[:, :1]], 1)[:, 0].cpu().tolist() == expected
    assert rows.gather(1, ember.full((16, 1), row - 1, dtype=ember.int64, device="cuda")).cpu().reshape(-1).tolist() \
        == expected
    assert rows.index_select(1, ember.tensor([row - 1]).cuda()).cpu().reshape(-1).tolist() == expected
    assert ember.nonzero(x).cpu().reshape(-1).tolist() == ends.cpu().tolist()
