"""torch's list-at-a-time ops (ember._foreach_add_(params, 1.0), _foreach_lerp_, _foreach_norm,
...), which EMA helpers and optimizers written against torch call. Each runs the per-tensor op
over the list; the in-place forms return the list, as torch 2.x does."""
import ember

_UNARY = ("abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p log2 neg "
          "reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc").split()
# (name, the per-tensor function); a second argument may be a number, a 0-d tensor, or a list of either.
_BINARY = {"mul": ember.mul, "div": ember.div, "maximum": ember.maximum, "minimum": ember.minimum,
           "clamp_min": ember.clamp_min, "clamp_max": ember.clamp_max}


def _tensors(op, tensors):
    if not isinstance(tensors, (list, tuple)) or not all(isinstance(t, ember.Tensor) for t in tensors):
        raise TypeError(f"{op}: expected a list of tensors, got {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{op}: Tensor list must have at least one tensor.")
    return list(tensors)


def _each(op, other, n):
    """other as one value per tensor: a list as it is (of the right length), anything else repeated;
    a 1-d tensor of n scalars counts as a list."""
    if isinstance(other, (list, tuple)):
        if len(other) != n:
            raise RuntimeError(f"{op}: Tensor list must have same number of elements as scalar list "
                               f"(got {n} tensors and {len(other)} values).")
        return list(other)
    if isinstance(other, ember.Tensor) and other.dim() == 1 and other.numel() == n and n > 1:
        return list(other.unbind(0))
    return [other] * n


def _assign(tensors, results):
    for t, r in zip(tensors, results):
        t.copy_(r)
    return tensors


def _unary(name):
    fn = getattr(ember, name)

    def out_of_place(self):
        return [fn(t) for t in _tensors(f"_foreach_{name}", self)]

    def in_place(self):
        ts = _tensors(f"_foreach_{name}_", self)
        for t in ts:
            getattr(t, name + "_")()
        return ts
    return out_of_place, in_place


def _binary(name, fn):
    def out_of_place(self, other):
        ts = _tensors(f"_foreach_{name}", self)
        return [fn(t, o) for t, o in zip(ts, _each(f"_foreach_{name}", other, len(ts)))]

    def in_place(self, other):
        ts = _tensors(f"_foreach_{name}_", self)
        if not hasattr(ember.Tensor, name + "_"):  # maximum / minimum have no in-place method
            return _assign(ts, out_of_place(ts, other))
        for t, o in zip(ts, _each(f"_foreach_{name}_", other, len(ts))):
            getattr(t, name + "_")(o)
        return ts
    return out_of_place, in_place


def _foreach_add(self, other, *, alpha=1):
    ts = _tensors("_foreach_add", self)
    return [ember.add(t, o, alpha=alpha) if isinstance(o, ember.Tensor) else t + o * alpha
            for t, o in zip(ts, _each("_foreach_add", other, len(ts)))]


def _foreach_sub(self, other, *, alpha=1):
    ts = _tensors("_foreach_sub", self)
    return [ember.sub(t, o, alpha=alpha) if isinstance(o, ember.Tensor) else t - o * alpha
            for t, o in zip(ts, _each("_foreach_sub", other, len(ts)))]


def _foreach_add_(self, other, *, alpha=1):
    ts = _tensors("_foreach_add_", self)
    for t, o in zip(ts, _each("_foreach_add_", other, len(ts))):
        t.add_(o, alpha=alpha)
    return ts


def _foreach_sub_(self, other, *, alpha=1):
    ts = _tensors("_foreach_sub_", self)
    for t, o in zip(ts, _each("_foreach_sub_", other, len(ts))):
        t.sub_(o, alpha=alpha)
    return ts


def _foreach_pow(self, exponent):
    if not isinstance(self, (list, tuple)):  # _foreach_pow(2.0, tensors): a number to each power
        ts = _tensors("_foreach_pow", exponent)
        return [ember.pow(self, t) for t in ts]
    ts = _tensors("_foreach_pow", self)
    return [ember.pow(t, e) for t, e in zip(ts, _each("_foreach_pow", exponent, len(ts)))]


def _foreach_lerp(self, tensors1, weight):
    ts = _tensors("_foreach_lerp", self)
    ends = _each("_foreach_lerp", tensors1, len(ts))
    return [ember.lerp(t, e, w) for t, e, w in zip(ts, ends, _each("_foreach_lerp", weight, len(ts)))]


def _foreach_lerp_(self, tensors1, weight):
    ts = _tensors("_foreach_lerp_", self)
    ends = _each("_foreach_lerp_", tensors1, len(ts))
    for t, e, w in zip(ts, ends, _each("_foreach_lerp_", weight, len(ts))):
        t.lerp_(e, w)
    return ts


def _pointwise(name, fn):
    def out_of_place(self, tensor1, tensor2, value=1):
        ts = _tensors(f"_foreach_{name}", self)
        a, b = _each(f"_foreach_{name}", tensor1, len(ts)), _each(f"_foreach_{name}", tensor2, len(ts))
        values = _each(f"_foreach_{name}", value, len(ts))
        return [fn(t, x, y, value=v.item() if isinstance(v, ember.Tensor) else v)
                for t, x, y, v in zip(ts, a, b, values)]

    def in_place(self, tensor1, tensor2, value=1):
        return _assign(self, out_of_place(self, tensor1, tensor2, value))
    return out_of_place, in_place


def _foreach_norm(self, ord=2, dtype=None):
    return [ember.linalg.vector_norm(t, ord, dtype=dtype) for t in _tensors("_foreach_norm", self)]


def _foreach_max(self):
    return [t.max() for t in _tensors("_foreach_max", self)]


def _foreach_zero_(self):
    ts = _tensors("_foreach_zero_", self)
    for t in ts:
        t.zero_()
    return ts


def _foreach_copy_(self, src, non_blocking=False):
    ts = _tensors("_foreach_copy_", self)
    for t, s in zip(ts, _each("_foreach_copy_", src, len(ts))):
        t.copy_(s, non_blocking=non_blocking)
    return ts


def _foreach_clone(self):
    return [t.clone() for t in _tensors("_foreach_clone", self)]


def exports():
    """The names ember exports (ember._foreach_add, ...)."""
    names = {name: value for name, value in globals().items() if name.startswith("_foreach_")}
    for name in _UNARY:
        names[f"_foreach_{name}"], names[f"_foreach_{name}_"] = _unary(name)
    for name, fn in _BINARY.items():
        names[f"_foreach_{name}"], names[f"_foreach_{name}_"] = _binary(name, fn)
    for name, fn in (("addcmul", ember.addcmul), ("addcdiv", ember.addcdiv)):
        names[f"_foreach_{name}"], names[f"_foreach_{name}_"] = _pointwise(name, fn)
    names["_foreach_pow_"] = lambda self, exponent: _assign(self, _foreach_pow(self, exponent))
    return names
