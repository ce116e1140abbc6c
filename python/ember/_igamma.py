"""igamma / igammac (ember.special.gammainc / gammaincc): the regularized lower and upper incomplete gamma
functions P(a, x) and Q(a, x) = 1 - P(a, x), computed in float64 from ember ops (so on any device): the
series where x < a + 1, Q's continued fraction (modified Lentz) elsewhere, each until every entry has
converged (relative step below 1e-15, checked every 16 steps, O(sqrt(a)) steps). Each function is
returned directly where it is computed, so a tail close to 0 keeps its digits. Differentiable in x, as
in torch (dP/dx = x^(a-1) e^-x / Gamma(a)); the derivative in a raises, as torch's does."""
import math

import ember

__all__ = ["igamma", "igammac"]


def _regularized_gamma(a, x):
    """(P, Q) in float64, broadcast; NaN where a <= 0 or x < 0 (torch's domain), P = 0 at x = 0."""
    a, x = ember.broadcast_tensors(a.double(), x.double())
    bad = (a <= 0) | (x < 0) | a.isnan() | x.isnan()
    a = ember.where(bad, ember.ones_like(a), a)
    x = ember.where(bad, ember.ones_like(x), x)
    top = float(a.max()) if a.numel() else 0.0
    max_iter = 2000 + int(60 * math.sqrt(max(top, 0.0)))
    use_series = x < a + 1
    log_prefactor = a * x.clamp(min=1e-300).log() - x - a.lgamma()
    # series: P = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a+1)...(a+n))
    term, total = ember.ones_like(x), ember.ones_like(x)
    for n in range(1, max_iter):
        term = term * x / (a + n)
        total = total + term
        if n % 16 == 0 and not bool(((term / total).abs() > 1e-15).logical_and(use_series).any()):
            break
    series = (log_prefactor + total.log()).exp() / a
    # continued fraction: Q = x^a e^-x / Gamma(a) / (b0 - 1 (1-a) / (b1 - 2 (2-a) / ...)), b_i = x + 2i + 1 - a
    tiny = 1e-300

    def floor_tiny(t):
        return ember.where(t.abs() < tiny, ember.full_like(t, tiny), t)

    b = x + 1 - a
    c = ember.full_like(x, 1 / tiny)
    d = 1 / floor_tiny(b)
    h = d
    for i in range(1, max_iter):
        an = -i * (i - a)
        b = b + 2
        d = 1 / floor_tiny(an * d + b)
        c = floor_tiny(b + an / c)
        step = d * c
        h = h * step
        if i % 16 == 0 and not bool(((step - 1).abs() > 1e-15).logical_and(~use_series).any()):
            break
    upper = ember.where(x.isinf(), ember.zeros_like(x), (log_prefactor + h.log()).exp())
    p = ember.where(use_series, series, 1 - upper)
    q = ember.where(use_series, 1 - series, upper)
    zero = x == 0
    p = ember.where(zero, ember.zeros_like(p), p)
    q = ember.where(zero, ember.ones_like(q), q)
    nan = ember.full_like(p, float("nan"))
    return ember.where(bad, nan, p), ember.where(bad, nan, q)


class _IncompleteGamma(ember.autograd.Function):
    @staticmethod
    def forward(ctx, a, x, upper):
        with ember.no_grad():
            p, q = _regularized_gamma(a, x)
        dtype = ember.result_type(a, x)
        dtype = dtype if dtype.is_floating_point else ember.get_default_dtype()
        ctx.save_for_backward(a, x)
        ctx.upper = upper
        return (q if upper else p).to(dtype)

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        name = "igammac" if ctx.upper else "igamma"
        if ctx.needs_input_grad[0]:
            raise RuntimeError(f"the derivative of {name} with respect to its first input (a) is not implemented")
        ad, xd = a.double(), x.double()
        density = ((ad - 1) * xd.log() - xd - ad.lgamma()).exp()  # dP/dx
        gx = grad.double() * (-density if ctx.upper else density)
        return None, ember.where(xd > 0, gx, ember.zeros_like(gx)).to(grad.dtype), None


def _operands(a, x, name):
    if not isinstance(a, ember.Tensor) and not isinstance(x, ember.Tensor):
        raise TypeError(f"{name}: expected at least one Tensor argument")
    like = a if isinstance(a, ember.Tensor) else x
    a = a if isinstance(a, ember.Tensor) else ember.tensor(a, device=like.device)
    x = x if isinstance(x, ember.Tensor) else ember.tensor(x, device=like.device)
    if a.device != x.device:
        raise RuntimeError(f"{name}: expected both inputs on the same device, got {a.device} and {x.device}")
    if a.dtype == ember.bool or x.dtype == ember.bool:
        raise RuntimeError(f"{name}: not implemented for bool inputs")
    return a, x


def igamma(input, other):
    """P(input, other), the regularized lower incomplete gamma function."""
    a, x = _operands(input, other, "igamma")
    return _IncompleteGamma.apply(a, x, False)


def igammac(input, other):
    """Q(input, other) = 1 - P(input, other), the regularized upper incomplete gamma function."""
    a, x = _operands(input, other, "igammac")
    return _IncompleteGamma.apply(a, x, True)


def _inplace(fn):
    def method(self, other):
        return self.copy_(fn(self, other))
    return method


ember.Tensor.igamma = igamma
ember.Tensor.igammac = igammac
ember.Tensor.igamma_ = _inplace(igamma)
ember.Tensor.igammac_ = _inplace(igammac)
