"""Unary elementwise ops (and pow / clamp): forward against numpy, dtype rules,
layouts, gradcheck (first and second order), in-place semantics and errors."""
import math

import numpy as np
import pytest

import ember
from harness import (OpCase, assert_close, check_forward, check_grad, make, parametrize_cases,
                     random_array)

nn = ember._C._nn

# harness.make turns 0-d arrays into shape (1,) (np.ascontiguousarray), so
# 0-d inputs are covered by test_zero_dim below instead.
SHAPES = [[(3, 4)], [(1,)], [(0,)], [(2, 3, 2)]]
BROADCAST_SHAPES = [[(3, 4), (3, 4)], [(3, 4), (4,)], [(2, 1, 3), (2, 1)], [(1,), (2, 3)]]
INT = (np.float32, np.float64, np.int64, np.int32)
FLOAT = (np.float32, np.float64)

_erf = np.vectorize(math.erf, otypes=[np.float64])


def np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x.astype(np.float64)))


def np_gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def np_gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def np_softplus(x, beta=1.0, threshold=20.0):
    z = x.astype(np.float64) * beta
    return np.where(z > threshold, x, np.log1p(np.exp(np.minimum(z, threshold))) / beta)


CASES = [
    OpCase("neg", lambda x: -x, np.negative, SHAPES, dtypes=INT),
    OpCase("abs", ember.abs, np.abs, SHAPES, dtypes=INT),
    OpCase("sign", ember.sign, np.sign, SHAPES, dtypes=INT),
    OpCase("square", ember.square, np.square, SHAPES, dtypes=INT),
    OpCase("floor", ember.floor, np.floor, SHAPES, dtypes=FLOAT, domain=(-3.0, 3.0)),
    OpCase("ceil", ember.ceil, np.ceil, SHAPES, dtypes=FLOAT, domain=(-3.0, 3.0)),
    OpCase("round", ember.round, np.round, SHAPES, dtypes=FLOAT, domain=(-3.0, 3.0)),
    OpCase("round_decimals", lambda x: ember.round(x, decimals=2), lambda x: np.round(x, 2), SHAPES,
           dtypes=(np.float64,), domain=(-3.0, 3.0)),
    OpCase("exp", ember.exp, np.exp, SHAPES, dtypes=FLOAT),
    OpCase("log", ember.log, np.log, SHAPES, dtypes=FLOAT, domain=(0.1, 3.0)),
    OpCase("log1p", ember.log1p, np.log1p, SHAPES, dtypes=FLOAT, domain=(-0.5, 3.0)),
    OpCase("expm1", ember.expm1, np.expm1, SHAPES, dtypes=FLOAT),
    OpCase("sqrt", ember.sqrt, np.sqrt, SHAPES, dtypes=FLOAT, domain=(0.1, 4.0)),
    OpCase("rsqrt", ember.rsqrt, lambda x: 1.0 / np.sqrt(x), SHAPES, dtypes=FLOAT, domain=(0.1, 4.0)),
    OpCase("sin", ember.sin, np.sin, SHAPES, dtypes=FLOAT, domain=(-4.0, 4.0)),
    OpCase("cos", ember.cos, np.cos, SHAPES, dtypes=FLOAT, domain=(-4.0, 4.0)),
    OpCase("tanh", ember.tanh, np.tanh, SHAPES, dtypes=FLOAT),
    OpCase("sigmoid", ember.sigmoid, np_sigmoid, SHAPES, dtypes=FLOAT, domain=(-6.0, 6.0)),
    OpCase("reciprocal", ember.reciprocal, np.reciprocal, SHAPES, dtypes=FLOAT, domain=(0.5, 2.0)),
    OpCase("erf", ember.erf, _erf, SHAPES, dtypes=FLOAT),
    OpCase("relu", ember.relu, lambda x: np.maximum(x, 0).astype(x.dtype), SHAPES, dtypes=INT),
    OpCase("gelu", nn.gelu, np_gelu, SHAPES, dtypes=FLOAT, domain=(-4.0, 4.0)),
    OpCase("gelu_tanh", lambda x: nn.gelu(x, approximate="tanh"), np_gelu_tanh, SHAPES, dtypes=FLOAT,
           domain=(-4.0, 4.0)),
    OpCase("silu", nn.silu, lambda x: x * np_sigmoid(x), SHAPES, dtypes=FLOAT, domain=(-5.0, 5.0)),
    OpCase("softplus", nn.softplus, np_softplus, SHAPES, dtypes=FLOAT, domain=(-5.0, 5.0)),
    # beta=2, threshold=3: both branches are exercised on (-3, 3).
    OpCase("softplus_beta", lambda x: nn.softplus(x, beta=2.0, threshold=3.0),
           lambda x: np_softplus(x, 2.0, 3.0), SHAPES, dtypes=FLOAT, domain=(-3.0, 3.0)),
    OpCase("clamp", lambda x: ember.clamp(x, -0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7), SHAPES, dtypes=FLOAT),
    OpCase("clamp_int", lambda x: ember.clamp(x, -2, 3), lambda x: np.clip(x, -2, 3), SHAPES,
           dtypes=(np.int64, np.int32, np.float32)),
    OpCase("clamp_min", lambda x: ember.clamp(x, min=0.25), lambda x: np.maximum(x, np.float32(0.25)), SHAPES),
    OpCase("clip_max", lambda x: ember.clip(x, max=-0.25), lambda x: np.minimum(x, np.float32(-0.25)), SHAPES),
    OpCase("clamp_tensor", lambda x, lo, hi: ember.clamp(x, lo, hi - 0.5 * lo - 0.5 * hi + 1.5),
           lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi - 0.5 * lo - 0.5 * hi + 1.5),
           [[(3, 4), (3, 4), (3, 4)], [(3, 4), (4,), (3, 1)], [(1,), (2,), (1,)]]),
    OpCase("pow_2", lambda x: x ** 2, lambda x: x ** 2, SHAPES, dtypes=INT),
    OpCase("pow_3_int", lambda x: ember.pow(x, 3), lambda x: x ** 3, SHAPES, dtypes=INT),
    OpCase("pow_frac", lambda x: x ** 2.5, lambda x: x ** np.float32(2.5), SHAPES, dtypes=FLOAT, domain=(0.2, 2.0)),
    OpCase("pow_neg", lambda x: x.pow(-1.5), lambda x: x ** np.float32(-1.5), SHAPES, dtypes=FLOAT,
           domain=(0.2, 2.0), rtol=1e-4),
    OpCase("pow_sqrt", lambda x: x ** 0.5, np.sqrt, SHAPES, dtypes=FLOAT, domain=(0.2, 2.0)),
    OpCase("pow_zero", lambda x: x ** 0, lambda x: np.ones_like(x), SHAPES, dtypes=FLOAT),
    OpCase("pow_tensor", ember.pow, np.power, BROADCAST_SHAPES, dtypes=FLOAT, domain=(0.2, 2.0), rtol=1e-4),
    OpCase("rpow", lambda x: 2.5 ** x, lambda x: np.float32(2.5) ** x, SHAPES, dtypes=FLOAT, rtol=1e-4),
    OpCase("nan_to_num", lambda x: ember.nan_to_num(x, nan=1.0), lambda x: np.nan_to_num(x, nan=1.0), SHAPES,
           dtypes=FLOAT),
]

CASE_BY_NAME = {c.name: c for c in CASES}
ONE_INPUT = [c for c in CASES if len(c.shapes[0]) == 1]


@parametrize_cases(CASES)
def test_forward(case):
    for shapes in case.shapes:
        for dtype in case.dtypes:
            check_forward(case, shapes, dtype)


@parametrize_cases(ONE_INPUT)
def test_noncontiguous(case):
    # Stored transposed (2-d and 3-d), expanded (stride 0) and, when slicing
    # exists, every other column.
    a = random_array((3, 4), case.dtypes[0], case.domain)
    t = make(np.ascontiguousarray(a.T)).t()
    assert not t.is_contiguous()
    assert_close(case.ember_fn(t), case.numpy_fn(a), case.rtol, case.atol, msg=case.name)
    if hasattr(ember.Tensor, "__getitem__"):
        padded = np.zeros((3, 8), dtype=a.dtype)
        padded[:, ::2] = a
        assert_close(case.ember_fn(make(padded)[:, ::2]), case.numpy_fn(a), case.rtol, case.atol, msg=case.name)
    a = random_array((2, 3, 4), case.dtypes[0], case.domain)
    t = make(np.ascontiguousarray(a.transpose(2, 1, 0))).permute(2, 1, 0)
    assert not t.is_contiguous()
    assert_close(case.ember_fn(t), case.numpy_fn(a), case.rtol, case.atol, msg=case.name)
    row = random_array((1, 4), case.dtypes[0], case.domain)
    assert_close(case.ember_fn(make(row).expand(3, 4)), case.numpy_fn(np.broadcast_to(row, (3, 4))),
                 case.rtol, case.atol, msg=case.name)


@parametrize_cases(ONE_INPUT)
def test_zero_dim(case):
    a = random_array((), case.dtypes[0], case.domain)
    t = make(a)  # 0-d, on the harness's device
    assert t.dim() == 0
    out = case.ember_fn(t)
    assert out.dim() == 0
    assert_close(out.reshape(1), np.asarray(case.numpy_fn(a)).reshape(1), case.rtol, case.atol, msg=case.name)


def test_noncontiguous_two_inputs():
    a = random_array((4, 3), domain=(0.2, 2.0))
    b = random_array((3, 4), domain=(0.2, 2.0))
    ta, tb = make(a).t(), make(b)
    assert_close(ember.pow(ta, tb), np.power(a.T, b), rtol=1e-4)
    assert_close(ember.pow(tb, ta), np.power(b, a.T), rtol=1e-4)


@parametrize_cases([c for c in CASES if c.grad])
def test_gradcheck(case):
    for shapes in case.shapes:
        check_grad(case, shapes)


SECOND_ORDER = ["exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "reciprocal", "erf", "gelu", "gelu_tanh",
                "silu", "softplus_beta", "pow_frac", "pow_tensor", "sin", "relu", "clamp"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order_gradcheck(name):
    case = CASE_BY_NAME[name]

    def first_grad(*xs):
        out = case.ember_fn(*xs)
        return ember.autograd.grad([out.sum()], list(xs), create_graph=True)

    inputs = [make(random_array(s, np.float64, case.domain), requires_grad=True) for s in case.shapes[0]]
    assert ember.autograd.gradcheck(first_grad, inputs), name


# ---- dtype rules (PyTorch's)

@pytest.mark.parametrize("fn,dtype,expected", [
    (ember.exp, ember.int64, ember.float32), (ember.sqrt, ember.int32, ember.float32),
    (ember.sigmoid, ember.int64, ember.float32), (ember.log, ember.bool, ember.float32),
    (ember.reciprocal, ember.int64, ember.float32), (ember.tanh, ember.float64, ember.float64),
    (ember.abs, ember.int32, ember.int32), (ember.neg, ember.int64, ember.int64),
    (ember.sign, ember.int64, ember.int64), (ember.sign, ember.bool, ember.bool),
    (ember.square, ember.int32, ember.int32), (ember.square, ember.bool, ember.int64),
    (ember.floor, ember.int64, ember.int64), (ember.ceil, ember.int32, ember.int32),
    (ember.round, ember.int64, ember.int64), (ember.relu, ember.int64, ember.int64),
    (lambda x: ember.clamp(x, 0, 2), ember.int64, ember.int64),
    (lambda x: ember.clamp(x, 0.5, 2), ember.int64, ember.float32),
    (lambda x: x ** 2, ember.int32, ember.int32), (lambda x: x ** 2.0, ember.int64, ember.float32),
    (lambda x: 2 ** x, ember.int64, ember.int64), (lambda x: 2.0 ** x, ember.int64, ember.float32),
    (ember.exp, ember.float16, ember.float16), (ember.abs, ember.bfloat16, ember.bfloat16),
    (nn.gelu, ember.float16, ember.float16), (ember.nan_to_num, ember.int64, ember.int64),
])
def test_result_dtype(fn, dtype, expected):
    x = ember.tensor([[0, 1, 2], [1, 0, 1]]).to(dtype)
    assert fn(x).dtype == expected


def test_integer_values():
    x = ember.tensor([-3, -1, 0, 2, 5])
    assert ember.floor(x).tolist() == [-3, -1, 0, 2, 5]
    assert ember.relu(x).tolist() == [0, 0, 0, 2, 5]
    assert ember.sign(x).tolist() == [-1, -1, 0, 1, 1]
    assert (x ** 3).tolist() == [-27, -1, 0, 8, 125]
    assert ember.pow(x, ember.tensor([2, 3, 0, -1, 1])).tolist() == [9, -1, 1, 0, 5]
    assert ember.exp(ember.tensor([0, 1])).tolist() == pytest.approx([1.0, math.e], rel=1e-6)
    assert ember.clamp(x, -1, 2).tolist() == [-1, -1, 0, 2, 2]


def test_half_types_compute_in_float32():
    a = random_array((5,), domain=(-3.0, 3.0)).astype(np.float16)
    x = make(a)
    assert_close(ember.exp(x).float(), np.exp(a.astype(np.float32)).astype(np.float16), rtol=1e-3)
    assert_close(ember.sigmoid(x).float(), np_sigmoid(a).astype(np.float16), rtol=1e-3, atol=1e-3)
    b = ember.tensor([1.5, -2.0]).bfloat16()
    assert ember.abs(b).float().tolist() == [1.5, 2.0]


def test_abs_of_negative_zero_is_positive_zero():
    # numpy and PyTorch clear the sign bit (the CUDA kernel uses fabs too).
    for dtype in (ember.float32, ember.float64, ember.float16, ember.bfloat16):
        x = ember.tensor([-0.0, 0.0, -1.5], dtype=dtype)
        got = ember.abs(x).float().numpy()
        assert not np.signbit(got).any(), (dtype, got)
        assert got.tolist() == [0.0, 0.0, 1.5]
        y = x.clone()
        y.abs_()
        assert not np.signbit(y.float().numpy()).any()
    np.testing.assert_array_equal(np.signbit(np.abs(np.array([-0.0]))), [False])


def test_special_values():
    nan, inf = float("nan"), float("inf")
    x = ember.tensor([nan, inf, -inf, 1.5])
    assert_close(ember.nan_to_num(x), np.nan_to_num(np.array([nan, inf, -inf, 1.5], dtype=np.float32)))
    assert ember.nan_to_num(x, nan=2.0, posinf=3.0, neginf=-4.0).tolist() == [2.0, 3.0, -4.0, 1.5]
    h = ember.nan_to_num(x.half()).float().tolist()
    assert h == [0.0, 65504.0, -65504.0, 1.5]
    assert math.isnan(ember.relu(ember.tensor([nan])).item())
    assert math.isnan(ember.clamp(ember.tensor([nan]), 0, 1).item())
    assert ember.sign(ember.tensor([nan, -nan])).tolist() == [0.0, 0.0]  # PyTorch's rule, not numpy's
    assert all(math.isnan(v) for v in ember.clamp(ember.tensor([0.0, 2.0]), min=nan).tolist())
    r = ember.tensor([nan, -1.0, 2.0], requires_grad=True)
    ember.relu(r).sum().backward()
    assert r.grad.tolist() == [1.0, 0.0, 1.0]  # threshold_backward: NaN passes the gradient
    assert ember.round(ember.tensor([0.5, 1.5, 2.5, -0.5])).tolist() == [0.0, 2.0, 2.0, -0.0]
    assert ember.clamp(ember.tensor([0.0, 5.0]), 3, 1).tolist() == [1.0, 1.0]  # min > max: all max
    assert ember.sigmoid(ember.tensor([-1000.0, 1000.0])).tolist() == [0.0, 1.0]


@pytest.mark.parametrize("name,ref", [
    ("exp", np.exp), ("expm1", np.expm1), ("tanh", np.tanh), ("sigmoid", lambda v: 1 / (1 + np.exp(-v))),
    ("silu", lambda v: v / (1 + np.exp(-v))), ("erf", _erf), ("log", np.log), ("log1p", np.log1p),
    ("softplus", np_softplus),
])
def test_float32_kernels_accuracy_over_the_whole_range(name, ref):
    # float32 exp-family kernels have their own vectorized code: compare with
    # float64 numpy rounded to float32, from underflow to overflow.
    x = np.concatenate([np.linspace(-110, 95, 20001), [0.0, -0.0, 1e-30, -1e-30, 1e-6, -3e-4]]).astype(np.float32)
    fn = getattr(nn, name) if name in ("silu", "softplus") else getattr(ember, name)
    got = to_np(fn(ember.tensor(x))).astype(np.float64)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64)).astype(np.float32).astype(np.float64)
    normal = np.isfinite(want) & (np.abs(want) > 1.2e-38)
    if name == "silu":  # x * sigmoid(x) underflows below -87, as in PyTorch
        normal &= x > -87
    np.testing.assert_allclose(got[normal], want[normal], rtol=5e-7, atol=0)
    assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
    special = np.array([np.nan, np.inf, -np.inf], dtype=np.float32)
    with np.errstate(all="ignore"):
        assert_close(fn(ember.tensor(special)), ref(special.astype(np.float64)).astype(np.float32))
    with np.errstate(all="ignore"):
        assert np.signbit(to_np(fn(ember.tensor([-0.0])))[0]) == np.signbit(ref(np.float64(-0.0)))


def test_float32_gelu_accuracy():
    x = np.linspace(-12, 12, 4801).astype(np.float32)
    x64 = x.astype(np.float64)
    assert_close(nn.gelu(ember.tensor(x)), np_gelu(x64), rtol=1e-6, atol=1e-6)
    assert_close(nn.gelu(ember.tensor(x), approximate="tanh"), np_gelu_tanh(x64), rtol=1e-6, atol=1e-6)
    assert math.isnan(nn.gelu(ember.tensor([float("nan")])).item())
    assert nn.gelu(ember.tensor([float("inf"), -float("inf")])).tolist()[0] == float("inf")


def test_pow_gradient_edge_cases():
    # d/dx x^0 is 0 even at 0; d/de x^e at x == 0, e >= 0 is 0 (PyTorch's convention).
    x = ember.tensor([0.0, 2.0], dtype=ember.float64, requires_grad=True)
    (x ** 0).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    b = ember.tensor([0.0, 2.0], dtype=ember.float64, requires_grad=True)
    e = ember.tensor([0.0, 1.0], dtype=ember.float64, requires_grad=True)
    ember.pow(b, e).sum().backward()
    assert b.grad.tolist() == [0.0, 1.0]
    assert e.grad.tolist() == pytest.approx([0.0, 2.0 * math.log(2.0)])


def test_zero_gradients_of_step_functions():
    for fn in (ember.sign, ember.floor, ember.ceil, ember.round):
        x = ember.tensor([0.3, -1.7], requires_grad=True)
        y = fn(x)
        assert y.requires_grad
        y.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0]


def test_clamp_tensor_bound_gradients():
    x = ember.tensor([-2.0, 0.5, 3.0], dtype=ember.float64, requires_grad=True)
    lo = ember.tensor([-1.0, -1.0, -1.0], dtype=ember.float64, requires_grad=True)
    hi = ember.tensor([1.0, 1.0, 1.0], dtype=ember.float64, requires_grad=True)
    ember.clamp(x, lo, hi).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]
    assert lo.grad.tolist() == [1.0, 0.0, 0.0]
    assert hi.grad.tolist() == [0.0, 0.0, 1.0]


# ---- in place

INPLACE = [
    ("neg_", np.negative, None), ("abs_", np.abs, None), ("exp_", np.exp, None), ("log_", np.log, (0.1, 3.0)),
    ("sqrt_", np.sqrt, (0.1, 3.0)), ("sigmoid_", np_sigmoid, None), ("tanh_", np.tanh, None),
    ("relu_", lambda a: np.maximum(a, 0), None), ("floor_", np.floor, None), ("ceil_", np.ceil, None),
    ("round_", np.round, None), ("reciprocal_", np.reciprocal, (0.5, 2.0)), ("sin_", np.sin, None),
    ("square_", np.square, None),
]


@pytest.mark.parametrize("name,ref,domain", INPLACE, ids=[n for n, _, _ in INPLACE])
def test_inplace_writes_into_self(name, ref, domain):
    a = random_array((3, 4), domain=domain)
    x = make(a)
    ptr, version = x.data_ptr(), x._version
    out = getattr(x, name)()
    assert out is x
    assert x.data_ptr() == ptr
    assert x._version == version + 1
    assert_close(x, ref(a).astype(np.float32), rtol=1e-5, atol=1e-6)


def test_inplace_on_noncontiguous_view_writes_through():
    base = ember.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) - 5)
    view = base.t()
    view.relu_()
    assert base.tolist() == np.maximum(np.arange(12).reshape(3, 4) - 5, 0).tolist()


def test_inplace_clamp_and_pow():
    x = ember.tensor([-2.0, 0.5, 3.0])
    assert x.clamp_(-1, 1) is x
    assert x.tolist() == [-1.0, 0.5, 1.0]
    x.pow_(2)
    assert x.tolist() == [1.0, 0.25, 1.0]
    x **= 0.5
    assert x.tolist() == [1.0, 0.5, 1.0]
    x.clip_(max=ember.tensor([0.5, 0.5, 2.0]))
    assert x.tolist() == [0.5, 0.5, 1.0]
    i = ember.tensor([1, -2])
    i.abs_()
    assert i.tolist() == [1, 2] and i.dtype == ember.int64


def test_inplace_half_tensor():
    x = ember.tensor([0.0, 1.0]).half()
    x.exp_()
    assert x.dtype == ember.float16
    assert x.float().tolist() == pytest.approx([1.0, math.e], rel=1e-3)


@pytest.mark.parametrize("name", ["exp_", "sigmoid_", "tanh_", "relu_", "neg_", "sqrt_", "reciprocal_"])
def test_inplace_under_autograd_takes_over_history(name):
    a = random_array((5,), np.float64, domain=(0.2, 2.0))
    x = make(a, requires_grad=True)
    y = x * 1.0
    getattr(y, name)()
    assert y.grad_fn is not None
    y.sum().backward()
    expected = make(a, requires_grad=True)
    getattr(ember, name[:-1])(expected).sum().backward()
    assert_close(x.grad, to_np(expected.grad), rtol=1e-12, atol=1e-12)


def test_inplace_clamp_pow_under_autograd():
    x = ember.tensor([-2.0, 0.5, 3.0], dtype=ember.float64, requires_grad=True)
    y = x * 1.0
    y.clamp_(-1, 1).pow_(3)
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 3 * 0.25, 0.0]


def to_np(t):
    return t.detach().cpu().numpy()


def test_inplace_errors():
    w = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="exp_: a leaf Variable"):
        w.exp_()
    with ember.no_grad():
        w.exp_()
    assert w.tolist() == pytest.approx([math.e] * 3)
    with pytest.raises(RuntimeError, match=r"exp_: result type float32 can't be cast .* int64"):
        ember.tensor([1, 2]).exp_()
    with pytest.raises(RuntimeError, match="clamp_: result type float32"):
        ember.tensor([1, 2]).clamp_(0.5)
    with pytest.raises(RuntimeError, match="relu_: .*single memory location"):
        ember.zeros(1, 3).expand(2, 3).relu_()
    # A tensor saved for backward and then modified in place.
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    z = y.sin()
    y.exp_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


# ---- bindings and errors

def test_aliases_and_operators():
    x = ember.tensor([-1.5, 2.0])
    assert ember.absolute(x).tolist() == [1.5, 2.0]
    assert ember.negative(x).tolist() == [1.5, -2.0]
    assert x.absolute().tolist() == [1.5, 2.0]
    assert ember.clip(x, 0, 1).tolist() == [0.0, 1.0]
    assert ember.clamp_min(x, 0).tolist() == [0.0, 2.0]
    assert x.clamp_max(0).tolist() == [-1.5, 0.0]
    assert abs(x).tolist() == [1.5, 2.0]
    assert (-x).tolist() == [1.5, -2.0]
    assert (+x) is not None and (+x).tolist() == [-1.5, 2.0]
    assert (2 ** ember.tensor([1.0, 3.0])).tolist() == [2.0, 8.0]
    assert ember.pow(2, ember.tensor([2])).tolist() == [4]
    assert (x ** ember.tensor([2.0, 0.5])).tolist() == [2.25, pytest.approx(math.sqrt(2.0))]
    assert ember.relu(x).tolist() == [0.0, 2.0]
    assert x.round(decimals=1).tolist() == [-1.5, 2.0]


@pytest.mark.parametrize("call,op", [
    (lambda: ember.exp("a"), "exp"), (lambda: ember.exp([1.0]), "exp"), (lambda: ember.sigmoid(1.0), "sigmoid"),
    (lambda: ember.ones(2).pow("a"), "pow"), (lambda: ember.ones(2) ** "a", "pow"),
    (lambda: ember.clamp(ember.ones(2), min="a"), "clamp"), (lambda: ember.pow(2, 3), "pow"),
    (lambda: ember.nan_to_num(ember.ones(2), nan="x"), "nan_to_num"), (lambda: nn.gelu(1.0), "gelu"),
])
def test_wrong_argument_types(call, op):
    with pytest.raises(TypeError, match=op):
        call()


def test_bad_inputs():
    with pytest.raises(RuntimeError, match="neg: negation.*bool"):
        -ember.tensor([True])
    with pytest.raises(RuntimeError, match="positive: .*bool"):
        +ember.tensor([True])
    with pytest.raises(RuntimeError, match="clamp: at least one of 'min' or 'max'"):
        ember.clamp(ember.ones(2))
    with pytest.raises(RuntimeError, match="pow: integers to negative integer powers"):
        ember.tensor([2]) ** -1
    with pytest.raises(RuntimeError, match="gelu: approximate"):
        nn.gelu(ember.ones(2), approximate="fast")
    with pytest.raises(RuntimeError, match="gelu: expected a floating point tensor, got int64"):
        nn.gelu(ember.tensor([1]))
    with pytest.raises(RuntimeError, match="silu: expected a floating point tensor"):
        nn.silu(ember.tensor([1]))
    with pytest.raises(RuntimeError, match="floor: not implemented for bool"):
        ember.floor(ember.tensor([True]))
    with pytest.raises(RuntimeError, match=r"pow: shapes \[2\] and \[3\]"):
        ember.pow(ember.ones(2), ember.ones(3))
    with pytest.raises(RuntimeError, match="round: decimals"):
        ember.round(ember.tensor([1]), decimals=1)


@pytest.mark.parametrize("dtype, tol", [(ember.float64, 1e-12), (ember.float32, 2e-5)])
@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "silu", "tanh", "sigmoid"])
def test_fused_activation_gradients_match_the_composite_formulas(name, dtype, tol):
    # Without create_graph these nodes run one fused kernel (g * f'(x)); with it, the same formula
    # in ember ops (so the gradient is differentiable again). Both must agree, NaN and inf included.
    F = ember.nn.functional
    fn = {"gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu,
          "tanh": ember.tanh, "sigmoid": ember.sigmoid}[name]
    xs = np.concatenate([np.linspace(-9, 9, 721), [0.0, -0.0, 1e-30, np.inf, -np.inf, np.nan]])
    x = ember.tensor(xs, dtype=dtype, requires_grad=True)
    g = ember.tensor(np.random.default_rng(3).uniform(-2, 2, xs.shape), dtype=dtype)
    (fused,) = ember.autograd.grad(fn(x), [x], [g])
    (composite,) = ember.autograd.grad(fn(x), [x], [g], create_graph=True)
    np.testing.assert_allclose(fused.numpy(), composite.detach().numpy(), rtol=tol, atol=tol, equal_nan=True)
    assert fused.grad_fn is None and composite.grad_fn is not None
