"""CatTransform and StackTransform (as torch's): transforms applied to
pieces of a tensor along one dim (slices of given lengths, or single
indices), e.g. biject_to a cat/stack constraint."""
import ember

from . import constraints
from .transforms import Transform, _sum_rightmost


class CatTransform(Transform):
    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) if cache_size else t for t in tseq]
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("CatTransform: lengths must give one length per transform")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CatTransform(self.transforms, self.dim, self.lengths,
                                                                        cache_size)

    def _pieces(self, x, fn):
        if x.shape[self.dim] != self.length:
            raise ValueError(f"CatTransform: expected size {self.length} along dim {self.dim}, got "
                             f"{x.shape[self.dim]}")
        out, start = [], 0
        for t, n in zip(self.transforms, self.lengths):
            out.append(fn(t, x.narrow(self.dim, start, n)))
            start += n
        return out

    def _call(self, x):
        return ember.cat(self._pieces(x, lambda t, piece: t(piece)), self.dim)

    def _inverse(self, y):
        return ember.cat(self._pieces(y, lambda t, piece: t.inv(piece)), self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms, start = [], 0
        for t, n in zip(self.transforms, self.lengths):
            term = t.log_abs_det_jacobian(x.narrow(self.dim, start, n), y.narrow(self.dim, start, n))
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
            start += n
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim += self.event_dim
        # dim still inside the batch dims: the pieces are side by side; inside an event: their terms add up
        return ember.cat(terms, dim) if dim < 0 else sum(terms)


class StackTransform(Transform):
    def __init__(self, tseq, dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) if cache_size else t for t in tseq]
        self.dim = dim

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, x):
        if x.shape[self.dim] != len(self.transforms):
            raise ValueError(f"StackTransform: expected size {len(self.transforms)} along dim {self.dim}, got "
                             f"{x.shape[self.dim]}")
        return [x.select(self.dim, i) for i in range(len(self.transforms))]

    def _call(self, x):
        return ember.stack([t(s) for t, s in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return ember.stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        return ember.stack([t.log_abs_det_jacobian(xs, ys)
                            for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y))], self.dim)
