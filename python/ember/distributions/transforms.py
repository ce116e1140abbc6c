"""Transforms (as torch.distributions.transforms): invertible maps with the log
absolute determinant of their Jacobian, for TransformedDistribution and
biject_to. Each is written with ember ops, so it runs on any device and is
differentiable."""
import math

import ember
import ember.nn.functional as F

from . import constraints

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
           "identity_transform"]


def _sum_rightmost(t, n):
    return t.reshape(*t.shape[:t.dim() - n], -1).sum(-1) if n > 0 else t


def _clipped_sigmoid(x):
    """sigmoid kept inside (0, 1): the inverse (logit) of an exact 0 or 1 would be infinite."""
    info = ember.finfo(x.dtype)
    return ember.sigmoid(x).clamp(min=info.tiny, max=1.0 - info.eps)


class Transform:
    """y = t(x); t.inv(y) = x; t.log_abs_det_jacobian(x, y) = log|dy/dx| (per batch element).
    cache_size=1 remembers the last (x, y) pair, so inverting a value this transform made returns the
    exact x (no round trip through a possibly lossy inverse)."""
    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached = (None, None)
        self._inv = None

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self):
        raise NotImplementedError(f"{type(self).__name__}.sign is not implemented")

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        raise NotImplementedError(f"{type(self).__name__}.with_cache is not implemented")

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached = (x, y)
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached = (x, y)
        return x

    def _call(self, x):
        raise NotImplementedError(f"{type(self).__name__} is not implemented")

    def _inverse(self, y):
        raise NotImplementedError(f"{type(self).__name__}.inv is not implemented")

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError(f"{type(self).__name__}.log_abs_det_jacobian is not implemented")

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __repr__(self):
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __repr__(self):
        return f"{self._inv!r}.inv"


class ComposeTransform(Transform):
    """parts applied left to right; an empty list is the identity."""

    def __init__(self, parts, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.parts = [p.with_cache(cache_size) if cache_size else p for p in parts]

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim = max(event_dim + part.domain.event_dim - part.codomain.event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim + part.codomain.event_dim - part.domain.event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        if self._inv is None:
            self._inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv._inv = self
        return self._inv

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ComposeTransform(self.parts, cache_size=cache_size)

    def _call(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return ember.zeros_like(x)
        event_dim = self.domain.event_dim
        total = 0
        for part in self.parts[:-1]:
            x_next = part(x)
            total = total + _sum_rightmost(part.log_abs_det_jacobian(x, x_next), event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
            x = x_next
        last = self.parts[-1]
        return total + _sum_rightmost(last.log_abs_det_jacobian(x, y), event_dim - last.domain.event_dim)

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        return "ComposeTransform(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """base_transform with its last reinterpreted_batch_ndims batch dims made event dims."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size) if cache_size else base_transform
        self.reinterpreted_batch_ndims = int(reinterpreted_batch_ndims)

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"IndependentTransform({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """Reshapes the rightmost dims from in_shape to out_shape (same number of elements)."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = ember.Size(in_shape), ember.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def _call(self, x):
        return x.reshape(*x.shape[:x.dim() - len(self.in_shape)], *self.out_shape)

    def _inverse(self, y):
        return y.reshape(*y.shape[:y.dim() - len(self.out_shape)], *self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(x.shape[:x.dim() - len(self.in_shape)])

    def forward_shape(self, shape):
        return tuple(shape[:len(shape) - len(self.in_shape)]) + tuple(self.out_shape)

    def inverse_shape(self, shape):
        return tuple(shape[:len(shape) - len(self.out_shape)]) + tuple(self.in_shape)


class ExpTransform(Transform):
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ExpTransform(cache_size)

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.exponent = exponent

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size)

    @property
    def sign(self):
        e = self.exponent
        return e.sign() if isinstance(e, ember.Tensor) else (1 if e > 0 else -1 if e < 0 else 0)

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        a, b = self.exponent, other.exponent
        return bool((a == b).all()) if isinstance(a, ember.Tensor) or isinstance(b, ember.Tensor) else a == b

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        e = self.exponent
        return ember.broadcast_shapes(tuple(shape), tuple(e.shape)) if isinstance(e, ember.Tensor) else shape

    inverse_shape = forward_shape


class SigmoidTransform(Transform):
    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else SigmoidTransform(cache_size)

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        info = ember.finfo(y.dtype)
        y = y.clamp(min=info.tiny, max=1.0 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(Transform):
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else SoftplusTransform(cache_size)

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return (-(-y).expm1()).log() + y  # log(exp(y) - 1), kept finite for large y

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


class TanhTransform(Transform):
    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else TanhTransform(cache_size)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2), written so that it stays finite for large |x|
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x|; not bijective (the inverse picks the non-negative root)."""
    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else AbsTransform(cache_size)

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x; event_dim rightmost dims count as one event (their log-determinants sum)."""
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale = loc, scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real, self._event_dim)

    codomain = domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False

        def same(a, b):
            if isinstance(a, ember.Tensor) or isinstance(b, ember.Tensor):
                return bool((ember.as_tensor(a) == ember.as_tensor(b)).all())
            return a == b
        return same(self.loc, other.loc) and same(self.scale, other.scale)

    __hash__ = object.__hash__

    @property
    def sign(self):
        s = self.scale
        return s.sign() if isinstance(s, ember.Tensor) else (1 if s > 0 else -1 if s < 0 else 0)

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        s = self.scale
        if isinstance(s, ember.Tensor):
            result = s.abs().log()
        else:
            result = ember.full_like(x, math.log(abs(s)))
        shape = x.shape
        if self._event_dim:
            shape = ember.broadcast_shapes(tuple(result.shape), tuple(shape))
            return _sum_rightmost(result.expand(*shape), self._event_dim)
        return result.expand(*ember.broadcast_shapes(tuple(result.shape), tuple(shape)))

    def forward_shape(self, shape):
        extra = [tuple(p.shape) for p in (self.loc, self.scale) if isinstance(p, ember.Tensor)]
        return ember.broadcast_shapes(tuple(shape), *extra)

    inverse_shape = forward_shape

    def __repr__(self):
        return "AffineTransform()"


class SoftmaxTransform(Transform):
    """Unconstrained vectors to the simplex by softmax; not bijective (inv gives log-probabilities)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else SoftmaxTransform(cache_size)

    def _call(self, x):
        return ember.softmax(x, -1)

    def _inverse(self, y):
        return y.log()


class StickBreakingTransform(Transform):
    """Bijection from R^K to the K+1 simplex by stick breaking: each coordinate (shifted so that zeros map
    to the uniform point) takes a sigmoid fraction of the stick that is left."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else StickBreakingTransform(cache_size)

    @staticmethod
    def _offset(n, like):
        # n, n-1, ..., 1: the number of pieces still to come, so x = 0 breaks the stick evenly
        return ember.arange(n, 0, -1, dtype=like.dtype, device=like.device)

    def _call(self, x):
        z = _clipped_sigmoid(x - self._offset(x.shape[-1], x).log())
        left = (1 - z).cumprod(-1)
        return F.pad(z, (0, 1), value=1.0) * F.pad(left, (1, 0), value=1.0)

    def _inverse(self, y):
        head = y[..., :-1]
        offset = self._offset(head.shape[-1], y)
        left = (1 - head.cumsum(-1)).clamp(min=ember.finfo(y.dtype).tiny)
        return head.log() - left.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        x = x - self._offset(x.shape[-1], x).log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Unconstrained square matrices to lower-triangular ones with a positive diagonal (not bijective:
    the upper triangle is dropped)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else LowerCholeskyTransform(cache_size)

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x): onto the unit interval."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


from ._cat_stack_transforms import CatTransform, StackTransform  # noqa: E402,F401  (they build on the above)
from ._matrix_transforms import CorrCholeskyTransform, PositiveDefiniteTransform  # noqa: E402,F401
