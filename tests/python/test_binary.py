"""Binary elementwise ops: forward against numpy, broadcasting, layouts,
promotion, gradcheck, in-place forms, operators and errors."""
import math

import numpy as np
import pytest

import ember
from harness import OpCase, assert_close, make, needs_gpu, parametrize_cases, random_array, table_tests, to_numpy, torch

BROADCAST_SHAPES = [[(3, 4), (3, 4)], [(3, 4), (4,)], [(2, 1, 4), (3, 1)], [(), (2, 3)], [(5,), ()],
                    [(0, 3), (1, 3)]]
TERNARY_SHAPES = [[(3, 4), (3, 4), (3, 4)], [(2, 1, 4), (3, 1), (4,)], [(), (2, 3), ()], [(0, 2), (2,), ()]]
FLOAT = (np.float32, np.float64)
INT = (np.int8, np.uint8, np.int32, np.int64)
ALL = FLOAT + INT + (np.bool_,)


def nz(b):
    """b with zeros replaced by one (integer division by zero raises); works
    for ember tensors and numpy arrays alike."""
    return b + (b == 0)


def np_lerp(s, e, w):
    return (s + w * (e - s)).astype(np.result_type(s, e))


CASES = [
    OpCase("add", lambda a, b: a + b, np.add, BROADCAST_SHAPES, dtypes=FLOAT + INT),
    OpCase("sub", lambda a, b: a - b, np.subtract, BROADCAST_SHAPES, dtypes=(np.float32, np.int64)),
    OpCase("mul", lambda a, b: a * b, np.multiply, BROADCAST_SHAPES, dtypes=(np.float32, np.int32)),
    OpCase("div", lambda a, b: a / b, np.divide, BROADCAST_SHAPES, domain=(0.5, 2.0)),
    OpCase("add_alpha", lambda a, b: ember.add(a, b, alpha=2.5), lambda a, b: a + 2.5 * b, BROADCAST_SHAPES),
    OpCase("sub_alpha", lambda a, b: ember.sub(a, b, alpha=0.5), lambda a, b: a - 0.5 * b, BROADCAST_SHAPES),
    OpCase("add_bool", lambda a, b: a + b, np.logical_or, BROADCAST_SHAPES, dtypes=(np.bool_,), grad=False),
    OpCase("mul_bool", lambda a, b: a * b, np.logical_and, BROADCAST_SHAPES, dtypes=(np.bool_,), grad=False),
    # Integer rounding division and remainder: divisors made nonzero. Float rows
    # shift the numerator to mix signs and keep divisors away from zero, so
    # finite differences rarely straddle a jump.
    OpCase("div_trunc_int", lambda a, b: ember.div(a, nz(b), rounding_mode="trunc"),
           lambda a, b: (np.sign(a) * np.sign(nz(b)) * (np.abs(a) // np.abs(nz(b)))).astype(a.dtype),
           BROADCAST_SHAPES, dtypes=(np.int8, np.int32, np.int64), grad=False),
    OpCase("div_floor_int", lambda a, b: ember.div(a, nz(b), rounding_mode="floor"),
           lambda a, b: np.floor_divide(a, nz(b)), BROADCAST_SHAPES, dtypes=INT, grad=False),
    OpCase("floor_divide_int", lambda a, b: a // nz(b), lambda a, b: np.floor_divide(a, nz(b)), BROADCAST_SHAPES,
           dtypes=(np.int32, np.int64), grad=False),
    OpCase("remainder_int", lambda a, b: ember.remainder(a, nz(b)), lambda a, b: np.remainder(a, nz(b)),
           BROADCAST_SHAPES, dtypes=INT, grad=False),
    OpCase("div_trunc", lambda a, b: ember.div(a - 1.2, b, rounding_mode="trunc"),
           lambda a, b: np.trunc((a - 1.2) / b).astype(a.dtype), BROADCAST_SHAPES, dtypes=FLOAT, domain=(0.5, 2.0)),
    OpCase("div_floor", lambda a, b: ember.div(a - 1.2, b, rounding_mode="floor"),
           lambda a, b: np.floor_divide(a - 1.2, b).astype(a.dtype), BROADCAST_SHAPES, dtypes=FLOAT,
           domain=(0.5, 2.0)),
    OpCase("floor_divide", lambda a, b: (a - 1.2) // b, lambda a, b: np.floor_divide(a - 1.2, b).astype(a.dtype),
           BROADCAST_SHAPES, dtypes=FLOAT, domain=(0.5, 2.0)),
    OpCase("remainder", lambda a, b: ember.remainder(a - 1.2, b), lambda a, b: np.remainder(a - 1.2, b).astype(a.dtype),
           BROADCAST_SHAPES, dtypes=FLOAT, domain=(0.5, 2.0)),
    OpCase("mod_negative_divisor", lambda a, b: (a - 1.2) % (b - 2.6),
           lambda a, b: np.remainder(a - 1.2, b - 2.6).astype(a.dtype), BROADCAST_SHAPES, dtypes=FLOAT,
           domain=(0.5, 2.0)),
    OpCase("maximum", ember.maximum, np.maximum, BROADCAST_SHAPES, dtypes=ALL),
    OpCase("minimum", ember.minimum, np.minimum, BROADCAST_SHAPES, dtypes=ALL),
    OpCase("eq", lambda a, b: a == b, np.equal, BROADCAST_SHAPES, dtypes=(np.float32, np.int64, np.bool_),
           domain=(-2, 3), grad=False),
    OpCase("ne", ember.ne, np.not_equal, BROADCAST_SHAPES, dtypes=(np.int32, np.bool_), grad=False),
    OpCase("lt", lambda a, b: a < b, np.less, BROADCAST_SHAPES, dtypes=(np.float32, np.int64), grad=False),
    OpCase("le", ember.le, np.less_equal, BROADCAST_SHAPES, dtypes=(np.float64, np.uint8, np.bool_), grad=False),
    OpCase("gt", lambda a, b: a > b, np.greater, BROADCAST_SHAPES, dtypes=(np.float32, np.int8), grad=False),
    OpCase("ge", lambda a, b: a >= b, np.greater_equal, BROADCAST_SHAPES, dtypes=(np.float32, np.int32),
           grad=False),
    OpCase("eq_scalar", lambda a: a == 1, lambda a: a == 1, [[(3, 4)], [(1,)]], dtypes=(np.int64, np.float32),
           domain=(0, 3), grad=False),
    OpCase("lt_scalar_float", lambda a: a < 1.5, lambda a: a < 1.5, [[(3, 4)]], dtypes=(np.int64, np.float32),
           grad=False),
    OpCase("ge_reflected", lambda a: 1 <= a, lambda a: 1 <= a, [[(3, 4)]], dtypes=(np.int32,), grad=False),
    OpCase("logical_and", ember.logical_and, np.logical_and, BROADCAST_SHAPES, dtypes=(np.float32, np.int32,
           np.bool_), domain=(-1, 2), grad=False),
    OpCase("logical_or", ember.logical_or, np.logical_or, BROADCAST_SHAPES, dtypes=(np.int64, np.bool_),
           domain=(-1, 2), grad=False),
    OpCase("logical_xor", ember.logical_xor, np.logical_xor, BROADCAST_SHAPES, dtypes=(np.float64, np.bool_),
           grad=False),
    OpCase("logical_not", ember.logical_not, np.logical_not, [[(3, 4)], [(0,)]],
           dtypes=(np.float32, np.int32, np.bool_), domain=(-1, 2), grad=False),
    OpCase("bitwise_and", lambda a, b: a & b, np.bitwise_and, BROADCAST_SHAPES, dtypes=INT + (np.bool_,),
           grad=False),
    OpCase("bitwise_or", lambda a, b: a | b, np.bitwise_or, BROADCAST_SHAPES, dtypes=(np.int64, np.bool_),
           grad=False),
    OpCase("bitwise_xor", lambda a, b: a ^ b, np.bitwise_xor, BROADCAST_SHAPES, dtypes=(np.int32, np.bool_),
           grad=False),
    OpCase("invert", lambda a: ~a, np.invert, [[(3, 4)], [(2, 1)]], dtypes=(np.int64, np.uint8, np.bool_),
           grad=False),
    OpCase("where", lambda c, a, b: ember.where(c > 0, a, b), lambda c, a, b: np.where(c > 0, a, b),
           TERNARY_SHAPES, dtypes=ALL, grad=False),
    OpCase("where_scalar_other", lambda c, a: ember.where(c > 0, a, 0.5),
           lambda c, a: np.where(c > 0, a, np.asarray(0.5, a.dtype)), [[(3, 4), (4,)]], dtypes=FLOAT, grad=False),
    OpCase("where_method", lambda c, a, b: a.where(c > 0, b), lambda c, a, b: np.where(c > 0, a, b),
           TERNARY_SHAPES[:2], grad=False),
    OpCase("lerp", ember.lerp, np_lerp, TERNARY_SHAPES, dtypes=FLOAT, rtol=1e-5, atol=1e-6),
    OpCase("lerp_scalar", lambda s, e: ember.lerp(s, e, 0.3), lambda s, e: np_lerp(s, e, 0.3),
           BROADCAST_SHAPES, dtypes=FLOAT),
    OpCase("lerp_scalar_high", lambda s, e: s.lerp(e, 0.8), lambda s, e: np_lerp(s, e, 0.8), BROADCAST_SHAPES[:3]),
    OpCase("masked_fill", lambda a, m: a.masked_fill(m > 0, 2.5),
           lambda a, m: np.where(m > 0, np.asarray(2.5).astype(a.dtype), a), BROADCAST_SHAPES, dtypes=ALL,
           grad=False),
    OpCase("masked_fill_tensor", lambda a, m, v: ember.masked_fill(a, m > 0, v.reshape(())),
           lambda a, m, v: np.where(m > 0, v, a).astype(a.dtype), [[(3, 4), (4,), ()], [(2, 3), (), ()]],
           dtypes=FLOAT, grad=False),
]


# forward against numpy for every row; float64 gradcheck for differentiable rows
test_forward, test_gradcheck = table_tests(CASES)


# The selects take a bool condition or mask, which gradcheck cannot perturb:
# check the gradients of their floating inputs with the mask fixed.
SELECT_GRADS = [
    ("where", lambda a, b: ember.where(COND.to(a.device), a, b), [(3, 4), (4,)]),
    ("where_scalar", lambda a: ember.where(COND.to(a.device), a, 1.5), [(3, 1)]),
    ("where_broadcast", lambda a, b: ember.where(COND.to(a.device), a, b), [(), (3, 1)]),
    ("masked_fill", lambda a: a.masked_fill(COND.to(a.device), -1.0), [(3, 4)]),
    ("masked_fill_broadcast", lambda a: a.masked_fill(COND.to(a.device), 2.0), [(4,)]),
    ("masked_fill_tensor", lambda a, v: ember.masked_fill(a, COND.to(a.device), v.reshape(())), [(3, 4), ()]),
    ("masked_fill_inplace", lambda a, v: (a * 1).masked_fill_(COND.to(a.device), v.reshape(())), [(3, 4), ()]),
    ("mul_inplace", lambda a, b: (a * 1).mul_(b), [(3, 4), (4,)]),
    ("div_inplace", lambda a, b: (a * 1).div_(b + 3), [(3, 4), (4,)]),
    ("lerp_inplace", lambda s, e, w: (s * 1).lerp_(e, w), [(3, 4), (4,), (3, 4)]),
    ("add_inplace", lambda a, b: (a * 1).add_(b, alpha=-2), [(3, 4), (4,)]),
]
COND = ember.tensor(random_array((3, 4), np.bool_))  # moved to the inputs' device where used


@pytest.mark.parametrize("name, fn, shapes", SELECT_GRADS, ids=[c[0] for c in SELECT_GRADS])
def test_gradcheck_selects(name, fn, shapes):
    inputs = [make(random_array(s, np.float64), requires_grad=True) for s in shapes]
    assert ember.autograd.gradcheck(fn, inputs), name


def _transposed(array):
    """The array stored transposed and viewed back: same values, swapped strides."""
    return make(np.ascontiguousarray(array.T)).t()


@parametrize_cases(CASES)
def test_noncontiguous(case):
    """Transposed and expanded (stride-0) inputs give the same values as
    contiguous ones. Inputs the op wants 0-d (masked_fill's value) stay 0-d."""
    dtype = case.dtypes[0]
    scalar = [len(s) == 0 for s in case.shapes[0]]
    arrays = [random_array(() if sc else (3, 4), dtype, case.domain) for sc in scalar]
    row = random_array((1, 4), dtype, case.domain)
    expanded = np.broadcast_to(row, (3, 4))
    for k in [i for i, sc in enumerate(scalar) if not sc]:  # input k is expanded, the others transposed
        tensors = [make(a) if sc else make(row).expand(3, 4) if i == k else _transposed(a)
                   for i, (a, sc) in enumerate(zip(arrays, scalar))]
        assert all(sc or not t.is_contiguous() for t, sc in zip(tensors, scalar))
        refs = [expanded if i == k else a for i, a in enumerate(arrays)]
        assert_close(case.ember_fn(*tensors), case.numpy_fn(*refs), case.rtol, case.atol, msg=f"{case.name} {k}")


# ---- promotion


def test_scalar_promotion():
    x = ember.tensor([1, 2, 3])
    assert (x + 1).dtype == ember.int64
    assert (x + 1.5).dtype == ember.float32
    assert (x * True).dtype == ember.int64
    f = ember.tensor([1.0, 2.0])
    assert (f + 2).dtype == ember.float32
    assert (f + ember.tensor(2.0, dtype=ember.float64)).dtype == ember.float32  # 0-d tensor does not promote
    assert (f + ember.tensor([2.0], dtype=ember.float64)).dtype == ember.float64
    assert (x / 2).dtype == ember.float32
    assert (2 - f).tolist() == [1.0, 0.0]
    assert (1 / f).tolist() == [1.0, 0.5]


def test_rounding_division_keeps_integer_dtypes():
    a = ember.tensor([7, -7], dtype=ember.int32)
    assert ember.div(a, 2, rounding_mode="floor").dtype == ember.int32
    assert ember.div(a, 2, rounding_mode="trunc").dtype == ember.int32
    assert (a // 2).dtype == ember.int32 and (a % 2).dtype == ember.int32
    assert ember.div(a, 2).dtype == ember.float32
    assert ember.div(a, 2.0, rounding_mode="floor").dtype == ember.float32
    assert ember.div(a, 2, rounding_mode="floor").tolist() == [3, -4]
    assert ember.div(a, 2, rounding_mode="trunc").tolist() == [3, -3]
    u = ember.tensor([200, 7], dtype=ember.uint8)
    assert (u // 3).tolist() == [66, 2] and (u % 3).tolist() == [2, 1]


def test_python_sign_semantics():
    vals = [-7, -6, -1, 0, 1, 5, 7]
    divs = [-3, -2, -1, 1, 2, 3]
    a = ember.tensor([v for v in vals for _ in divs])
    b = ember.tensor([d for _ in vals for d in divs])
    assert (a // b).tolist() == [v // d for v in vals for d in divs]
    assert (a % b).tolist() == [v % d for v in vals for d in divs]
    assert ember.div(a, b, rounding_mode="trunc").tolist() == [int(v / d) for v in vals for d in divs]
    fa, fb = a.double() + 0.5, b.double()
    assert (fa // fb).tolist() == [(v + 0.5) // d for v in vals for d in divs]
    assert (fa % fb).tolist() == pytest.approx([(v + 0.5) % d for v in vals for d in divs])
    assert (7 // ember.tensor([2, -2])).tolist() == [3, -4]
    assert (7 % ember.tensor([2, -2])).tolist() == [1, -1]
    assert (-7.5 % ember.tensor([2.0])).tolist() == [0.5]


def test_float_division_by_zero_follows_ieee():
    a = ember.tensor([1.0, -1.0, 0.0])
    z = ember.zeros(3)
    fl = ember.div(a, z, rounding_mode="floor").tolist()
    assert fl[0] == math.inf and fl[1] == -math.inf and math.isnan(fl[2])
    assert all(math.isnan(v) for v in ember.remainder(a, z).tolist())


@pytest.mark.parametrize("fn", [lambda a, b: a // b, lambda a, b: a % b,
                                lambda a, b: ember.div(a, b, rounding_mode="trunc")])
def test_integer_division_by_zero_raises(fn):
    with pytest.raises(RuntimeError, match=r"(div|remainder): ZeroDivisionError"):
        fn(ember.tensor([1, 2, 3]), ember.tensor([1, 0, 1]))


def test_integer_min_by_minus_one_does_not_trap():
    m = ember.tensor([-2**63, -2**31 + 1], dtype=ember.int64)
    assert (m // -1).tolist() == [-2**63, 2**31 - 1]  # wraps like two's complement
    assert (m % -1).tolist() == [0, 0]
    i = ember.tensor([-2**31], dtype=ember.int32)
    assert ember.div(i, ember.tensor([-1], dtype=ember.int32), rounding_mode="trunc").tolist() == [-2**31]


def test_maximum_minimum_propagate_nan():
    nan = float("nan")
    x = ember.tensor([1.0, nan, 3.0, nan])
    y = ember.tensor([2.0, 1.0, nan, nan])
    for fn in (ember.maximum, ember.minimum):
        out = fn(x, y).tolist()
        assert not math.isnan(out[0]) and all(math.isnan(v) for v in out[1:])
    assert ember.maximum(ember.tensor([1, 5]), ember.tensor([3.0, 2.0])).dtype == ember.float32


def test_maximum_minimum_split_ties():
    for fn in (ember.maximum, ember.minimum):
        a = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = ember.tensor([2.0, 2.0, 1.0], requires_grad=True)
        fn(a, b).sum().backward()
        if fn is ember.maximum:
            assert a.grad.tolist() == [0.0, 0.5, 1.0] and b.grad.tolist() == [1.0, 0.5, 0.0]
        else:
            assert a.grad.tolist() == [1.0, 0.5, 0.0] and b.grad.tolist() == [0.0, 0.5, 1.0]


def test_rounding_division_gradient_is_zero():
    a = ember.tensor([1.5, -2.5], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([0.7, 0.3], dtype=ember.float64, requires_grad=True)
    for fn in (lambda: ember.div(a, b, rounding_mode="floor"), lambda: ember.div(a, b, rounding_mode="trunc"),
               lambda: a // b):
        a.grad = None
        b.grad = None
        fn().sum().backward()
        assert a.grad.tolist() == [0.0, 0.0] and b.grad.tolist() == [0.0, 0.0]


def test_remainder_gradient_matches_pytorch_formula():
    a = ember.tensor([5.0, -5.0], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([3.0, 3.0], dtype=ember.float64, requires_grad=True)
    ember.remainder(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]
    assert b.grad.tolist() == [-1.0, 2.0]  # -floor(a / b)


def test_gradcheck_scalar_operands_and_double_backward():
    x = ember.tensor(random_array((3,), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.maximum(t, ember.tensor(0.1, dtype=ember.float64)), [x])
    assert ember.autograd.gradcheck(lambda t: t % 0.7, [x])
    assert ember.autograd.gradcheck(lambda t: ember.where(t > 0, t * t, 2.0), [x])
    # d/dx of the gradient of lerp(x, x*x, 0.25) goes through the backward formula's ops.
    y = ember.lerp(x, x * x, 0.25).sum()
    (g,) = ember.autograd.grad([y], [x], create_graph=True)
    (gg,) = ember.autograd.grad([g.sum()], [x])
    assert_close(gg, np.full(3, 0.5))


# ---- comparisons and operators


def test_comparisons_return_bool_tensors():
    x = ember.tensor([1, 2, 3])
    for r in (x == 2, x != 2, x < 2, x <= 2, x > 2, x >= 2, x == x, ember.eq(x, 2.0), 2 < x):
        assert r.dtype == ember.bool
    assert (x == 2).tolist() == [False, True, False]
    assert (2.5 > x).tolist() == [True, True, False]
    assert (x == ember.tensor([[1], [3]])).tolist() == [[True, False, False], [False, False, True]]


def test_comparison_with_other_types_is_not_implemented():
    x = ember.tensor([1.0])
    assert (x == None) is False  # noqa: E711
    assert (x != "a") is True
    with pytest.raises(TypeError):
        x < "a"


def test_tensor_stays_hashable():
    x, y = ember.ones(2), ember.ones(2)
    assert hash(x) == hash(x) and hash(x) != hash(y)
    d = {x: "x", y: "y"}
    assert d[x] == "x" and d[y] == "y"
    assert x in {x} and len({x, y}) == 2


def test_aliases():
    a, b = ember.tensor([1, 3]), ember.tensor([2, 2])
    assert ember.greater(a, b).tolist() == [False, True]
    assert ember.greater_equal(a, b).tolist() == [False, True]
    assert ember.less(a, b).tolist() == [True, False]
    assert ember.less_equal(a, b).tolist() == [True, False]
    assert ember.not_equal(a, b).tolist() == [True, True]
    assert a.greater(b).tolist() == [False, True]
    assert ember.subtract(a, b).tolist() == [-1, 1] and ember.multiply(a, b).tolist() == [2, 6]
    assert ember.divide(a, b, rounding_mode="floor").tolist() == [0, 1]
    assert a.floor_divide(b).tolist() == [0, 1] and a.remainder(b).tolist() == [1, 1]
    assert a.maximum(b).tolist() == [2, 3] and a.minimum(b).tolist() == [1, 2]


def test_bool_arithmetic():
    t = ember.tensor([True, True, False, False])
    f = ember.tensor([True, False, True, False])
    assert (t + f).tolist() == [True, True, True, False] and (t + f).dtype == ember.bool
    assert (t * f).tolist() == [True, False, False, False]
    assert ember.add(t, f, alpha=0).tolist() == t.tolist()
    assert (t + 1).dtype == ember.int64
    assert (~t).tolist() == [False, False, True, True]
    assert (t & f).tolist() == [True, False, False, False]
    assert (t | f).tolist() == [True, True, True, False]
    assert (t ^ f).tolist() == [False, True, True, False]
    assert (t.logical_not()).tolist() == [False, False, True, True]


def test_logical_ops_across_dtypes():
    a = ember.tensor([0.0, 1.5, 0.0, -2.0])
    b = ember.tensor([0, 0, 3, 4])
    assert ember.logical_and(a, b).tolist() == [False, False, False, True]
    assert ember.logical_or(a, b).tolist() == [False, True, True, True]
    assert ember.logical_xor(a, b).tolist() == [False, True, True, False]
    assert a.logical_and(b).dtype == ember.bool
    assert ember.logical_not(a).tolist() == [True, False, True, False]


def test_floordiv_mod_operators_and_inplace():
    x = ember.tensor([7.0, -7.0])
    assert (x // 2).tolist() == [3.0, -4.0]
    assert (x % 2).tolist() == [1.0, 1.0]
    assert (15 // ember.tensor([4])).tolist() == [3]
    v = x._version
    x //= 2
    assert x.tolist() == [3.0, -4.0] and x._version == v + 1
    x %= 3
    assert x.tolist() == [0.0, 2.0]
    i = ember.tensor([5, -5])
    i //= 2
    assert i.tolist() == [2, -3] and i.dtype == ember.int64
    i %= 2
    assert i.tolist() == [0, 1]


def test_bitwise_operators_inplace():
    a = ember.tensor([0b1100, 0b1010])
    a &= 0b1000
    assert a.tolist() == [8, 8]
    a |= 1
    assert a.tolist() == [9, 9]
    a ^= 3
    assert a.tolist() == [10, 10]
    m = ember.tensor([True, False])
    m |= ember.tensor([False, True])
    assert m.tolist() == [True, True]


# ---- where, lerp, masked_fill


def test_where_promotion_with_scalars():
    c = ember.tensor([True, False])
    assert ember.where(c, 1, 2).dtype == ember.int64
    assert ember.where(c, 1, 2).tolist() == [1, 2]
    assert ember.where(c, 1.5, ember.tensor([1, 2])).dtype == ember.float32
    assert ember.where(c, ember.tensor([1, 2], dtype=ember.int32), 5).dtype == ember.int32
    assert ember.where(c, ember.ones(2, dtype=ember.float64), 0).dtype == ember.float64
    assert ember.where(c, ember.ones(2, dtype=ember.float16), ember.zeros(2)).dtype == ember.float32
    assert ember.where(c, True, False).dtype == ember.bool


def test_where_gradients():
    c = ember.tensor([True, False, True])
    a = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = ember.tensor([4.0], requires_grad=True)  # broadcast: its gradient sums
    (ember.where(c, a, b) * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert a.grad.tolist() == [1.0, 0.0, 3.0]
    assert b.grad.tolist() == [2.0]


def test_lerp_weights_and_exact_end():
    s = ember.tensor([0.0, 10.0])
    e = ember.tensor([1.0, 20.0])
    assert ember.lerp(s, e, 0.5).tolist() == [0.5, 15.0]
    assert ember.lerp(s, e, 1.0).tolist() == e.tolist()
    assert ember.lerp(s, e, ember.tensor([0.0, 1.0])).tolist() == [0.0, 20.0]
    assert ember.lerp(s, e, ember.tensor(0.25)).tolist() == [0.25, 12.5]
    w = ember.tensor([0.5, 0.5], dtype=ember.float64)
    with pytest.raises(RuntimeError, match="lerp: expected dtype float32 for `weight`"):
        ember.lerp(s, e, w)


def test_lerp_gradients():
    s = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    e = ember.tensor([3.0, 6.0], dtype=ember.float64, requires_grad=True)
    w = ember.tensor([0.25, 0.75], dtype=ember.float64, requires_grad=True)
    ember.lerp(s, e, w).sum().backward()
    assert s.grad.tolist() == [0.75, 0.25] and e.grad.tolist() == [0.25, 0.75] and w.grad.tolist() == [2.0, 4.0]
    s.grad = None
    ember.lerp(s, e.detach(), 0.1).sum().backward()
    assert s.grad.tolist() == pytest.approx([0.9, 0.9], abs=1e-15)


def test_masked_fill_values_and_gradients():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    m = ember.tensor([True, False])
    v = ember.tensor(9.0, requires_grad=True)
    y = x.masked_fill(m, v)
    assert y.tolist() == [[9.0, 2.0], [9.0, 4.0]]
    y.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0], [0.0, 1.0]]
    assert v.grad.tolist() == 2.0
    i = ember.tensor([1, 2, 3]).masked_fill(ember.tensor([False, True, False]), 7)
    assert i.tolist() == [1, 7, 3] and i.dtype == ember.int64
    # the mask may broadcast self out of place
    assert ember.ones(2).masked_fill(ember.tensor([[True], [False]]), 0.0).tolist() == [[0.0, 0.0], [1.0, 1.0]]


# ---- in place


def test_inplace_and_version():
    x = ember.zeros(3)
    v = x._version
    x += 1
    x.mul_(3)
    assert x.tolist() == [3.0, 3.0, 3.0]
    assert x._version == v + 2


INPLACE = [  # (in-place form, out-of-place reference); constants on x's device
    (lambda x: x.add_(ember.ones(4, device=x.device), alpha=2), lambda x: x + 2 * ember.ones(4, device=x.device)),
    (lambda x: x.sub_(0.5), lambda x: x - 0.5),
    (lambda x: x.mul_(ember.full((3, 1), 2.0, device=x.device)),
     lambda x: x * ember.full((3, 1), 2.0, device=x.device)),
    (lambda x: x.div_(4), lambda x: x / 4),
    (lambda x: x.div_(0.3, rounding_mode="floor"), lambda x: ember.div(x, 0.3, rounding_mode="floor")),
    (lambda x: x.remainder_(0.7), lambda x: x % 0.7),
    (lambda x: x.floor_divide_(0.3), lambda x: x // 0.3),
    (lambda x: x.masked_fill_(ember.tensor([True, False, True, False], device=x.device), -1.0),
     lambda x: ember.where(ember.tensor([True, False, True, False], device=x.device), -1.0, x)),
    (lambda x: x.lerp_(ember.ones(3, 4, device=x.device), 0.3),
     lambda x: x + 0.3 * (ember.ones(3, 4, device=x.device) - x)),
    (lambda x: x.lerp_(ember.ones(4, device=x.device), ember.full((3, 4), 0.7, device=x.device)),
     lambda x: ember.ones(4, device=x.device) - 0.3 * (ember.ones(4, device=x.device) - x)),
]


@pytest.mark.parametrize("inplace, reference", INPLACE)
def test_inplace_writes_into_self(inplace, reference):
    base = random_array((3, 4))
    expected = reference(make(base))
    for x in (make(base), _transposed(base)):  # contiguous and transposed self
        ptr, v = x.data_ptr(), x._version
        r = inplace(x)
        assert x.data_ptr() == ptr and r.data_ptr() == ptr
        assert x._version == v + 1
        assert_close(x, to_numpy(expected), rtol=1e-5, atol=1e-6)


def test_inplace_matches_out_of_place():
    base = random_array((3, 4))
    other = random_array((4,))
    cases = [("add_", lambda a, b: a.add_(b), ember.add), ("sub_", lambda a, b: a.sub_(b), ember.sub),
             ("mul_", lambda a, b: a.mul_(b), ember.mul), ("div_", lambda a, b: a.div_(b), ember.div),
             ("remainder_", lambda a, b: a.remainder_(b), ember.remainder)]
    for name, inplace, outplace in cases:
        x = make(base)
        inplace(x, make(other))
        assert_close(x, outplace(make(base), make(other)), msg=name)


def test_inplace_aliasing_inputs():
    a = ember.arange(9.0).reshape(3, 3)
    ref = np.arange(9.0).reshape(3, 3)
    a.add_(a.t())  # overlaps self in another order: must read the old values
    assert_close(a, ref + ref.T)
    b = ember.arange(4.0)
    b.mul_(b)  # exactly self
    assert b.tolist() == [0.0, 1.0, 4.0, 9.0]


def test_inplace_half_and_casting():
    h = ember.ones(3, dtype=ember.float16)
    h.add_(ember.tensor([0.5, 1.0, 2.0]))
    assert h.dtype == ember.float16 and h.tolist() == [1.5, 2.0, 3.0]
    f = ember.ones(2)
    f.add_(ember.tensor([1, 2]))  # int other into a float self
    assert f.tolist() == [2.0, 3.0]
    i = ember.tensor([1, 2])
    with pytest.raises(RuntimeError, match="add_: result type float32 can't be cast to the desired output type int64"):
        i.add_(1.5)
    b = ember.tensor([True, False])
    b.add_(ember.tensor([False, True]))
    assert b.tolist() == [True, True]


def test_inplace_under_autograd():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.add_(x, alpha=3)
    y.mul_(x)
    assert y.grad_fn is not None
    y.sum().backward()  # y = 5 x^2
    assert x.grad.tolist() == [10.0, 20.0]
    w = ember.ones(3, requires_grad=True)
    with ember.no_grad():  # an optimizer step: fast path, w stays a leaf
        w.add_(ember.full((3,), 2.0), alpha=-0.5)
        w.lerp_(ember.zeros(3), 0.5)
    assert w.tolist() == [0.0, 0.0, 0.0] and w.is_leaf and w.requires_grad


def test_inplace_on_leaf_requiring_grad_raises():
    w = ember.ones(3, requires_grad=True)
    for op in (lambda: w.add_(1), lambda: w.masked_fill_(ember.tensor([True, False, True]), 0.0),
               lambda: w.lerp_(ember.zeros(3), 0.5), lambda: w.remainder_(2)):
        with pytest.raises(RuntimeError, match="leaf Variable"):
            op()
    with ember.no_grad():
        w.add_(1)
    assert w.tolist() == [2.0, 2.0, 2.0]


def test_inplace_modification_detected_by_backward():
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = b * b  # saves b
    b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


def test_inplace_errors():
    with pytest.raises(RuntimeError, match=r"add_: output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        ember.ones(3).add_(ember.ones(2, 3))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        ember.ones(1, 3).expand(2, 3).mul_(2)
    with pytest.raises(RuntimeError, match="copy_: unsupported operation: more than one element of the written-to"):
        ember.ones(1, 3).expand(2, 3).copy_(ember.ones(2, 3))
    with pytest.raises(RuntimeError, match="scatter_: unsupported operation: more than one element of the written-to"):
        ember.ones(1, 3).expand(2, 3).scatter_(1, ember.tensor([[0], [1]]), 2.0)
    expanded = ember.ones(1, 3).expand(2, 3)
    expanded.fill_(2.0)  # fill_ writes one value everywhere: torch allows it
    assert expanded.tolist() == [[2.0] * 3] * 2
    with pytest.raises(RuntimeError, match=r"masked_fill_: mask of shape \[2, 3\] cannot be broadcast"):
        ember.ones(3).masked_fill_(ember.ones(2, 3) > 0, 1.0)


# ---- half precision (computed in float32 on the CPU)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_types(dtype):
    dt = getattr(ember, dtype)
    a32 = ember.tensor([[1.5, -2.25, 3.0], [0.5, 7.0, -1.0]])
    b32 = ember.tensor([2.0, 0.75, -4.0])
    a, b = a32.to(dt), b32.to(dt)
    for fn in (ember.add, ember.mul, ember.div, ember.maximum, ember.minimum, ember.remainder,
               lambda x, y: x // y, lambda x, y: ember.lerp(x, y.expand(2, 3), 0.25),
               lambda x, y: x.masked_fill(y > 0, 0.5), lambda x, y: ember.where(x > y, x, y)):
        r = fn(a, b)
        assert r.dtype == dt
        assert_close(r.float(), fn(a32, b32).to(dt).float(), rtol=1e-2, atol=1e-2)
    assert (a == b).dtype == ember.bool and (a < b).tolist() == (a32 < b32).tolist()
    assert ember.logical_not(a).dtype == ember.bool


# ---- errors


def test_broadcast_error_names_op_and_shapes():
    with pytest.raises(RuntimeError, match=r"add: shapes \[2, 3\] and \[4\]"):
        ember.ones(2, 3) + ember.ones(4)
    for name, fn in [("maximum", ember.maximum), ("eq", ember.eq), ("remainder", ember.remainder),
                     ("logical_and", ember.logical_and)]:
        with pytest.raises(RuntimeError, match=rf"{name}: shapes \[2, 3\] and \[4\]"):
            fn(ember.ones(2, 3), ember.ones(4))
    with pytest.raises(RuntimeError, match=r"where: shapes"):
        ember.where(ember.ones(2, 3) > 0, ember.ones(4), 0.0)
    with pytest.raises(RuntimeError, match=r"lerp: shapes"):
        ember.lerp(ember.ones(2), ember.ones(3), 0.5)
    with pytest.raises(RuntimeError, match=r"masked_fill: shapes"):
        ember.ones(2).masked_fill(ember.ones(3) > 0, 1.0)


def test_wrong_argument_type():
    with pytest.raises(TypeError, match="add"):
        ember.ones(2) + "a"
    with pytest.raises(TypeError, match="floor_divide"):
        ember.ones(2) // "a"


@pytest.mark.parametrize("fn, match", [
    (lambda: ember.tensor([True]) - ember.tensor([False]), "sub: subtraction, the `-` operator, with two bool"),
    (lambda: ember.ones(2) - True, "sub: subtraction, the `-` operator, with a bool tensor"),
    (lambda: ember.ones(2).add(1, alpha=True), "add: boolean alpha"),
    (lambda: ember.tensor([1]).add(1, alpha=0.5), "add: for integral input tensors"),
    (lambda: ember.tensor([True]) // ember.tensor([True]), "floor_divide: floor division is not implemented for bool"),
    (lambda: ember.div(ember.tensor([True]), True, rounding_mode="trunc"), "div: trunc division"),
    (lambda: ember.tensor([True]) % ember.tensor([True]), "remainder: not implemented for bool"),
    (lambda: ember.div(ember.ones(2), 2, rounding_mode="round"), "div: expected rounding_mode"),
    (lambda: ember.ones(2) & ember.ones(2), "bitwise_and: not implemented for float32"),
    (lambda: ~ember.ones(2), "bitwise_not: not implemented for float32"),
    (lambda: ember.where(ember.ones(2), 1.0, 0.0), "where: expected condition to be a boolean tensor"),
    (lambda: ember.ones(2).masked_fill(ember.ones(2), 0.0), "masked_fill: only supports boolean masks"),
    (lambda: ember.ones(2).masked_fill(ember.ones(2) > 0, ember.ones(1)), "masked_fill: only supports a 0-dim"),
    (lambda: ember.lerp(ember.tensor([1, 2]), ember.tensor([3, 4]), 0.5), "lerp: expected floating point"),
    (lambda: ember.lerp(ember.ones(2), ember.ones(2, dtype=ember.float64), 0.5), "lerp: expected dtype float32 for `end`"),
])
def test_bad_input_raises_runtime_error(fn, match):
    with pytest.raises(RuntimeError, match=match):
        fn()


def test_zero_dim_and_empty():
    a = ember.tensor(7.0)
    b = ember.tensor(2.0)
    for r in (a // b, a % b, ember.maximum(a, b), a == b, ember.where(a > b, a, b), ember.lerp(a, b, 0.5),
              a.masked_fill(ember.tensor(True), 0.0), ember.logical_not(a)):
        assert r.shape == ()
    assert (a // b).item() == 3.0 and (a % b).item() == 1.0 and ember.lerp(a, b, 0.5).item() == 4.5
    e = ember.ones(0, 3)
    assert (e // 2).shape == (0, 3) and (e == e).shape == (0, 3) and ember.where(e > 0, e, 1.0).shape == (0, 3)
    e.add_(1)
    assert e.shape == (0, 3)


def test_equal_is_torch_equal():
    a = ember.tensor([1, 2, 3])
    assert ember.equal(a, ember.tensor([1, 2, 3])) is True
    assert a.equal(ember.tensor([1.0, 2.0, 3.0]))                 # dtypes are promoted, not compared
    assert not ember.equal(a, ember.tensor([1, 2, 4]))
    assert not ember.equal(a, a.reshape(1, 3))                    # same elements, other shape: no broadcasting
    assert not ember.equal(ember.tensor([1.0, math.nan]), ember.tensor([1.0, math.nan]))  # NaN is never equal
    assert ember.equal(ember.zeros(0, 3), ember.ones(0, 3))       # empty tensors of one shape
    t = make(random_array((4, 5)))
    assert ember.equal(t.t(), make(np.ascontiguousarray(to_numpy(t).T)))  # layouts do not matter
    assert ember.equal(ember.tensor(2.0), ember.tensor(2))
    with pytest.raises(TypeError):
        ember.equal(a, [1, 2, 3])


@pytest.mark.parametrize("dtype", [ember.bool, ember.uint8, ember.int32, ember.int64, ember.float32, ember.float64])
def test_equal_of_large_contiguous_tensors_finds_one_difference_anywhere(dtype):
    # Contiguous tensors of one dtype are compared in blocks that stop at the first difference.
    a = (ember.arange(100_003) % 7).to(dtype)
    assert ember.equal(a, a.clone())
    for at in (0, 16_383, 16_384, 50_000, 100_002):
        b = a.clone()
        b[at] = 1 - b[at].item() if dtype == ember.bool else b[at].item() + 1
        assert not ember.equal(a, b) and not ember.equal(b, a)
    if dtype.is_floating_point:
        z = ember.zeros(40_000, dtype=dtype)
        assert ember.equal(z, -z)  # -0.0 == 0.0
        z[39_999] = math.nan
        assert not ember.equal(z, z.clone())


@needs_gpu
def test_equal_on_cuda_and_across_devices():
    x = ember.arange(6).reshape(2, 3)
    assert ember.equal(x.cuda(), x.cuda()) and not ember.equal(x.cuda(), (x + 1).cuda())
    with pytest.raises(RuntimeError, match="equal.*cpu.*cuda|equal.*cuda.*cpu"):
        ember.equal(x.cuda(), x)


@pytest.mark.parametrize("perm", [(1, 0, 2), (0, 2, 1), (2, 1, 0), (1, 2, 0)])
def test_results_follow_a_permuted_operands_layout(perm):
    # An elementwise result is laid out as its first full-shape operand when that one is dense but
    # permuted (PyTorch's rule), so the op is one pass in memory order; values are unchanged, and
    # an in-place op on a permuted tensor walks it in memory order too.
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 4, 3, 5)), rng.standard_normal((2, 4, 3, 5))
    x = make(a).permute(0, *(p + 1 for p in perm))
    y = make(b).permute(0, *(p + 1 for p in perm))
    want_x, want_y = np.transpose(a, (0, *(p + 1 for p in perm))), np.transpose(b, (0, *(p + 1 for p in perm)))
    for got, want in ((x * y, want_x * want_y), (x + 1.5, want_x + 1.5), (x.exp(), np.exp(want_x)),
                      (x - make(want_y.copy()), want_x - want_y), (x > y, want_x > want_y)):
        assert got.stride() == x.stride() and got.shape == x.shape
        np.testing.assert_allclose(to_numpy(got), want, rtol=1e-6)
    bias = make(rng.standard_normal(want_x.shape[-1]))
    np.testing.assert_allclose(to_numpy(x + bias), want_x + to_numpy(bias), rtol=1e-6)
    contiguous_first = make(want_y.copy()) + x  # a contiguous first operand decides: contiguous
    assert contiguous_first.is_contiguous()
    np.testing.assert_allclose(to_numpy(contiguous_first), want_y + want_x, rtol=1e-6)
    z = make(a).permute(0, *(p + 1 for p in perm))
    z.mul_(y)
    np.testing.assert_allclose(to_numpy(z), want_x * want_y, rtol=1e-6)
    if torch is not None:
        tx = torch.from_numpy(a).permute(0, *(p + 1 for p in perm))
        assert (tx * tx).stride() == (x * x).stride()
