"""In-place variants and shape/index methods added in python/ember/_tensor_api_extra.py
and _tensor_api_shape.py: every in-place op against its out-of-place op (and
torch's in-place op where importable) on contiguous and view targets, with
data_ptr, version, autograd and leaf checks; t_/transpose_/squeeze_/unsqueeze_/
swapdims_; broadcast_to, argwhere, ravel, swapdims, take, put(_), diagflat,
diagonal_scatter, index_reduce(_), combinations, chain_matmul, split_with_sizes,
narrow_copy, empty_strided, the real-tensor conjugation no-ops and predicates."""
import itertools

import numpy as np
import pytest

import ember
from ember._tensor_api_extra import _INPLACE_OF
from harness import OpCase, assert_close, make, table_tests, torch

FLOATS = (np.float32, np.float64)
RNG = np.random.default_rng(5)

# name_ -> (numpy reference of the out-of-place op, domain) for unary rows of CASES.
UNARY = {
    "acos_": (np.arccos, (-0.9, 0.9)), "arcsin_": (np.arcsin, (-0.9, 0.9)), "asinh_": (np.arcsinh, None),
    "arctan_": (np.arctan, None), "atanh_": (np.arctanh, (-0.9, 0.9)), "acosh_": (np.arccosh, (1.1, 3.0)),
    "cosh_": (np.cosh, None), "sinh_": (np.sinh, None), "tan_": (np.tan, (-1.2, 1.2)), "exp2_": (np.exp2, None),
    "log2_": (np.log2, (0.1, 3.0)), "log10_": (np.log10, (0.1, 3.0)), "trunc_": (np.trunc, None),
    "fix_": (np.fix, None), "frac_": (lambda a: a - np.trunc(a), None), "sgn_": (np.sign, None),
    "deg2rad_": (np.deg2rad, None), "rad2deg_": (np.rad2deg, None), "sinc_": (np.sinc, None),
}
BINARY = {
    "hypot_": np.hypot, "atan2_": np.arctan2, "arctan2_": np.arctan2, "copysign_": np.copysign, "fmod_": np.fmod,
    "true_divide_": np.true_divide, "xlogy_": lambda a, b: a * np.log(b),
}


def _unary_row(name, reference, domain):
    return OpCase(name, lambda a: (a * 1).__getattribute__(name)(), lambda a: reference(a).astype(a.dtype),
                  [[(3, 4)], [()]], dtypes=FLOATS, domain=domain, rtol=1e-5, atol=1e-6,
                  grad=name not in ("trunc_", "fix_", "sgn_"))


def _binary_row(name, reference):
    return OpCase(name, lambda a, b: (a * 1).__getattribute__(name)(b), lambda a, b: reference(a, b).astype(a.dtype),
                  [[(3, 4), (4,)], [(2, 3), (2, 3)]], dtypes=FLOATS, domain=(0.2, 2.0), rtol=1e-5)


def np_take(a, index):
    return np.take(a.ravel(), index)


def np_put(a, index, values, accumulate=False):
    out = a.copy().ravel()
    if accumulate:
        np.add.at(out, index, values)
    else:
        out[index] = values
    return out.reshape(a.shape)


def np_diagonal_scatter(a, src, offset, d1, d2):
    out = a.copy()
    view = np.diagonal(out, offset, d1, d2)
    view.setflags(write=True)
    view[...] = src
    return out


def np_index_reduce(a, dim, index, src, reduce, include_self=True):
    out = np.moveaxis(a.copy(), dim, 0)
    s = np.moveaxis(src, dim, 0)
    groups = {}
    for i, t in enumerate(index):
        groups.setdefault(t, []).append(s[i])
    for t, parts in groups.items():
        stack = np.stack(([out[t]] if include_self else []) + parts)
        out[t] = {"prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce](stack, axis=0)
    return np.moveaxis(out, 0, dim)


def np_combinations(a, r, with_replacement=False):
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(a.shape[0]), r))
    return a[np.array(rows, dtype=np.int64).reshape(len(rows), r)]


IDX = np.array([[0, -1], [5, 10]])  # distinct positions: put's writes do not collide
SLOTS = np.array([0, 2, 0, 0, 1])

CASES = [_unary_row(n, *UNARY[n]) for n in UNARY] + [_binary_row(n, BINARY[n]) for n in BINARY] + [
    OpCase("cumsum_", lambda a: (a * 1).cumsum_(1), lambda a: np.cumsum(a, 1), [[(3, 4)]], dtypes=FLOATS, rtol=1e-5),
    OpCase("tril_", lambda a: (a * 1).tril_(-1), lambda a: np.tril(a, -1), [[(3, 4)], [(2, 3, 3)]], dtypes=FLOATS),
    OpCase("eq_", lambda a, b: (a * 1).eq_(b), lambda a, b: (a == b).astype(a.dtype), [[(3, 4), (4,)]],
           dtypes=(np.float32, np.int64), domain=(0, 2), grad=False),
    OpCase("greater_equal_", lambda a, b: (a * 1).greater_equal_(b), lambda a, b: (a >= b).astype(a.dtype),
           [[(3, 4), (4,)]], dtypes=(np.float32, np.int64), grad=False),
    OpCase("bitwise_xor_", lambda a, b: (a * 1).bitwise_xor_(b), np.bitwise_xor, [[(3, 4), (4,)]], dtypes=(np.int64,),
           grad=False),
    OpCase("gcd_", lambda a, b: (a * 1).gcd_(b), np.gcd, [[(3, 4), (4,)]], dtypes=(np.int64,), grad=False,
           domain=(-20, 20)),
    OpCase("broadcast_to", lambda a: ember.broadcast_to(a, (2, 3, 4)), lambda a: np.broadcast_to(a, (2, 3, 4)),
           [[(3, 4)], [(1, 4)], [()]], dtypes=(np.float32, np.int64),
           torch_fn=lambda a: torch.broadcast_to(a, (2, 3, 4))),
    OpCase("argwhere", lambda a: ember.argwhere(a), np.argwhere, [[(3, 4)], [(5,)]], dtypes=(np.int64, np.bool_),
           grad=False, domain=(-1, 2), torch_fn=lambda a: torch.argwhere(a)),
    OpCase("ravel", lambda a: a.ravel(), np.ravel, [[(3, 4)], [()], [(2, 0)]], dtypes=(np.float32, np.int64)),
    OpCase("swapdims", lambda a: ember.swapdims(a, 0, -1), lambda a: np.swapaxes(a, 0, -1), [[(3, 4)], [(2, 3, 4)]]),
    OpCase("take", lambda a: ember.take(a, ember.tensor(IDX, device=a.device)), lambda a: np_take(a, IDX), [[(3, 4)]],
           dtypes=(np.float32, np.int64), torch_fn=lambda a: torch.take(a, torch.from_numpy(IDX))),
    OpCase("put", lambda a, v: a.put(ember.tensor(IDX, device=a.device), v),
           lambda a, v: np_put(a, IDX.ravel(), v.ravel()),
           [[(3, 4), (2, 2)]], torch_fn=lambda a, v: a.put(torch.from_numpy(IDX), v)),
    OpCase("put_accumulate", lambda a, v: a.put(ember.tensor([1, 1, 3], device=a.device), v, accumulate=True),
           lambda a, v: np_put(a, [1, 1, 3], v, accumulate=True), [[(2, 3), (3,)]], dtypes=FLOATS),
    OpCase("diagflat", lambda a: ember.diagflat(a, 1), lambda a: np.diagflat(a, 1), [[(2, 2)], [(3,)], [()]],
           dtypes=(np.float32, np.int64), torch_fn=lambda a: torch.diagflat(a, 1)),
    OpCase("diagonal_scatter", lambda a, s: ember.diagonal_scatter(a, s, -1),
           lambda a, s: np_diagonal_scatter(a, s, -1, 0, 1), [[(4, 3), (3,)]], dtypes=FLOATS,
           torch_fn=lambda a, s: torch.diagonal_scatter(a, s, -1)),
    OpCase("diagonal_scatter_3d", lambda a, s: a.diagonal_scatter(s, 1, 2, 0),
           lambda a, s: np_diagonal_scatter(a, s, 1, 2, 0), [[(3, 2, 4), (2, 2)]]),
    OpCase("index_reduce_prod", lambda a, s: a.index_reduce(1, ember.tensor(SLOTS, device=a.device), s, "prod"),
           lambda a, s: np_index_reduce(a, 1, SLOTS, s, "prod"), [[(3, 4), (3, 5)]], dtypes=FLOATS, rtol=1e-5,
           torch_fn=lambda a, s: a.index_reduce(1, torch.from_numpy(SLOTS), s, "prod")),
    OpCase("index_reduce_prod_exclude_self",
           lambda a, s: a.index_reduce(0, ember.tensor(SLOTS, device=a.device), s, "prod", include_self=False),
           lambda a, s: np_index_reduce(a, 0, SLOTS, s, "prod", False), [[(3, 2), (5, 2)]], rtol=1e-5),
    OpCase("index_reduce_mean", lambda a, s: ember.index_reduce(a, 1, ember.tensor(SLOTS, device=a.device), s, "mean"),
           lambda a, s: np_index_reduce(a, 1, SLOTS, s, "mean"), [[(3, 4), (3, 5)]], dtypes=FLOATS, rtol=1e-5),
    OpCase("index_reduce_amax",
           lambda a, s: a.index_reduce(1, ember.tensor(SLOTS, device=a.device), s, "amax", include_self=False),
           lambda a, s: np_index_reduce(a, 1, SLOTS, s, "amax", False), [[(2, 3), (2, 5)]],
           dtypes=(np.float32, np.int64)),
    OpCase("index_reduce_amin", lambda a, s: a.index_reduce(1, ember.tensor(SLOTS, device=a.device), s, "amin"),
           lambda a, s: np_index_reduce(a, 1, SLOTS, s, "amin"), [[(2, 3), (2, 5)]], dtypes=(np.float32, np.int64)),
    OpCase("combinations", lambda a: ember.combinations(a), lambda a: np_combinations(a, 2), [[(4,)], [(1,)]],
           dtypes=(np.float32, np.int64), torch_fn=lambda a: torch.combinations(a)),
    OpCase("combinations_r3_replacement", lambda a: ember.combinations(a, 3, True),
           lambda a: np_combinations(a, 3, True), [[(3,)]], torch_fn=lambda a: torch.combinations(a, 3, True)),
    OpCase("chain_matmul", lambda a, b, c: ember.chain_matmul(a, b, c), lambda a, b, c: a @ b @ c,
           [[(2, 3), (3, 4), (4, 2)]], dtypes=FLOATS, rtol=1e-4, atol=1e-5),
    OpCase("narrow_copy", lambda a: a.narrow_copy(1, 1, 2), lambda a: a[:, 1:3], [[(3, 4)]],
           dtypes=(np.float32, np.int64), torch_fn=lambda a: a.narrow_copy(1, 1, 2)),
    OpCase("adjoint", lambda a: a.adjoint(), lambda a: np.swapaxes(a, -1, -2), [[(3, 4)], [(2, 3, 4)]]),
    OpCase("mH", lambda a: a.mH, lambda a: np.swapaxes(a, -1, -2), [[(2, 3, 4)]]),
    OpCase("H", lambda a: a.H, lambda a: a.T, [[(3, 4)]]),
]

test_forward, test_gradcheck = table_tests(CASES)


# ---- every in-place op: in place, on views, versions, autograd

def _inputs(name):
    """(self array, extra args as arrays or values) for an in-place op of _INPLACE_OF."""
    ints = name in ("gcd_", "lcm_", "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_not_")
    if ints:
        base = RNG.integers(1, 30, (3, 4))
    elif name in ("acosh_", "arccosh_"):
        base = RNG.uniform(1.1, 3.0, (3, 4))
    elif name == "mvlgamma_":
        base = RNG.uniform(1.5, 3.0, (3, 4))
    else:
        base = RNG.uniform(0.1, 0.9, (3, 4))
    other = RNG.integers(1, 30, (4,)) if ints else RNG.uniform(0.1, 0.9, (4,))
    unary = name[:-1] in ("acos", "arccos", "acosh", "arccosh", "asin", "arcsin", "asinh", "arcsinh", "atan",
                          "arctan", "atanh", "arctanh", "cosh", "sinh", "tan", "erfc", "erfinv", "exp2", "log2",
                          "log10", "lgamma", "digamma", "frac", "fix", "trunc", "sgn", "sinc", "deg2rad", "rad2deg",
                          "i0", "logical_not", "bitwise_not")
    special = {"cumsum_": [1], "cumprod_": [0], "tril_": [], "triu_": [1], "renorm_": [2, 0, 1.0],
               "mvlgamma_": [2], "ldexp_": [RNG.integers(-3, 4, (4,))],
               "addmm_": [RNG.uniform(-1, 1, (3, 2)), RNG.uniform(-1, 1, (2, 4))]}
    if name in special:
        return base, special[name]
    return base, [] if unary else [other]


def _as(lib, value):
    """An array argument as a tensor of `lib`: ember's on the test device, next to make()'s self."""
    if isinstance(value, np.ndarray):
        return make(value) if lib is ember else lib.tensor(value.copy())
    return value


@pytest.mark.parametrize("name", sorted(_INPLACE_OF))
def test_inplace_matches_out_of_place_and_torch(name):
    base, extra = _inputs(name)
    args = [_as(ember, v) for v in extra]
    expected = getattr(ember.Tensor, _INPLACE_OF[name])(make(base), *args)
    # contiguous self
    x = make(base)
    ptr, version = x.data_ptr(), x._version
    assert getattr(x, name)(*args) is x
    assert x.data_ptr() == ptr and x._version == version + 1, name
    assert_close(x, expected.to(x.dtype), 1e-6, 1e-7, msg=name)
    # a non-contiguous view: the write lands in the base tensor
    big = make(np.zeros((4, 3), dtype=base.dtype))
    view = big.t()[:, :]  # (3, 4), strides (1, 3)
    view.copy_(make(base))
    getattr(view, name)(*args)
    assert_close(big.t(), expected.to(view.dtype), 1e-6, 1e-7, msg=f"{name} on a transposed view")
    if torch is not None and hasattr(torch.Tensor, name):
        t = torch.tensor(base.copy())
        getattr(t, name)(*[_as(torch, v) for v in extra])
        assert_close(x, t.numpy(), 1e-5, 1e-6, msg=f"{name} vs torch")


DIFFERENTIABLE = sorted(n for n in _INPLACE_OF if n[:-1] not in (
    "fix", "trunc", "sgn", "heaviside", "gcd", "lcm", "nextafter", "eq", "ne", "not_equal", "lt", "less", "le",
    "less_equal", "gt", "greater", "ge", "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"))


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_inplace_gradients(name):
    base, extra = _inputs(name)

    def fn(x, *tensors):
        it = iter(tensors)
        args = [next(it) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else _as(ember, v) for v in extra]
        y = x * 1
        target = y.t().t() if name == "addmm_" else y[1:]  # a view of a non-leaf (addmm_'s shapes need all rows)
        getattr(target, name)(*args)
        return y
    float_extra = [make(v, requires_grad=True) for v in extra if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
    assert ember.autograd.gradcheck(fn, [make(base, requires_grad=True)] + float_extra), name


def test_inplace_autograd_rules():
    leaf = make(np.array([0.1, 0.2, 0.3]), requires_grad=True)
    with pytest.raises(RuntimeError, match="acos_: a leaf Variable that requires grad is being used in an in-place"):
        leaf.acos_()
    with pytest.raises(RuntimeError, match="acos_: a view of a leaf Variable that requires grad"):
        leaf[1:].acos_()
    with ember.no_grad():
        leaf.tan_()  # allowed, as in torch
    assert leaf.is_leaf and leaf.requires_grad
    # self without grad, other with: self joins the graph
    b = make(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    a = ember.ones(3, dtype=ember.float64, device=b.device)
    a.atan2_(b)
    assert a.requires_grad and a.grad_fn is not None
    a.sum().backward()
    assert_close(b.grad, -1.0 / (1.0 + np.array([1.0, 2.0, 3.0]) ** 2))
    # results that do not cast back, shapes that do not fit
    with pytest.raises(RuntimeError, match="sin_|acos_: result type .*float32.* can't be cast to the desired output "
                                           "type .*int64"):
        ember.arange(3).acos_()
    with pytest.raises(RuntimeError,
                       match=r"hypot_: output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        ember.ones(3).hypot_(ember.ones(2, 3))
    with pytest.raises(RuntimeError, match="float_power_: the base given to float_power_ has dtype"):
        ember.ones(3).float_power_(2)
    d = ember.full((3,), 2.0, dtype=ember.float64).float_power_(ember.tensor([1.0, 2.0, 3.0]))
    assert d.tolist() == [2.0, 4.0, 8.0]
    p = ember.tensor([0.5, 1.5])
    assert_close(p.clone().polygamma_(1), ember.polygamma(1, p))


def test_inplace_returns_the_callers_object():
    x = ember.ones(3)
    assert x.exp2_() is x and x.eq_(2.0) is x and x.cumsum_(0) is x and x.t_() is x


def test_top_level_inplace_functions():
    x = ember.tensor([0.25, 0.5])
    assert ember.acos_(x) is x
    assert_close(x, np.arccos([0.25, 0.5]).astype(np.float32))
    y = ember.tensor([-2.0, 0.5, 3.0])
    ember.clamp_(y, -1, 1)
    assert y.tolist() == [-1.0, 0.5, 1.0]
    ember.clamp_min_(y, 0.0)
    ember.clip_(y, max=0.75)
    assert y.tolist() == [0.0, 0.5, 0.75]
    z = ember.ones(2)
    ember.zero_(z)
    ember.fill_(z, 3.0)
    assert z.tolist() == [3.0, 3.0]
    for name in ("gcd_", "lcm_", "ldexp_", "xlogy_", "i0_", "sinc_", "deg2rad_", "trunc_", "log2_", "round_"):
        assert callable(getattr(ember, name)), name


# ---- in-place shape changes

def test_shape_changing_inplace_ops():
    x = ember.arange(6.0).reshape(2, 3)
    ptr, version = x.data_ptr(), x._version
    assert x.t_() is x
    assert x.shape == (3, 2) and x.stride() == (1, 3) and x.data_ptr() == ptr and x._version == version + 1
    assert x.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    x.transpose_(0, 1)
    assert x.shape == (2, 3) and x.is_contiguous()
    x.unsqueeze_(1)
    assert x.shape == (2, 1, 3)
    x.unsqueeze_(-1)
    assert x.shape == (2, 1, 3, 1)
    x.squeeze_(1)
    assert x.shape == (2, 3, 1)
    x.squeeze_()
    assert x.shape == (2, 3)
    x.swapdims_(0, 1)
    assert x.shape == (3, 2)
    x.swapaxes_(0, 1)
    assert x.shape == (2, 3) and x.data_ptr() == ptr
    v = ember.arange(12.0).reshape(3, 4)[1:]  # a view: its own geometry changes, the memory stays shared
    v.t_()
    v[0, 0] = 100.0
    assert v.shape == (4, 2) and v._version > 0
    with pytest.raises(RuntimeError, match="t_: expects a tensor with <= 2 dimensions"):
        ember.ones(2, 2, 2).t_()
    leaf = ember.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="transpose_: a leaf Variable that requires grad"):
        leaf.transpose_(0, 1)
    with ember.no_grad():
        leaf.t_()
    assert leaf.shape == (3, 2)
    (leaf * 2).sum().backward()
    assert leaf.grad.shape == (3, 2)
    with pytest.raises(RuntimeError, match="unsqueeze_: ember cannot change the shape in place of a non-leaf tensor"):
        doubled = leaf * 2
        with ember.no_grad():
            doubled.unsqueeze_(0)
    view = leaf[1:]
    with pytest.raises(RuntimeError, match="t_: a view of a leaf Variable that requires grad"):
        view.t_()
    assert view.shape == (2, 2)  # left as it was


def test_shape_changing_inplace_ops_record_autograd():
    a = RNG.standard_normal((3, 4))
    w = np.arange(12.0).reshape(4, 3)
    x = make(a, requires_grad=True)
    y = x * 2
    assert y.t_() is y and y.shape == (4, 3) and y.grad_fn is not None
    b = x * 3
    v = b[1:]  # a view of a non-leaf: the write-back goes through b
    v.unsqueeze_(0).squeeze_(0).transpose_(0, 1)
    assert v.shape == (4, 2) and b._version == 3
    ((y * make(w)).sum() + (v * make(w[:, :2])).sum() + (b * b).sum()).backward()
    expected = 2 * w.T + 18 * a
    expected[1:] += 3 * w[:, :2].T
    assert_close(x.grad, expected, 1e-12, 1e-12)

    def fn(t):
        y = t * 1
        y[1:].t_()  # the view is reshaped, y keeps its shape
        z = y[1:]
        z.t_()
        z.unsqueeze_(-1).swapdims_(0, 2).swapaxes_(1, 2)
        return z * ember.arange(8.0, dtype=t.dtype, device=t.device).reshape(1, 4, 2)
    assert ember.autograd.gradcheck(fn, [make(a, requires_grad=True)])


def test_shape_change_invalidates_saved_tensors():
    p = ember.ones(2, 3, requires_grad=True)
    q = ember.arange(6.0).reshape(2, 3)
    out = p * q
    q.t_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_squeeze_dims_tuple():
    x = ember.zeros(1, 2, 1, 3)
    x.squeeze_((0, 2))
    assert x.shape == (2, 3)
    y = ember.zeros(1, 2, 1)
    y.squeeze_([0, 1])  # a dim that is not 1 stays
    assert y.shape == (2, 1)


# ---- shape and index functions beyond the table

def test_put_inplace_take_and_errors():
    x = ember.zeros(2, 3)
    ptr = x.data_ptr()
    assert x.put_(ember.tensor([0, -1]), ember.tensor([1.0, 2.0])) is x
    assert x.data_ptr() == ptr and x.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]]
    t = ember.zeros(3, 2).t()  # non-contiguous self: flat positions are row-major in self's shape
    t.put_(ember.tensor([1, 3]), ember.tensor([5.0, 6.0]))
    assert t.tolist() == [[0.0, 5.0, 0.0], [6.0, 0.0, 0.0]]
    s = ember.tensor(1.0)
    s.put_(ember.tensor([0]), ember.tensor([4.0]), accumulate=True)
    assert s.item() == 5.0
    with pytest.raises(IndexError, match="put_\\(\\): out of range: tried to access index 7 on a tensor of 6 elements"):
        ember.zeros(2, 3).put_(ember.tensor([0, 7]), ember.tensor([1.0, 2.0]))
    with pytest.raises(IndexError, match="put_\\(\\): Expected source and index to have the same number of elements"):
        ember.zeros(6).put_(ember.tensor([0, 1]), ember.ones(3))
    with pytest.raises(RuntimeError, match="put_\\(\\): self and source expected to have the same dtype"):
        ember.zeros(6).put_(ember.tensor([0]), ember.ones(1, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="put_: a leaf Variable that requires grad"):
        ember.zeros(6, requires_grad=True).put_(ember.tensor([0]), ember.ones(1))
    with pytest.raises(IndexError, match="take\\(\\): out of range: tried to access index 6 on a tensor of 6"):
        ember.take(ember.zeros(2, 3), ember.tensor([6]))
    with pytest.raises(RuntimeError, match="take\\(\\): Expected a long tensor for index"):
        ember.take(ember.zeros(2, 3), ember.tensor([1], dtype=ember.int32))
    assert ember.take(ember.zeros(0), ember.tensor([], dtype=ember.int64)).shape == (0,)


def test_index_reduce_inplace_and_errors():
    x = ember.arange(4.0)
    ptr = x.data_ptr()
    x.index_reduce_(0, ember.tensor([0, 0]), ember.tensor([2.0, 3.0]), "prod", include_self=False)
    assert x.data_ptr() == ptr and x.tolist() == [6.0, 1.0, 2.0, 3.0]
    y = ember.arange(4)
    y.index_reduce_(0, ember.tensor([0, 0, 1]), ember.tensor([2, 3, 4]), "mean")
    if torch is not None:
        t = torch.arange(4).index_reduce_(0, torch.tensor([0, 0, 1]), torch.tensor([2, 3, 4]), "mean")
        assert y.tolist() == t.tolist()
    with pytest.raises(RuntimeError, match="index_reduce\\(\\): Expected reduce to be one of prod, mean, amax or amin"):
        x.index_reduce(0, ember.tensor([0]), ember.ones(1), "sum")
    with pytest.raises(RuntimeError, match="index_reduce_\\(\\): Number of indices \\(2\\) should be equal to"):
        x.index_reduce(0, ember.tensor([0, 1]), ember.ones(3), "prod")
    with pytest.raises(RuntimeError, match="index_reduce_\\(\\): Expected dtype int32/int64 for index"):
        x.index_reduce(0, ember.tensor([0.0]), ember.ones(1), "prod")
    leaf = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="index_reduce_: a leaf Variable"):
        leaf.index_reduce_(0, ember.tensor([0]), ember.ones(1), "amax")


def test_diagonal_scatter_combinations_chain_matmul_errors():
    with pytest.raises(RuntimeError, match="diagonal_scatter: expected src to have a size equal to the slice"):
        ember.diagonal_scatter(ember.zeros(3, 3), ember.ones(2))
    with pytest.raises(RuntimeError, match="combinations: Expect a 1D vector, but got shape \\[2, 2\\]"):
        ember.combinations(ember.ones(2, 2))
    assert ember.combinations(ember.tensor([1, 2]), r=3).shape == (0, 3)
    assert ember.combinations(ember.tensor([1, 2]), r=0).shape == (0,)
    with pytest.raises(RuntimeError, match="chain_matmul\\(\\): Expected one or more matrices"):
        ember.chain_matmul()
    with pytest.raises(RuntimeError, match="chain_matmul\\(\\): Tensor dimension is 1, expected 2"):
        ember.chain_matmul(ember.ones(2), ember.ones(2))
    single = ember.ones(2, 2)
    out = ember.chain_matmul(single)
    assert out.tolist() == single.tolist() and out.data_ptr() != single.data_ptr()


def test_splits_and_copies():
    x = ember.arange(10.0).reshape(2, 5)
    parts = ember.split_with_sizes(x, [2, 3], 1)
    assert isinstance(parts, tuple) and [p.shape for p in parts] == [(2, 2), (2, 3)]
    assert x.split_with_sizes([1, 1])[1].tolist() == [[5.0, 6.0, 7.0, 8.0, 9.0]]
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum exactly to 5"):
        x.split_with_sizes([2, 2], 1)
    assert [p.shape for p in ember.unsafe_split(x, 2, 1)] == [(2, 2), (2, 2), (2, 1)]
    assert [p.shape for p in x.unsafe_chunk(2, 1)] == [(2, 3), (2, 2)]
    assert [p.shape for p in ember.unsafe_split_with_sizes(x, [4, 1], 1)] == [(2, 4), (2, 1)]
    n = x.t().narrow_copy(0, 1, 2)
    assert n.is_contiguous() and n.tolist() == [[1.0, 6.0], [2.0, 7.0]]
    assert ember.ravel(ember.tensor(3.0)).shape == (1,)
    assert ember.broadcast_to(ember.ones(3), (2, -1)).shape == (2, 3)
    with pytest.raises(RuntimeError):
        ember.broadcast_to(ember.ones(3), (2, 4))


@pytest.mark.parametrize("size, stride", [((2, 3), (3, 1)), ((2, 3), (1, 2)), ((2, 3, 4), (12, 1, 3)),
                                          ((2, 3), (0, 1)), ((4,), (1,)), ((), ())])
def test_empty_strided(size, stride):
    t = ember.empty_strided(size, stride, dtype=ember.float64)
    assert t.shape == size and t.stride() == stride and t.dtype == ember.float64
    n = ember.ones(1, dtype=ember.int32).new_empty_strided(size, stride)
    assert n.stride() == stride and n.dtype == ember.int32
    if torch is not None:
        assert torch.empty_strided(size, stride).stride() == t.stride()


@pytest.mark.parametrize("size, stride", [((2, 3), (2, 1)), ((2, 3), (4, 1)), ((3, 2), (1, 5)), ((2, 0, 3), (9, 4, 2))])
def test_empty_strided_with_overlapping_or_gapped_strides(size, stride):
    t = ember.empty_strided(size, stride)
    assert t.shape == size and t.stride() == stride
    if torch is not None:
        assert torch.empty_strided(size, stride).stride() == t.stride()
    if 0 not in size:
        assert t.data_ptr() == t.as_strided((1,), (1,)).data_ptr()  # the buffer spans exactly the extent
        t.as_strided((1 + sum((n - 1) * st for n, st in zip(size, stride)),), (1,)).zero_()


def test_empty_strided_refuses_bad_arguments():
    with pytest.raises(RuntimeError, match="empty_strided: strides must be non-negative"):
        ember.empty_strided((2, 3), (-1, 1))
    with pytest.raises(RuntimeError, match="empty_strided: mismatch in length of strides and shape"):
        ember.empty_strided((2, 3), (1,))


def test_real_tensor_conjugation_and_predicates():
    x = ember.randn(2, 3)
    assert x.conj() is x and ember.resolve_conj(x) is x and x.resolve_neg() is x and ember.conj(x) is x
    c = ember.conj_physical(x)
    assert c.data_ptr() != x.data_ptr() and c.tolist() == x.tolist() and x.conj_physical_() is x
    assert not x.is_conj() and not ember.is_neg(x) and not x.is_complex() and not ember.is_complex(x)
    assert x.is_signed() and ember.ones(1, dtype=ember.int8).is_signed()
    assert not ember.ones(1, dtype=ember.uint8).is_signed() and not ember.ones(1, dtype=ember.bool).is_signed()
    assert ember.is_nonzero(ember.tensor([2])) and not ember.tensor(0.0).is_nonzero()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        ember.is_nonzero(ember.tensor([]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        ember.is_nonzero(ember.tensor([1, 2]))
    assert x.is_same_size(ember.zeros(2, 3)) and not ember.is_same_size(x, ember.zeros(3, 2))
    with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices \\(2-D tensors\\). Got 3-D"):
        ember.ones(2, 2, 2).H
    with pytest.raises(RuntimeError, match="tensor.mH is only supported on matrices or batches of matrices. Got 1-D"):
        ember.ones(2).mH
    with pytest.raises(RuntimeError, match="tensor.adjoint\\(\\) is only supported on matrices"):
        ember.ones(2).adjoint()


def test_torch_surface_is_covered():
    """The names this module adds exist where torch has them."""
    for name in ("acos_", "t_", "swapdims_", "put_", "index_reduce_", "sgn_", "new_empty_strided", "mH", "H",
                 "float_power_", "polygamma_", "cumsum_", "greater_equal_", "logical_not_", "bitwise_not_"):
        assert hasattr(ember.Tensor, name), name
    for name in ("broadcast_to", "argwhere", "take", "put", "combinations", "cartesian_prod", "kaiser_window",
                 "chain_matmul", "empty_strided", "cosine_similarity", "pairwise_distance", "clamp_", "acos_"):
        assert hasattr(ember, name), name


def test_inplace_refuses_expanded_targets():
    with pytest.raises(RuntimeError, match="acos_: unsupported operation: more than one element of the written-to "
                                           "tensor refers to a single memory location"):
        ember.ones(1).expand(3).acos_()
    with pytest.raises(RuntimeError, match="eq_: unsupported operation"):
        ember.zeros(2, 1).expand(2, 3).eq_(0)
    ember.ones(1).expand(1).acos_()  # a broadcast dim of size 1 holds one element: fine
    e = ember.ones(1).expand(3)
    e.t_()  # metadata only: allowed, as in torch


def test_in_place_methods_return_the_same_object():
    """torch returns self from in-place methods: `x.fill_(0) is x`, and a Parameter stays a Parameter."""
    x = ember.ones(3)
    assert x.fill_(2.0) is x and x.copy_(ember.zeros(3)) is x and x.zero_() is x
    assert x.requires_grad_() is x and x.detach_() is x
    p = ember.nn.Parameter(ember.ones(2))
    assert p.requires_grad_(False) is p and ember.nn.init.constant_(p, 0.5) is p
