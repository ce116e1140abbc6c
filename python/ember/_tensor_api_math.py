"""Elementwise math PyTorch has and ember's kernels did not: sgn, signbit,
heaviside, gcd/lcm, fmax/fmin, float_power, deg2rad/rad2deg, sinc, i0, ldexp,
frexp, nextafter, mvlgamma, renorm and dist. Each is composed of ember ops, so
it runs on every device those run on and is differentiable where torch's is.
Integer inputs of the floating functions compute in the default dtype."""
import collections
import math

import ember
from ember import _C
from ember._float_input import floating
from ember._tensor_api_extra import add_methods

Tensor = _C.Tensor

_INT_DTYPES = None


def _int_dtypes():
    global _INT_DTYPES
    if _INT_DTYPES is None:
        names = ("uint8", "int8", "int16", "int32", "int64")
        _INT_DTYPES = tuple(getattr(ember, n) for n in names if hasattr(ember, n))
    return _INT_DTYPES


def _check_tensor(op, name, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(value).__name__}")


def _promoted(op, a, b):
    _check_tensor(op, "input", a)
    _check_tensor(op, "other", b)
    dtype = ember.result_type(a, b)
    return a.to(dtype), b.to(dtype), dtype


def wrap_dim(op, dim, ndim):
    """dim as an index in [0, ndim) (a 0-d tensor counts as 1-D); IndexError when out of range."""
    ndim = max(ndim, 1)
    if not -ndim <= dim < ndim:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                         f"but got {dim})")
    return dim % ndim


def _return_type(name, fields):
    existing = getattr(_C.return_types, name, None)
    if existing is not None:
        return existing
    cls = collections.namedtuple(name, fields)
    cls.__module__ = "ember.return_types"
    setattr(_C.return_types, name, cls)
    return cls


_frexp_t = _return_type("frexp", ("mantissa", "exponent"))


# ---- signs and steps

def sgn(input):
    """The sign of each element (sign, for real tensors)."""
    return ember.sign(input)


def signbit(input):
    """True where the sign bit is set: negative numbers, -0.0 and -nan."""
    if input.dtype == ember.bool:
        return ember.zeros(input.shape, dtype=ember.bool, device=input.device)
    if not input.is_floating_point():
        return input < 0
    return ember.copysign(ember.ones_like(input), input.detach()) < 0


def heaviside(input, values):
    """0 where input < 0, values where input == 0, 1 where input > 0. Not
    differentiable (torch has no derivative for it): the result does not require grad."""
    _check_tensor("heaviside", "input", input)
    _check_tensor("heaviside", "values", values)
    if input.dtype != values.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes. "
                           f"Got {input.dtype} and {values.dtype}")
    x, v = input.detach(), values.detach()
    return ember.where(x == 0, v, (x > 0).to(x.dtype))


# ---- integer arithmetic

def _check_integral(op, dtype):
    if dtype not in _int_dtypes():
        raise NotImplementedError(f"{op}: not implemented for {dtype}; it takes integer tensors")


def gcd(input, other):
    """The greatest common divisor of |input| and |other| (0 for two zeros)."""
    a, b, dtype = _promoted("gcd", input, other)
    _check_integral("gcd", dtype)
    a, b = ember.broadcast_tensors(a.abs(), b.abs())
    # Euclid's steps on every element at once until every remainder is 0.
    while bool((b != 0).any()):
        nonzero = b != 0
        a, b = ember.where(nonzero, b, a), ember.where(nonzero, a % ember.where(nonzero, b, ember.ones_like(b)), b)
    return a


def lcm(input, other):
    """The least common multiple of |input| and |other| (0 when either is 0)."""
    a, b, dtype = _promoted("lcm", input, other)
    _check_integral("lcm", dtype)
    g = gcd(a, b)
    zero = g == 0
    return ember.where(zero, ember.zeros_like(g), (a // ember.where(zero, ember.ones_like(g), g) * b).abs())


# ---- NaN-ignoring max and min

def fmax(input, other):
    """The elementwise maximum, where a NaN loses to a number (NaN only when both are NaN)."""
    a, b, _ = _promoted("fmax", input, other)
    return ember.where((a >= b) | ember.isnan(b), a, b)


def fmin(input, other):
    """The elementwise minimum, where a NaN loses to a number (NaN only when both are NaN)."""
    a, b, _ = _promoted("fmin", input, other)
    return ember.where((a <= b) | ember.isnan(b), a, b)


# ---- powers and angles

def _float_power_dtype(input, exponent):
    """complex128 when either operand is complex, else float64."""
    is_complex = any(v.is_complex() if isinstance(v, Tensor) else isinstance(v, complex) for v in (input, exponent))
    return ember.complex128 if is_complex else ember.float64


def float_power(input, exponent):
    """input ** exponent computed in float64, or complex128 when either is complex (either may be a
    Python number)."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power(): expected at least one Tensor argument")
    dtype = _float_power_dtype(input, exponent)
    device = (input if isinstance(input, Tensor) else exponent).device

    def operand(v):
        if isinstance(v, Tensor):
            return v.to(dtype)
        return ember.tensor(v, dtype=dtype, device=device) if isinstance(v, complex) else float(v)
    return ember.pow(operand(input), operand(exponent))


def deg2rad(input):
    """Degrees to radians."""
    return floating(input, "deg2rad") * (math.pi / 180.0)


def rad2deg(input):
    """Radians to degrees."""
    return floating(input, "rad2deg") * (180.0 / math.pi)


def sinc(input):
    """sin(pi x) / (pi x), 1 at x = 0 (with gradient 0 there): special.sinc."""
    from ember.special import sinc as special_sinc
    return special_sinc(input)


def ldexp(input, other):
    """input * 2 ** other."""
    _check_tensor("ldexp", "input", input)
    _check_tensor("ldexp", "other", other)
    return input * ember.pow(2.0, other)


# ---- the modified Bessel function I0

_I0_SERIES_BELOW = 30.0  # |x| up to here: the power series; beyond: the asymptotic expansion


def _i0_float64(a):
    """I0 of a float64 tensor a >= 0. The power series sum (x/2)^2k / (k!)^2
    has reached float64 precision after 70 terms for |x| <= 30; beyond, the
    asymptotic expansion's smallest term (about e^-2x) is far below it. Each
    branch reads safe stand-in values where the other one is chosen, so
    neither produces inf or NaN that a gradient could pick up."""
    small = a <= _I0_SERIES_BELOW
    xs = ember.where(small, a, ember.zeros_like(a))
    y = (xs * 0.5) ** 2
    term = ember.ones_like(a)
    total = ember.ones_like(a)
    for k in range(1, 71):
        term = term * y / float(k * k)
        total = total + term
    xl = ember.where(small, ember.full_like(a, 2 * _I0_SERIES_BELOW), a)
    coeff, inv, series = 1.0, 1.0 / xl, ember.ones_like(a)
    power = ember.ones_like(a)
    for k in range(1, 21):
        coeff *= (2 * k - 1) ** 2 / (8.0 * k)
        power = power * inv
        series = series + coeff * power
    large = ember.exp(xl - 0.5 * ember.log(2 * math.pi * xl)) * series
    return ember.where(small, total, large)


def i0(input):
    """The zeroth-order modified Bessel function of the first kind."""
    x = floating(input, "i0")
    return _i0_float64(x.to(ember.float64).abs()).to(x.dtype)


# ---- mantissa and exponent

def _pow2(e):
    """2.0 ** e in float64 for an int64 tensor e in [-1074, 1023], exact: the product of the
    powers 2 ** (+-2 ** i) that e's bits pick, each partial product a power of two in range
    (CUDA's pow(2.0, e) can be an ulp off)."""
    e = e.to(ember.int64)
    magnitude = e.abs()
    base = ember.where(e < 0, ember.full_like(e, 0.5, dtype=ember.float64),
                       ember.full_like(e, 2.0, dtype=ember.float64))
    result = ember.ones_like(base)
    for i in range(11):  # 2 ** 11 > 1074
        picked = (magnitude // (1 << i)) % 2 == 1
        result = ember.where(picked, result * base, result)
        base = base * base
    return result


def _frexp_float64(x):
    """(mantissa, exponent) of a float64 tensor with x = m * 2**e, 0.5 <= |m| < 1."""
    a = x.detach().abs()
    regular = (a != 0) & ember.isfinite(a)
    safe = ember.where(regular, a, ember.ones_like(a))
    e = ember.floor(ember.log2(safe)).to(ember.int64) + 1
    # log2 may round across a power of two: fix the exponent by one step.
    half = e // 2
    m = safe / _pow2(half) / _pow2(e - half)
    e = e + (m >= 1).to(ember.int64) - (m < 0.5).to(ember.int64)
    e = ember.where(regular, e, ember.zeros_like(e))
    half = e // 2
    mantissa = x / _pow2(half) / _pow2(e - half)  # exact: division by powers of two
    return mantissa, e


def frexp(input):
    """(mantissa, exponent) with input = mantissa * 2 ** exponent, 0.5 <= |mantissa| < 1
    (0, inf and nan keep their value with exponent 0); exponent is int32."""
    if not input.is_floating_point():
        raise RuntimeError(f"frexp: only supports floating-point dtypes, got {input.dtype}")
    m, e = _frexp_float64(input.to(ember.float64))
    return _frexp_t(m.to(input.dtype), e.to(ember.int32))


_FLOAT_BITS = None


def _float_bits(dtype):
    """(mantissa bits incl. the hidden one, smallest subnormal's exponent, largest finite)."""
    global _FLOAT_BITS
    if _FLOAT_BITS is None:
        _FLOAT_BITS = {ember.float32: (24, -149, 3.4028234663852886e38),
                       ember.float64: (53, -1074, 1.7976931348623157e308)}
    return _FLOAT_BITS.get(dtype)


def nextafter(input, other):
    """The next representable value after input in the direction of other (float32/float64)."""
    x, y, dtype = _promoted("nextafter", input, other)
    bits = _float_bits(dtype)
    if bits is None:
        raise NotImplementedError(f"nextafter: not implemented for {dtype}; it takes float32 or float64 tensors")
    digits, tiny_exp, largest = bits
    x, y = ember.broadcast_tensors(x.detach(), y.detach())
    x64, y64 = x.to(ember.float64), y.to(ember.float64)
    m, e = _frexp_float64(x64)
    # The gap to the next value away from zero is 2^(e - digits); toward zero
    # it halves when |x| is a power of two. Subnormals share the smallest gap.
    up = e - digits
    down = up - (m.abs() == 0.5).to(ember.int64)
    floor = ember.full_like(up, tiny_exp)
    up, down = ember.maximum(up, floor), ember.maximum(down, floor)
    toward_up = y64 > x64
    away_from_zero = toward_up == (x64 > 0)
    gap = _pow2(ember.where(away_from_zero, up, down))
    step = x64 + ember.where(toward_up, gap, -gap)
    tiny = _pow2(floor)
    step = ember.where(x64 == 0, ember.where(toward_up, tiny, -tiny), step)
    step = ember.where(ember.isinf(x64), ember.sign(x64) * largest, step)
    step = ember.where(x64 == y64, y64, step)
    step = ember.where(ember.isnan(x64) | ember.isnan(y64), ember.full_like(x64, float("nan")), step)
    return step.to(dtype)


# ---- special functions and norms

def mvlgamma(input, p):
    """The multivariate log-gamma of dimension p: sum_{j<p} lgamma(x - j/2) +
    p(p-1)/4 log(pi). It is defined for x > (p-1)/2; like torch (2.x), other
    values are not refused and give lgamma's values there."""
    if p < 1:
        raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1, got {p}")
    x = floating(input, "mvlgamma")
    total = ember.lgamma(x)
    for j in range(1, p):
        total = total + ember.lgamma(x - j / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)


def renorm(input, p, dim, maxnorm):
    """Each slice along dim whose p-norm exceeds maxnorm, scaled down to norm maxnorm."""
    if not input.is_floating_point():
        raise RuntimeError(f"renorm: expected a floating point tensor, got {input.dtype}")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p = {p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    d = wrap_dim("renorm", dim, input.dim())
    others = tuple(i for i in range(input.dim()) if i != d)
    norms = ember.norm(input, float(p), others, True)
    factor = ember.where(norms > maxnorm, maxnorm / (norms + 1e-7), ember.ones_like(norms))
    return input * factor


def dist(input, other, p=2):
    """The p-norm of input - other (broadcast)."""
    _check_tensor("dist", "input", input)
    _check_tensor("dist", "other", other)
    diff = input - other
    if not diff.is_floating_point():
        raise NotImplementedError(f"dist: input dtype should be floating point, got {diff.dtype}")
    return ember.norm(diff, float(p))


def _polygamma_method(self, n):
    return ember.polygamma(n, self)


FUNCTIONS = dict(sgn=sgn, signbit=signbit, heaviside=heaviside, gcd=gcd, lcm=lcm, fmax=fmax, fmin=fmin,
                 float_power=float_power, deg2rad=deg2rad, rad2deg=rad2deg, sinc=sinc, i0=i0, ldexp=ldexp,
                 frexp=frexp, nextafter=nextafter, mvlgamma=mvlgamma, renorm=renorm, dist=dist)

add_methods(dict(FUNCTIONS, polygamma=_polygamma_method))
