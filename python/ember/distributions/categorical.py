"""Categorical and OneHotCategorical over the last dim of probs or logits."""
import ember
import ember.nn.functional as F

from .bernoulli import _probs_or_logits
from . import constraints as _c
from .distribution import Distribution


class Categorical(Distribution):
    has_enumerate_support = True
    _param_names = ("probs",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        _probs_or_logits("Categorical", probs, logits)
        t = probs if probs is not None else logits
        if t.dim() < 1:
            raise ValueError("Categorical: probs or logits must have at least one dimension (the categories)")
        if logits is not None:
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            self.probs = self.logits.exp()
        else:
            self._validate_args = Distribution._validate_default if validate_args is None else validate_args
            if self._validate_args and not bool((probs >= 0).all()):
                raise ValueError("Categorical: probs must be non-negative")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self.logits = self.probs.clamp(min=ember.finfo(self.probs.dtype).tiny).log()
        self._num_events = t.shape[-1]
        super().__init__(t.shape[:-1], (), validate_args)

    def _constructor_kwargs(self):
        return {"logits": self.logits}

    @property
    def support(self):
        return _c.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self):
        return self.probs.shape

    @property
    def mean(self):
        return ember.full(self.batch_shape, float("nan"), dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return ember.full(self.batch_shape, float("nan"), dtype=self.probs.dtype, device=self.probs.device)

    def _sample(self, sample_shape=()):
        n = 1
        for s in sample_shape:
            n *= s
        flat = self.probs.reshape(-1, self._num_events)
        draws = ember.multinomial(flat, n, replacement=True)  # [batch, n]
        return draws.t().reshape(*sample_shape, *self.batch_shape)

    def log_prob(self, value):
        self._validate_sample(value)  # ValueError outside the support, as torch (not gather's error)
        value = value.long()
        shape = ember.broadcast_shapes(tuple(value.shape), tuple(self.batch_shape))
        logits = self.logits.expand(*shape, self._num_events)
        return logits.gather(-1, value.expand(*shape).unsqueeze(-1)).squeeze(-1)

    def entropy(self):
        # 0 * log 0 = 0: clamp the logits to the dtype's lowest finite value.
        logits = self.logits.clamp(min=ember.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = ember.arange(self._num_events, device=self.probs.device)
        values = values.view(-1, *([1] * len(self.batch_shape)))
        return values.expand(-1, *self.batch_shape) if expand else values


class OneHotCategorical(Distribution):
    has_enumerate_support = True
    support = _c.one_hot
    _param_names = ("probs",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        super().__init__(self._categorical.batch_shape, self.probs.shape[-1:], validate_args)

    def _constructor_kwargs(self):
        return {"logits": self.logits}

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        return F.one_hot(self.probs.argmax(-1), self.probs.shape[-1]).to(self.probs.dtype)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def _sample(self, sample_shape=()):
        index = self._categorical.sample(sample_shape)
        return F.one_hot(index, self.probs.shape[-1]).to(self.probs.dtype)

    def log_prob(self, value):
        self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = ember.eye(n, dtype=self.probs.dtype, device=self.probs.device)
        values = values.view(n, *([1] * len(self.batch_shape)), n)
        return values.expand(n, *self.batch_shape, n) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample is a one-hot draw carrying the straight-through gradient of the
    probabilities (draw + probs - probs.detach())."""
    has_rsample = True

    def rsample(self, sample_shape=()):
        with ember.no_grad():
            draw = self._sample(sample_shape)
        return draw + (self.probs - self.probs.detach())
