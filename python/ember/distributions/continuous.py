"""Univariate continuous distributions built from Normal, Uniform and Gamma:
LogNormal, HalfNormal, StudentT, Cauchy, Gumbel."""
import math

import ember

from . import constraints
from .distribution import Distribution, broadcast_all
from .gamma import Chi2
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform, ExpTransform

_EULER_GAMMA = 0.5772156649015329


def _uniform_open(shape, like):
    """Uniform draws in (0, 1): both logs of u and of 1 - u stay finite."""
    info = ember.finfo(like.dtype)
    return ember.rand(*shape, dtype=like.dtype, device=like.device).clamp(min=info.tiny, max=1 - info.eps)


class LogNormal(TransformedDistribution):
    """exp of a Normal(loc, scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _param_names = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(Normal(self.loc, self.scale, validate_args=False), ExpTransform(), validate_args)

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.pow(2)).exp()

    @property
    def variance(self):
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc

    def icdf(self, value):
        return (self.loc + self.scale * math.sqrt(2) * ember.erfinv(2 * value - 1)).exp()


class HalfNormal(TransformedDistribution):
    """|x| for x ~ Normal(0, scale)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _param_names = ("scale",)

    def __init__(self, scale, validate_args=None):
        (self.scale,) = broadcast_all(scale)
        super().__init__(Normal(ember.zeros_like(self.scale), self.scale, validate_args=False), AbsTransform(),
                         validate_args)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return ember.zeros_like(self.scale)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value):
        self._validate_sample(value)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return ember.where(value >= 0, lp, ember.full_like(lp, -math.inf))

    def cdf(self, value):
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.scale * math.sqrt(2) * ember.erfinv(prob)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class StudentT(Distribution):
    """Student's t with df degrees of freedom: loc + scale * z / sqrt(chi2 / df)."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _param_names = ("df", "loc", "scale")

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df, validate_args=False)
        super().__init__(self.df.shape, (), validate_args)

    @property
    def mean(self):
        m = self.loc.clone()
        return ember.where(self.df <= 1, ember.full_like(m, math.nan), m)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        v = self.scale.pow(2) * self.df / (self.df - 2)
        v = ember.where(self.df <= 2, ember.full_like(v, math.inf), v)
        return ember.where(self.df <= 1, ember.full_like(v, math.nan), v)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        z = ember.randn(*shape, dtype=self.df.dtype, device=self.df.device)
        chi2 = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * z * (chi2 / self.df).rsqrt()

    def log_prob(self, value):
        self._validate_sample(value)
        y = (value - self.loc) / self.scale
        df = self.df
        norm = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi) + (0.5 * df).lgamma()
                - (0.5 * (df + 1)).lgamma())
        return -0.5 * (df + 1) * (y.pow(2) / df).log1p() - norm

    def entropy(self):
        df = self.df
        lbeta = (0.5 * df).lgamma() + math.lgamma(0.5) - (0.5 * (df + 1)).lgamma()
        return (self.scale.log() + 0.5 * (df + 1) * ((0.5 * (df + 1)).digamma() - (0.5 * df).digamma())
                + 0.5 * df.log() + lbeta)


class Cauchy(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _param_names = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def mean(self):
        return ember.full_like(self.loc, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return ember.full_like(self.loc, math.inf)

    def rsample(self, sample_shape=()):
        u = _uniform_open(self._extended_shape(sample_shape), self.loc)
        return self.icdf(u)

    def log_prob(self, value):
        self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale).pow(2)).log1p()

    def cdf(self, value):
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return self.loc + self.scale * (math.pi * (value - 0.5)).tan()

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Gumbel(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _param_names = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def mean(self):
        return self.loc + self.scale * _EULER_GAMMA

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (math.pi ** 2 / 6) * self.scale.pow(2)

    def rsample(self, sample_shape=()):
        return self.icdf(_uniform_open(self._extended_shape(sample_shape), self.loc))

    def log_prob(self, value):
        self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -(z + (-z).exp()) - self.scale.log()

    def cdf(self, value):
        return (-(-(value - self.loc) / self.scale).exp()).exp()

    def icdf(self, value):
        return self.loc - self.scale * (-value.log()).log()

    def entropy(self):
        return self.scale.log() + (1 + _EULER_GAMMA)


class FisherSnedecor(Distribution):
    """The F distribution: (chi2(df1) / df1) / (chi2(df2) / df2)."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _param_names = ("df1", "df2")

    def __init__(self, df1, df2, validate_args=None):
        from .gamma import Gamma
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(0.5 * self.df1, 0.5 * self.df1, validate_args=False)
        self._gamma2 = Gamma(0.5 * self.df2, 0.5 * self.df2, validate_args=False)
        super().__init__(self.df1.shape, (), validate_args)

    @property
    def mean(self):
        df2 = self.df2.clamp(min=2)
        return ember.where(self.df2 > 2, df2 / (df2 - 2), ember.full_like(df2, math.nan))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return ember.where(self.df1 > 2, mode, ember.full_like(mode, math.nan))

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2.clamp(min=4)
        var = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return ember.where(self.df2 > 4, var, ember.full_like(var, math.nan))

    def rsample(self, sample_shape=()):
        tiny = ember.finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        self._validate_sample(value)
        ct1, ct2 = 0.5 * self.df1, 0.5 * self.df2
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3


class GeneralizedPareto(Distribution):
    """Survival function (1 + concentration * z) ** (-1 / concentration), z = (x - loc) / scale (exp(-z) at
    concentration 0); bounded above by loc - scale / concentration when concentration < 0."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True
    _param_names = ("loc", "scale", "concentration")

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def support(self):
        upper = ember.where(self.concentration < 0, self.loc - self.scale / self.concentration,
                            ember.full_like(self.loc, math.inf))
        return constraints.interval(self.loc, upper)

    def _safe_concentration(self):
        """(concentration == 0 (to float tolerance), the concentration with those entries set to 1)."""
        c = self.concentration
        zero = c.abs() <= 1e-8
        return zero, ember.where(zero, ember.ones_like(c), c)

    @property
    def mean(self):
        c = self.concentration
        valid = c < 1
        safe = ember.where(valid, c, ember.full_like(c, 0.5))
        return ember.where(valid, self.loc + self.scale / (1 - safe), ember.full_like(c, math.nan))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        c = self.concentration
        valid = c < 0.5
        safe = ember.where(valid, c, ember.full_like(c, 0.25))
        var = self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe))
        return ember.where(valid, var, ember.full_like(c, math.nan))

    def rsample(self, sample_shape=()):
        u = ember.rand(*self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._safe_concentration()
        y = 1 / c + 1
        nonzero = ember.where(y == 0, y, y * (c * z).log1p())
        return -self.scale.log() - ember.where(zero, z, nonzero)

    def log_survival_function(self, value):
        z = (value - self.loc) / self.scale
        zero, c = self._safe_concentration()
        return ember.where(zero, -z, -(c * z).log1p() / c)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        zero, c = self._safe_concentration()
        log_u = (-value).log1p()
        return ember.where(zero, self.loc - self.scale * log_u, self.loc + self.scale / c * (-c * log_u).expm1())

    def entropy(self):
        return self.scale.log() + self.concentration + 1
