"""Statistics PyTorch has and ember lacked: nanmedian, nanquantile, mode, cov
and corrcoef, built from sort, gather and matmul (so they run on every device
those run on, and the values are differentiable through gather)."""
import math

import ember
from ember import _C
from ember._tensor_api_extra import add_methods
from ember._float_input import floating
from ember._tensor_api_math import _return_type, wrap_dim

Tensor = _C.Tensor

_nanmedian_t = _return_type("nanmedian", ("values", "indices"))
_mode_t = _return_type("mode", ("values", "indices"))


def _check_dim_size(op, x, dim):
    if x.shape[dim] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {dim} to have non-zero size.")


def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the values that are not NaN (NaN when all are):
    of all elements, or (values, indices) along dim."""
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            return ember.full((), float("nan"), dtype=input.dtype, device=input.device)
        count = int((~ember.isnan(flat)).sum()) if flat.is_floating_point() else flat.numel()
        return ember.sort(flat, stable=True).values[max((count - 1) // 2, 0)]
    x = input if input.dim() else input.reshape(1)
    _check_dim_size("nanmedian", x, dim)
    values, order = ember.sort(x, dim=dim, stable=True)  # NaNs sort last
    if x.is_floating_point():
        count = (~ember.isnan(x)).sum(dim, keepdim=True)
    else:
        count = ember.full(values.narrow(dim, 0, 1).shape, x.shape[dim], dtype=ember.int64, device=x.device)
    k = ((count - 1) // 2).clamp(min=0)
    index = order.gather(dim, k)
    value = x.gather(dim, index)
    if not keepdim:
        value, index = value.squeeze(dim), index.squeeze(dim)
    return _nanmedian_t(value, index)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile over the values that are not NaN (NaN for a slice of only NaNs)."""
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"nanquantile() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                         f"Got {interpolation}")
    if not input.is_floating_point():
        raise RuntimeError(f"nanquantile() input tensor must be either float or double dtype, got {input.dtype}")
    scalar_q = not isinstance(q, Tensor)
    if not scalar_q and q.dim() > 1:
        raise RuntimeError(f"nanquantile() q must be a scalar or 1D tensor, got {q.dim()}D")
    qs = [float(q)] if scalar_q else [float(v) for v in q.reshape(-1).tolist()]
    if any(not 0 <= v <= 1 for v in qs):
        raise RuntimeError("nanquantile() q values must be in the range [0, 1]")
    x = input.reshape(-1) if dim is None else (input if input.dim() else input.reshape(1))
    d = 0 if dim is None else dim
    if x.shape[d] == 0:
        raise IndexError("nanquantile() input tensor must be non-empty")
    values = ember.sort(x, dim=d).values  # NaNs last: the first `count` are the numbers
    count = (~ember.isnan(x)).sum(d, keepdim=True).to(ember.float64)
    last = (count - 1).clamp(min=0)
    outs = []
    for v in qs:
        pos = last * v
        lo = pos.floor()
        hi = pos.ceil()
        frac = pos - lo
        if interpolation == "nearest":
            lo = hi = pos.round()  # half to even, as torch
        elif interpolation == "lower":
            hi = lo
        elif interpolation == "higher":
            lo = hi
        below = values.gather(d, lo.to(ember.int64))
        above = values.gather(d, hi.to(ember.int64))
        if interpolation == "midpoint":
            out = below + (above - below) * 0.5
        elif interpolation == "linear":
            out = below + (above - below) * frac.to(values.dtype)
        else:
            out = below
        out = ember.where(count == 0, ember.full_like(out, float("nan")), out)
        if dim is None:
            out = out.reshape([1] * input.dim()) if keepdim else out.reshape(())
        elif not keepdim:
            out = out.squeeze(d) if input.dim() else out.reshape(())
        outs.append(out)
    return outs[0] if scalar_q else ember.stack(outs)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along dim (the smallest one on a tie) and the
    index of its last occurrence, as torch gives them."""
    x = input if input.dim() else input.reshape(1)
    d = wrap_dim("mode", dim, x.dim())
    _check_dim_size("mode", x, d)
    xt = x.transpose(d, -1) if d != x.dim() - 1 else x
    s, order = ember.sort(xt.detach(), dim=-1, stable=True)
    n = s.shape[-1]
    starts = ember.ones(s.shape, dtype=ember.bool, device=s.device)
    if n > 1:
        starts[..., 1:] = s[..., 1:] != s[..., :-1]
    run = ember.cumsum(starts.to(ember.int64), -1) - 1  # which run of equal values each position is in
    counts = ember.zeros(s.shape, dtype=ember.int64, device=s.device).scatter_add(-1, run, ember.ones_like(run))
    best = counts.argmax(-1, keepdim=True)  # the first longest run: the smallest value
    end = counts.cumsum(-1).gather(-1, best) - 1  # its last sorted position: the last occurrence
    index = order.gather(-1, end)
    value = xt.gather(-1, index)
    if d != x.dim() - 1:
        value, index = value.transpose(d, -1), index.transpose(d, -1)
    if not keepdim or input.dim() == 0:
        value, index = value.squeeze(d), index.squeeze(d)
    return _mode_t(value, index)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in input's rows (observations in
    columns), with optional integer frequency and float observation weights."""
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    x = floating(input, "cov", complex_ok=True)
    x = x.reshape(1, -1) if x.dim() < 2 else x
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.dim() > 1 or fweights.numel() != n:
            raise RuntimeError(f"cov(): expected fweights to be a 1-D tensor with {n} elements, got shape "
                               f"{list(fweights.shape)}")
        if fweights.is_floating_point() or fweights.dtype == ember.bool:
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                               f"{fweights.dtype} dtype")
        if fweights.numel() and bool((fweights < 0).any()):
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights.reshape(-1)
    if aweights is not None:
        if aweights.dim() > 1 or aweights.numel() != n:
            raise RuntimeError(f"cov(): expected aweights to be a 1-D tensor with {n} elements, got shape "
                               f"{list(aweights.shape)}")
        if not aweights.is_floating_point():
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{aweights.dtype} dtype")
        if aweights.numel() and bool((aweights < 0).any()):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights.reshape(-1) if w is None else w * aweights.reshape(-1)
    if w is None:
        total = float(n)
        avg = x.mean(1, keepdim=True) if n else ember.full((x.shape[0], 1), float("nan"), dtype=x.dtype,
                                                           device=x.device)
        norm = ember.tensor(max(total - correction, 0.0), dtype=x.dtype, device=x.device)
    else:
        w = w.to(ember.result_type(x, w) if w.is_floating_point() else x.dtype)
        total = w.sum()
        avg = (x * w).sum(1, keepdim=True) / total
        if aweights is None or correction == 0:
            norm = total - correction
        else:
            norm = total - correction * (w * aweights.reshape(-1)).sum() / total
        norm = norm.clamp(min=0)
    xm = x - avg
    c = ember.matmul(xm * w if w is not None else xm, xm.t().conj()) / norm
    return c.reshape(()) if x.shape[0] == 1 else c  # one variable: a 0-d variance, as torch


def corrcoef(input):
    """Pearson correlation coefficients of input's rows (clipped to [-1, 1]; complex
    ones have their real and imaginary parts clipped)."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = ember.sqrt(ember.diagonal(c))
    c = c / std.reshape(-1, 1) / std.reshape(1, -1)
    if c.is_complex():
        return ember.complex(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


FUNCTIONS = dict(nanmedian=nanmedian, nanquantile=nanquantile, mode=mode, cov=cov, corrcoef=corrcoef)

add_methods(FUNCTIONS)


# ---- window functions (torch.hann_window, ...)

def _window(name, window_length, periodic, dtype, device, requires_grad, values):
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    dtype = ember.get_default_dtype() if dtype is None else dtype
    if dtype not in (ember.float16, ember.bfloat16, ember.float32, ember.float64):
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length <= 1:
        out = ember.ones(window_length, dtype=dtype, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        k = ember.arange(n, dtype=ember.float64)
        out = values(k, n)[:window_length].to(dtype)
        if device is not None:
            out = out.to(device)
    return out.requires_grad_(requires_grad)


def _cosines(*coefficients):
    def values(k, n):
        out = ember.zeros(k.shape, dtype=ember.float64)
        for i, a in enumerate(coefficients):
            out = out + a * ember.cos(2 * math.pi * i * k / (n - 1))
        return out
    return values


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                pin_memory=False):
    """0.5 - 0.5 cos(2 pi k / (N - 1)); periodic drops the last of window_length + 1 points."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, _cosines(0.5, -0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """alpha - beta cos(2 pi k / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, _cosines(alpha, -beta))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    """0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosines(0.42, -0.5, 0.08))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    """The triangle 1 - |2k / (N - 1) - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 1 - (2 * k / (n - 1) - 1).abs())


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False, pin_memory=False):
    """I0(beta sqrt(1 - (2k / (N - 1) - 1)^2)) / I0(beta)."""
    from ember._tensor_api_math import _i0_float64

    def values(k, n):
        r = 2 * k / (n - 1) - 1
        arg = beta * ember.sqrt((1 - r * r).clamp(min=0))
        return _i0_float64(arg) / _i0_float64(ember.tensor(abs(float(beta)), dtype=ember.float64))
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, values)


WINDOWS = dict(hann_window=hann_window, hamming_window=hamming_window, blackman_window=blackman_window,
               bartlett_window=bartlett_window, kaiser_window=kaiser_window)
