"""Count distributions: Poisson, Binomial, Geometric, Multinomial. Their
samplers are compositions of ember's uniform/categorical draws (no gradient)."""
import math

import ember
import ember.nn.functional as F

from . import constraints
from .distribution import Distribution, broadcast_all
from .exp_family import ExponentialFamily


def _logits_from_probs(probs):
    eps = ember.finfo(probs.dtype).eps
    p = probs.clamp(eps, 1 - eps)
    return p.log() - (-p).log1p()


def _one_of_probs_logits(name, probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: either `probs` or `logits` must be specified, but not both.")


def _sample_poisson(rate):
    """One Poisson(rate) draw per element. Rates below 10: multiply uniforms until the product drops below
    exp(-rate) (Knuth). Larger rates: Hormann's transformed rejection with squeeze (PTRS), vectorized:
    each round redraws every entry not yet accepted."""
    out = ember.zeros_like(rate)
    small = rate < 10
    # Knuth, for the small rates (the others run with rate 0 and finish at once)
    limit = ember.where(small, (-rate).exp(), ember.ones_like(rate))
    product = ember.ones_like(rate)
    count = ember.zeros_like(rate)
    active = small & (rate > 0)
    while bool(active.any()):
        product = product * ember.where(active, ember.rand_like(rate), ember.ones_like(rate))
        still = active & (product > limit)
        count = count + still.to(rate.dtype)
        active = still
    out = ember.where(small, count, out)
    big = ~small
    if not bool(big.any()):
        return out
    lam = ember.where(big, rate, ember.full_like(rate, 10.0))
    log_lam = lam.log()
    b = 0.931 + 2.53 * lam.sqrt()
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    done = small.clone()
    while not bool(done.all()):
        u = ember.rand_like(lam) - 0.5
        v = ember.rand_like(lam).clamp(min=ember.finfo(lam.dtype).tiny)
        us = 0.5 - u.abs()
        k = ((2 * a / us + b) * u + lam + 0.43).floor()
        squeeze = (us >= 0.07) & (v <= v_r)
        possible = (k >= 0) & ~((us < 0.013) & (v > us))
        k_safe = k.clamp(min=0)
        bound = -lam + k_safe * log_lam - (k_safe + 1).lgamma()
        full = possible & ((v * inv_alpha / (a / (us * us) + b)).log() <= bound)
        accept = (squeeze | full) & ~done
        out = ember.where(accept, k_safe, out)
        done = done | accept
    return out


class Poisson(ExponentialFamily):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer
    _param_names = ("rate",)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, (), validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def _sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _sample_poisson(self.rate.detach().expand(*shape).contiguous())

    # exponential family: natural parameters, log normalizer, E[log h(x)] (see exp_family.py)
    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()

    def log_prob(self, value):
        self._validate_sample(value)
        return ember.xlogy(value, self.rate) - self.rate - (value + 1).lgamma()


def _count_and_probs(self, total_count, probs, logits):
    """Binomial's and NegativeBinomial's parameters: total_count broadcast with probs or logits (in their
    dtype), the other of the two derived."""
    if probs is not None:
        self.total_count, self.probs = broadcast_all(total_count, probs)
        self.total_count = self.total_count.to(self.probs.dtype)
        self.logits = _logits_from_probs(self.probs)
        self._derived = ("logits",)
    else:
        self.total_count, self.logits = broadcast_all(total_count, logits)
        self.total_count = self.total_count.to(self.logits.dtype)
        self.probs = ember.sigmoid(self.logits)
        self._derived = ("probs",)


class Binomial(Distribution):
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True
    _param_names = ("total_count", "probs")
    _CHUNK = 256  # Bernoulli trials drawn per round, which bounds the sampler's memory

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _one_of_probs_logits("Binomial", probs, logits)
        _count_and_probs(self, total_count, probs, logits)
        super().__init__(self.probs.shape, (), validate_args)

    @property
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def _sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        p = self.probs.detach().expand(*shape)
        n = self.total_count.detach().expand(*shape)
        top = int(n.max()) if n.numel() else 0
        count = ember.zeros_like(p)
        for start in range(0, top, self._CHUNK):
            trials = ember.arange(start, min(start + self._CHUNK, top), dtype=p.dtype, device=p.device)
            trials = trials.reshape(-1, *([1] * p.dim()))
            hits = (ember.rand(trials.shape[0], *shape, dtype=p.dtype, device=p.device) < p) & (trials < n)
            count = count + hits.to(p.dtype).sum(0)
        return count

    def log_prob(self, value):
        self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_comb = (n + 1).lgamma() - (value + 1).lgamma() - (n - value + 1).lgamma()
        # value * log p + (n - value) * log(1 - p), through logits: stable for probs near 0 or 1
        return log_comb + value * logits - n * F.softplus(logits)

    def entropy(self):
        top = int(self.total_count.max())
        if not bool((self.total_count == top).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        values = self.enumerate_support(expand=False)
        lp = self.log_prob(values)
        return -(lp.exp() * lp).sum(0)

    def enumerate_support(self, expand=True):
        top = int(self.total_count.max())
        if not bool((self.total_count == top).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = ember.arange(1 + top, dtype=self.probs.dtype, device=self.probs.device)
        values = values.view(-1, *([1] * len(self.batch_shape)))
        return values.expand(-1, *self.batch_shape) if expand else values


class Geometric(Distribution):
    """The number of failures before the first success (support 0, 1, 2, ...)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer
    _param_names = ("probs",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of_probs_logits("Geometric", probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            self.logits = _logits_from_probs(self.probs)
            self._derived = ("logits",)
        else:
            (self.logits,) = broadcast_all(logits)
            self.probs = ember.sigmoid(self.logits)
            self._derived = ("probs",)
        super().__init__(self.probs.shape, (), validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(f"Expected parameter probs (Tensor of shape {tuple(self.probs.shape)}) of distribution "
                             f"{self!r} to be positive but found invalid values:\n{self.probs}")

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return ember.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def _sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        p = self.probs.detach()
        u = ember.rand(*shape, dtype=p.dtype, device=p.device).clamp(min=ember.finfo(p.dtype).tiny)
        return (u.log() / (-p).log1p()).floor()

    def log_prob(self, value):
        self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        p = probs.clamp(min=ember.finfo(probs.dtype).tiny)
        # value * log(1 - p), with 0 * log(0) = 0 where p == 1
        fail = ember.where((probs == 1) & (value == 0), ember.zeros_like(p), value * (-probs).log1p())
        return fail + p.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs


class Multinomial(Distribution):
    """Counts of total_count categorical draws over the last dim of probs/logits."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    _param_names = ("probs",)

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        from .categorical import Categorical
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits, validate_args=False)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        self._derived = ("logits",) if probs is not None else ("probs",)
        super().__init__(self._categorical.batch_shape, self.probs.shape[-1:], validate_args)

    def _constructor_kwargs(self):
        given = "logits" if "probs" in self._derived else "probs"
        return {"total_count": self.total_count, given: getattr(self, given)}

    @property
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def _sample(self, sample_shape=()):
        draws = self._categorical.sample((self.total_count,) + tuple(sample_shape))
        counts = F.one_hot(draws, self.probs.shape[-1]).to(self.probs.dtype).sum(0)
        return counts

    def log_prob(self, value):
        self._validate_sample(value)
        logits = self.logits.clamp(min=ember.finfo(self.logits.dtype).min)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        terms = ember.where((value == 0) & (logits == -math.inf), ember.zeros_like(value * logits), value * logits)
        return log_factorial_n - log_factorial_xs + terms.sum(-1)

    def entropy(self):
        # n H(categorical) - log n! + sum_k E[log x_k!], each count x_k a Binomial(n, p_k)
        n = self.total_count
        counts = ember.arange(n + 1, dtype=self.logits.dtype, device=self.logits.device)
        counts = counts.reshape(-1, *([1] * self.probs.dim()))
        lp = Binomial(n, probs=self.probs, validate_args=False).log_prob(counts)
        expected_log_factorial = (lp.exp() * (counts + 1).lgamma()).sum(0).sum(-1)
        return n * self._categorical.entropy() - math.lgamma(n + 1) + expected_log_factorial


class NegativeBinomial(Distribution):
    """The number of successes (probability probs each) before total_count failures."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer
    _param_names = ("total_count", "probs")

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _one_of_probs_logits("NegativeBinomial", probs, logits)
        _count_and_probs(self, total_count, probs, logits)
        super().__init__(self.probs.shape, (), validate_args)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / ember.sigmoid(-self.logits)

    def _sample(self, sample_shape=()):
        # a Poisson draw whose rate is a Gamma(total_count, (1 - p) / p) draw
        from .gamma import Gamma
        rate = Gamma(self.total_count.detach(), (-self.logits.detach()).exp(), validate_args=False).sample(sample_shape)
        return _sample_poisson(rate.contiguous())

    def log_prob(self, value):
        self._validate_sample(value)
        unnormalized = self.total_count * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        normalization = -(self.total_count + value).lgamma() + (1.0 + value).lgamma() + self.total_count.lgamma()
        # total_count + value == 0: the only outcome, probability 1 (lgamma(0) would be infinite)
        normalization = ember.where(self.total_count + value == 0, ember.zeros_like(normalization), normalization)
        return unnormalized - normalization
