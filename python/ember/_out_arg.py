"""The `out=` keyword of PyTorch's functions (ember.add(a, b, out=c),
ember.max(x, 1, out=(values, indices)), ember.linalg.inv(A, out=B), ...).

Each function in NAMES is replaced, in its namespace, by a wrapper that takes a
keyword-only `out`. Without it the wrapper calls the function straight through.
With it, the function computes its result as usual and the result is copied into
`out` (no kernel writes into `out` directly), after torch's checks: `out` is a
Tensor (a tuple of them for functions returning several tensors) on the
result's device, the result's dtype casts to out's, nothing requires grad while
grad mode is on, and an `out` of another shape is resized (with torch's warning
when it had elements). The call returns `out` (or the function's named tuple
holding the out tensors).

Factories (zeros, arange, rand, ...) make their result in out's dtype and on its
device unless the call names them, as torch's do.
"""
import functools
import warnings

import ember
from ember import _C, fft, linalg, special
from ember._tensor_api_extra import write_back

# The functions that take `out=` in PyTorch and exist in ember, as "name" (ember)
# or "linalg.name" / "special.name" / "fft.name". Derived once from PyTorch's
# native_functions.yaml (torchgen/packaged/ATen/native/): the public functions
# with an out overload (schema kind "out": keyword-only mutable tensor
# arguments), each confirmed to accept out= through torch's Python binding, and
# present in ember. None of ember's takes out itself (chain_matmul declares it
# only to raise NotImplementedError; the wrapper supplies it).
NAMES = (
    'abs', 'absolute', 'acos', 'acosh', 'add', 'addbmm', 'addcdiv', 'addcmul', 'addmm', 'addmv', 'addr', 'all',
    'amax', 'amin', 'aminmax', 'angle', 'any', 'arange', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan',
    'arctan2', 'arctanh', 'argmax', 'argmin', 'argsort', 'asin', 'asinh', 'atan', 'atan2', 'atanh', 'baddbmm',
    'bernoulli', 'bitwise_and', 'bitwise_left_shift', 'bitwise_not', 'bitwise_or', 'bitwise_right_shift',
    'bitwise_xor', 'bmm', 'bucketize', 'cat', 'ceil', 'chain_matmul', 'cholesky_inverse', 'cholesky_solve', 'clamp',
    'clamp_max', 'clamp_min', 'clip', 'column_stack', 'complex', 'concat', 'concatenate', 'conj_physical',
    'copysign', 'cos', 'cosh', 'cross', 'cummax', 'cummin', 'cumprod', 'cumsum', 'deg2rad', 'diag', 'diff',
    'digamma', 'div', 'divide', 'dot', 'dstack', 'empty', 'eq', 'erf', 'erfc', 'erfinv', 'exp', 'exp2', 'expm1',
    'eye', 'fft.fft', 'fft.fft2', 'fft.fftfreq', 'fft.fftn', 'fft.hfft', 'fft.hfft2', 'fft.hfftn', 'fft.ifft',
    'fft.ifft2', 'fft.ifftn', 'fft.ihfft', 'fft.ihfft2', 'fft.ihfftn', 'fft.irfft', 'fft.irfft2', 'fft.irfftn',
    'fft.rfft', 'fft.rfft2', 'fft.rfftfreq', 'fft.rfftn', 'fix', 'float_power', 'floor', 'floor_divide', 'fmax',
    'fmin', 'fmod', 'frac', 'frexp', 'full', 'gather', 'gcd', 'ge', 'ger', 'greater', 'greater_equal', 'gt',
    'hardshrink', 'heaviside', 'histc', 'histogram', 'hstack', 'hypot', 'i0', 'igamma', 'igammac', 'index_add',
    'index_copy', 'index_reduce', 'index_select', 'inner', 'inverse', 'isin', 'isneginf', 'isposinf', 'kron',
    'kthvalue', 'lcm', 'ldexp', 'le', 'lerp', 'less', 'less_equal', 'lgamma', 'linalg.cholesky',
    'linalg.cholesky_ex', 'linalg.cond', 'linalg.cross', 'linalg.det', 'linalg.eigh', 'linalg.eigvalsh',
    'linalg.inv', 'linalg.inv_ex', 'linalg.lstsq', 'linalg.lu', 'linalg.lu_factor', 'linalg.lu_factor_ex',
    'linalg.lu_solve', 'linalg.matmul', 'linalg.matrix_norm', 'linalg.matrix_power', 'linalg.matrix_rank',
    'linalg.multi_dot', 'linalg.norm', 'linalg.pinv', 'linalg.qr', 'linalg.slogdet', 'linalg.solve',
    'linalg.solve_ex', 'linalg.solve_triangular', 'linalg.svd', 'linalg.svdvals', 'linalg.tensorinv',
    'linalg.tensorsolve', 'linalg.vecdot', 'linalg.vector_norm', 'linspace', 'log', 'log10', 'log1p', 'log2',
    'log_softmax', 'logaddexp', 'logaddexp2', 'logcumsumexp', 'logical_and', 'logical_not', 'logical_or',
    'logical_xor', 'logit', 'logspace', 'logsumexp', 'lt', 'lu_solve', 'masked_select', 'matmul', 'matrix_power',
    'max', 'maximum', 'mean', 'median', 'min', 'minimum', 'mm', 'mode', 'msort', 'mul', 'multinomial', 'multiply',
    'mv', 'mvlgamma', 'nan_to_num', 'nanmean', 'nanmedian', 'nanquantile', 'nansum', 'narrow_copy', 'ne', 'neg',
    'negative', 'nextafter', 'nonzero', 'nonzero_static', 'norm', 'normal', 'not_equal', 'ones', 'outer', 'polar',
    'polygamma', 'pow', 'prod', 'quantile', 'rad2deg', 'rand', 'randint', 'randn', 'randperm', 'reciprocal',
    'remainder', 'renorm', 'round', 'row_stack', 'rsqrt', 'scatter', 'scatter_add', 'scatter_reduce',
    'searchsorted', 'sgn', 'sigmoid', 'sign', 'signbit', 'sin', 'sinc', 'sinh', 'slogdet', 'softmax', 'sort',
    'special.bessel_j0', 'special.bessel_j1', 'special.digamma', 'special.entr', 'special.erf', 'special.erfc',
    'special.erfcx', 'special.erfinv', 'special.exp2', 'special.expit', 'special.expm1', 'special.gammainc',
    'special.gammaincc', 'special.gammaln', 'special.i0', 'special.i0e', 'special.i1', 'special.i1e',
    'special.log1p', 'special.log_ndtr', 'special.logit', 'special.logsumexp', 'special.multigammaln',
    'special.ndtr', 'special.ndtri', 'special.polygamma', 'special.psi', 'special.round', 'special.sinc',
    'special.spherical_bessel_j0', 'special.xlog1py', 'special.xlogy', 'special.zeta', 'sqrt', 'square', 'stack',
    'std', 'sub', 'subtract', 'sum', 'svd', 'take', 'take_along_dim', 'tan', 'tanh', 'tensordot', 'threshold',
    'topk', 'triangular_solve', 'tril', 'triu', 'true_divide', 'trunc', 'var', 'vdot', 'vstack', 'where', 'xlogy',
    'zeros',
)

# Factories: with out= and no dtype / device of their own they make the result in out's.
FACTORIES = frozenset({
    'arange', 'empty', 'eye', 'full', 'linspace', 'logspace', 'ones', 'zeros', 'rand', 'randn', 'randint',
    'randperm', 'fft.fftfreq', 'fft.rfftfreq',
})

Tensor = _C.Tensor


def _numbers_only(args, kwargs):
    """normal(mean, std, size) of two numbers makes a tensor like a factory; of tensors it does not."""
    return not any(isinstance(a, Tensor) for a in list(args[:2]) + [kwargs.get("mean"), kwargs.get("std")])


# Ops that are factories for some arguments only: the test on (args, kwargs).
SOMETIMES_FACTORIES = {"normal": _numbers_only}

_NAMESPACES = {"": ember, "linalg": linalg, "special": special, "fft": fft}


def _dtype_name(dtype):
    return str(dtype).rpartition(".")[2]  # ember.float32 -> float32, as ember's C++ messages


def _shape(t):
    return list(t.shape)


def _outs_of(op, out):
    """out as a tuple of tensors; a TypeError for anything else."""
    if isinstance(out, Tensor):
        return (out,)
    if isinstance(out, (tuple, list)) and out and all(isinstance(t, Tensor) for t in out):
        return tuple(out)
    raise TypeError(f"{op}: argument 'out' must be a Tensor or a tuple of Tensors, not {type(out).__name__}")


def _factory_kwargs(op, kwargs, out):
    dtype = kwargs.get("dtype")
    if dtype is None:
        kwargs["dtype"] = out.dtype
    elif dtype != out.dtype:
        raise RuntimeError(f"{op}: dtype {_dtype_name(dtype)} was asked for, but out has dtype "
                           f"{_dtype_name(out.dtype)}")
    if kwargs.get("device") is None:
        kwargs["device"] = out.device
    return kwargs


def _check(op, result, out):
    if not isinstance(result, Tensor):
        raise TypeError(f"{op}: out= takes a tensor only where the result is one (got {type(result).__name__})")
    if result.device != out.device:
        raise RuntimeError(f"{op}: out is on device {out.device}, but the result is on {result.device}")
    if not ember.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"{op}: result type {_dtype_name(result.dtype)} can't be cast to the desired output "
                           f"type {_dtype_name(out.dtype)}")


def _write(op, result, out):
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0:
            warnings.warn(f"{op}: out of shape {_shape(out)} was resized to the result's shape {_shape(result)}; "
                          f"PyTorch deprecates resizing an out that holds elements (give it zero elements first, "
                          f"out.resize_(0), to reuse it)", UserWarning, stacklevel=4)
        out.resize_(result.shape)
    write_back(op, out, result)


def _call_with_out(fn, op, factory, args, kwargs, out):
    outs = _outs_of(op, out)
    if callable(factory):
        factory = factory(args, kwargs)
    if factory:
        if len(outs) != 1 or not isinstance(out, Tensor):
            raise TypeError(f"{op}: argument 'out' must be a Tensor, not {type(out).__name__}")
        kwargs = _factory_kwargs(op, kwargs, out)
    result = fn(*args, **kwargs)
    several = isinstance(result, tuple)
    results = tuple(result) if several else (result,)
    if several != (not isinstance(out, Tensor)) or len(results) != len(outs):
        want = f"a tuple of {len(results)} Tensors" if several else "a Tensor"
        got = f"a tuple of {len(outs)}" if several and not isinstance(out, Tensor) else type(out).__name__
        raise TypeError(f"{op}: argument 'out' must be {want}, not {got}")
    if ember.is_grad_enabled() and any(isinstance(r, Tensor) and r.requires_grad for r in results + outs):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic differentiation, "
                           f"but one of the arguments requires grad.")
    for r, o in zip(results, outs):  # every check before any write
        _check(op, r, o)
    for r, o in zip(results, outs):
        _write(op, r, o)
    if not several:
        return out
    return outs if type(result) is tuple else type(result)(*outs)


def with_out(fn, op, factory=False):
    """fn with a keyword-only `out` (op names it in messages, e.g. "linalg.inv"); factory: whether
    out's dtype and device are passed to fn, or a test of (args, kwargs) that says so."""
    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        return _call_with_out(fn, op, factory, args, kwargs, out)
    wrapper._ember_out_arg = (op, factory)  # how to wrap __wrapped__ again (tests/python/sim_device.py does)
    return wrapper


def install():
    """Wraps every NAMES function its namespace has (once: a second call changes nothing)."""
    for op in NAMES:
        namespace, _, name = op.rpartition(".")
        owner = _NAMESPACES[namespace]
        fn = getattr(owner, name, None)
        if fn is None or getattr(fn, "_ember_out_arg", False):
            continue
        setattr(owner, name, with_out(fn, op, SOMETIMES_FACTORIES.get(op, op in FACTORIES)))


install()
