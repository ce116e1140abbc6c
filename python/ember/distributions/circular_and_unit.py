"""VonMises (a distribution on the circle) and ContinuousBernoulli (on the
unit interval), as torch defines them."""
import math

import ember
import ember.nn.functional as F

from . import constraints
from .distribution import Distribution, broadcast_all


def _log_i0(k):
    """log of the modified Bessel function I0, through the scaled i0e (finite for large k)."""
    return ember.special.i0e(k).log() + k


class VonMises(Distribution):
    """Density exp(concentration * cos(x - loc)) / (2 pi I0(concentration)) on [-pi, pi)."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.interval(-math.pi, math.pi)
    has_rsample = False
    _param_names = ("loc", "concentration")

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        k = self.concentration
        return 1 - ember.special.i1e(k) / ember.special.i0e(k)

    def log_prob(self, value):
        self._validate_sample(value)
        return self.concentration * (value - self.loc).cos() - math.log(2 * math.pi) - _log_i0(self.concentration)

    def _sample(self, sample_shape=()):
        """Best and Fisher's rejection sampler (wrapped Cauchy envelope), vectorized: each round redraws the
        entries not yet accepted. Computed in float64, as small concentrations need it."""
        shape = self._extended_shape(sample_shape)
        k = self.concentration.detach().double().expand(*shape)
        tau = 1 + (1 + 4 * k * k).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * k)
        r = (1 + rho * rho) / (2 * rho)
        r = ember.where(k < 1e-5, 1 / k + k, r)  # rho's formula cancels catastrophically for tiny k
        x = ember.zeros_like(k)
        done = ember.zeros_like(k, dtype=ember.bool)
        while not bool(done.all()):
            u1, u2, u3 = ember.rand(3, *shape, dtype=ember.float64, device=k.device).unbind(0)
            z = (math.pi * u1).cos()
            f = (1 + r * z) / (r + z)
            c = k * (r - f)
            accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
            x = ember.where(accept & ~done, (u3 - 0.5).sign() * f.clamp(-1, 1).acos(), x)
            done = done | accept
        loc = self.loc.detach().double()
        return ((x + math.pi + loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)


class ContinuousBernoulli(Distribution):
    """The density C(p) p^x (1 - p)^(1 - x) on [0, 1]; near p = 1/2 (inside lims) the normalizer, mean and
    variance use their Taylor expansions, as their closed forms lose all precision there."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _param_names = ("probs",)

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (probs,) = broadcast_all(probs)
            self.probs = probs
            self._derived = ("logits",)
            # checked here: the clamped probs below would always pass the base class's check
            validate = Distribution._validate_default if validate_args is None else validate_args
            if validate and not bool(constraints.unit_interval.check(probs).all()):
                raise ValueError("The parameter probs has invalid values")
            eps = ember.finfo(probs.dtype).eps
            p = probs.clamp(eps, 1 - eps)
            self.probs = p
            self.logits = p.log() - (-p).log1p()
        else:
            (self.logits,) = broadcast_all(logits)
            self.probs = ember.sigmoid(self.logits)
            self._derived = ("probs",)
        self._lims = lims
        super().__init__(self.probs.shape, (), validate_args)

    def _constructor_kwargs(self):
        given = "logits" if "probs" in self._derived else "probs"
        return {given: getattr(self, given), "lims": self._lims}

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs >= self._lims[1])

    def _cut_probs(self):
        return ember.where(self._outside_unstable_region(), self.probs, ember.full_like(self.probs, self._lims[0]))

    def _log_normalizer(self):
        outside = self._outside_unstable_region()
        p = self._cut_probs()
        below = ember.where(p <= 0.5, p, ember.zeros_like(p))
        above = ember.where(p >= 0.5, p, ember.ones_like(p))
        log_norm = ((-p).log1p() - p.log()).abs().log() - ember.where(p <= 0.5, (-2.0 * below).log1p(),
                                                                          (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ember.where(outside, log_norm, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / ((-p).log1p() - p.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ember.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        p = self._cut_probs()
        var = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + 1.0 / ((-p).log1p() - p.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ember.where(self._outside_unstable_region(), var, taylor)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = ember.rand(*shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") + self._log_normalizer()

    def cdf(self, value):
        p = self._cut_probs()
        cdfs = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = ember.where(self._outside_unstable_region(), cdfs, value + ember.zeros_like(p))
        return ember.where(value <= 0.0, ember.zeros_like(inside),
                           ember.where(value >= 1.0, ember.ones_like(inside), inside))

    def icdf(self, value):
        p = self._cut_probs()
        closed = (((-p) + value * (2.0 * p - 1.0)).log1p() - (-p).log1p()) / (p.log() - (-p).log1p())
        return ember.where(self._outside_unstable_region(), closed, value + ember.zeros_like(p))

    def entropy(self):
        log_p0 = (-self.probs).log1p()
        log_p1 = self.probs.log()
        return self.mean * (log_p0 - log_p1) - self._log_normalizer() - log_p0
