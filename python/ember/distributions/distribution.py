"""The base of every distribution: shapes, argument checks, sampling API."""
import ember


def broadcast_all(*values):
    """Tensors (and numbers, made tensors of the first tensor's dtype and
    device, or the default float dtype) broadcast to one shape."""
    like = next((v for v in values if isinstance(v, ember.Tensor)), None)
    dtype = like.dtype if like is not None and like.is_floating_point() else ember.get_default_dtype()
    device = like.device if like is not None else None
    tensors = [v if isinstance(v, ember.Tensor) else ember.tensor(float(v), dtype=dtype, device=device)
               for v in values]
    shape = ember.broadcast_shapes(*[t.shape for t in tensors])
    # a tensor of the full shape is kept as given (as torch does), so dist.loc is the caller's leaf
    return tuple(t if t.shape == shape else t.expand(*shape) for t in tensors)


class Distribution:
    """batch_shape: independent distributions side by side; event_shape: the
    shape of one draw of one of them."""

    has_rsample = False
    has_enumerate_support = False
    _validate_default = True

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = ember.Size(batch_shape)
        self._event_shape = ember.Size(event_shape)
        self._validate_args = self._validate_default if validate_args is None else validate_args
        if self._validate_args:
            self._validate_params()

    # name -> constraint of each parameter; validation (validate_args) checks the ones the instance has
    arg_constraints = {}
    # names of parameters computed from the given ones (e.g. logits when probs were given): not checked
    _derived = ()

    def _validate_params(self):
        from . import constraints
        for name, constraint in self.arg_constraints.items():
            if constraints.is_dependent(constraint) or name in self._derived or name not in self.__dict__:
                continue
            value = getattr(self, name)
            if not isinstance(value, ember.Tensor):
                continue
            if not bool(constraint.check(value).all()):
                raise ValueError(f"Expected parameter {name} (Tensor of shape {tuple(value.shape)}) of distribution "
                                 f"{self!r} to satisfy the constraint {constraint!r}, but found invalid values:\n{value}")

    def _validate_sample(self, value):
        """With validation on: value must be a Tensor inside the support (ValueError as torch's)."""
        if not self._validate_args:
            return
        if not isinstance(value, ember.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        actual = tuple(value.shape)
        event = tuple(self._event_shape)
        if actual[len(actual) - len(event):] != event:
            raise ValueError(f"The right-most size of value must match event_shape: {actual} vs {event}.")
        expected = tuple(self._batch_shape) + event
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual} vs {expected}.")
        support = self.support
        from . import constraints
        if support is None or constraints.is_dependent(support):
            return
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument (Tensor of shape {tuple(value.shape)}) to be within the "
                             f"support ({support!r}) of the distribution {self!r}, but found invalid values:\n{value}")

    support = None

    # names of the constructor arguments expand() re-passes (default: the given parameters of arg_constraints)
    _expand_params = None

    def _constructor_kwargs(self):
        names = self._expand_params
        if names is None:
            names = [n for n in self.arg_constraints if n not in self._derived and n in self.__dict__]
        return {n: getattr(self, n) for n in names}

    def expand(self, batch_shape, _instance=None):
        """The same distribution with its parameters broadcast to batch_shape (views, no copies)."""
        batch_shape = tuple(batch_shape)
        n_old = len(self._batch_shape)
        try:
            ember.broadcast_shapes(batch_shape, tuple(self._batch_shape))
        except Exception:
            raise RuntimeError(f"{type(self).__name__}.expand: batch shape {tuple(self._batch_shape)} cannot be "
                               f"expanded to {batch_shape}") from None
        kwargs = {}
        for name, value in self._constructor_kwargs().items():
            if isinstance(value, ember.Tensor) and value.dim() >= n_old:
                value = value.expand(*batch_shape, *value.shape[n_old:])
            kwargs[name] = value
        new = type(self)(**kwargs, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @staticmethod
    def set_default_validate_args(value):
        Distribution._validate_default = bool(value)

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=()):
        return ember.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=()):
        """A draw without gradient."""
        with ember.no_grad():
            return self.rsample(sample_shape) if self.has_rsample else self._sample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sampler (rsample); use sample()")

    def enumerate_support(self, expand=True):
        raise NotImplementedError(f"{type(self).__name__}.enumerate_support is not implemented")

    def sample_n(self, n):
        return self.sample((n,))

    def log_prob(self, value):
        raise NotImplementedError(f"{type(self).__name__}.log_prob is not implemented")

    def entropy(self):
        raise NotImplementedError(f"{type(self).__name__}.entropy is not implemented")

    def cdf(self, value):
        raise NotImplementedError(f"{type(self).__name__}.cdf is not implemented")

    def icdf(self, value):
        raise NotImplementedError(f"{type(self).__name__}.icdf is not implemented")

    def perplexity(self):
        return ember.exp(self.entropy())

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self).__name__}.mean is not implemented")

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self).__name__}.mode is not implemented")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self).__name__}.variance is not implemented")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def _check(self, ok, message):
        """Raises ValueError(message) when validation is on and `ok` (a bool tensor) is not all true."""
        if self._validate_args and not bool(ok.all()):
            raise ValueError(f"{type(self).__name__}: {message}")

    def __repr__(self):
        params = ", ".join(f"{k}: {tuple(getattr(self, k).shape)}" for k in getattr(self, "_param_names", ()))
        return f"{type(self).__name__}({params})"
