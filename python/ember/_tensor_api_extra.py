"""In-place variants PyTorch has for ember's out-of-place ops (acos_, eq_,
cumsum_, tril_, ...) and the in-place shape changes (t_, transpose_,
squeeze_, unsqueeze_, swapdims_), written with ember ops.

An in-place op computes the out-of-place result and copies it into self with
copy_, so it writes self's own memory (same data_ptr, one version bump), works
through views and records autograd the way copy_ does. When autograd is
recording, the op reads a clone of self: the out-of-place op may save its input
for backward, and copy_ is about to overwrite that input."""
import ember
from ember import _C

Tensor = _C.Tensor

# name_ -> the out-of-place Tensor method it writes back (aliases included).
_INPLACE_OF = {
    "acos_": "acos", "arccos_": "acos", "acosh_": "acosh", "arccosh_": "acosh",
    "asin_": "asin", "arcsin_": "asin", "asinh_": "asinh", "arcsinh_": "asinh",
    "atan_": "atan", "arctan_": "atan", "atanh_": "atanh", "arctanh_": "atanh",
    "cosh_": "cosh", "sinh_": "sinh", "tan_": "tan",
    "erfc_": "erfc", "erfinv_": "erfinv", "exp2_": "exp2", "log2_": "log2", "log10_": "log10",
    "lgamma_": "lgamma", "digamma_": "digamma", "frac_": "frac", "fix_": "fix", "trunc_": "trunc",
    "sgn_": "sgn", "sinc_": "sinc", "deg2rad_": "deg2rad", "rad2deg_": "rad2deg", "i0_": "i0",
    "xlogy_": "xlogy", "hypot_": "hypot", "atan2_": "atan2", "arctan2_": "atan2", "copysign_": "copysign",
    "fmod_": "fmod", "true_divide_": "true_divide", "heaviside_": "heaviside", "gcd_": "gcd", "lcm_": "lcm",
    "ldexp_": "ldexp", "nextafter_": "nextafter", "renorm_": "renorm", "mvlgamma_": "mvlgamma",
    "logical_and_": "logical_and", "logical_or_": "logical_or", "logical_xor_": "logical_xor",
    "logical_not_": "logical_not",
    "bitwise_and_": "bitwise_and", "bitwise_or_": "bitwise_or", "bitwise_xor_": "bitwise_xor",
    "bitwise_not_": "bitwise_not",
    "eq_": "eq", "ne_": "ne", "not_equal_": "ne", "lt_": "lt", "less_": "lt", "le_": "le", "less_equal_": "le",
    "gt_": "gt", "greater_": "gt", "ge_": "ge", "greater_equal_": "ge",
    "cumsum_": "cumsum", "cumprod_": "cumprod", "tril_": "tril", "triu_": "triu", "addmm_": "addmm",
}


def add_methods(methods):
    """Sets Tensor attributes ember does not have yet: a native method that a
    later merge brings in wins over these Python compositions."""
    for name, value in methods.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, value)


def _requires_grad(value):
    return isinstance(value, Tensor) and value.requires_grad


def _check_leaf(name, self):
    if ember.is_grad_enabled() and self.requires_grad and self.is_leaf:
        raise RuntimeError(f"{name}: a leaf Variable that requires grad is being used in an in-place operation.")


def write_back(name, self, result):
    """Copies an out-of-place result into self, as torch's in-place ops do:
    the result must have self's shape and a dtype that casts to self's, and self
    must not be expanded (copy_ refuses that)."""
    if tuple(result.shape) != tuple(self.shape):
        raise RuntimeError(f"{name}: output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    if not ember.can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"{name}: result type {result.dtype} can't be cast to the desired output type {self.dtype}")
    try:
        self.copy_(result)
    except RuntimeError as e:  # name the op the user called, not copy_
        message = str(e)
        if message.startswith("copy_: "):
            raise type(e)(f"{name}: {message[len('copy_: '):]}") from None
        raise
    return self  # the caller's own object (a Parameter stays one)


def inplace(name, compute):
    """The in-place method `name` writing compute(self, *args, **kwargs) into self."""
    def method(self, *args, **kwargs):
        _check_leaf(name, self)
        recording = ember.is_grad_enabled() and (
            self.requires_grad or any(map(_requires_grad, args)) or any(map(_requires_grad, kwargs.values())))
        return write_back(name, self, compute(self.clone() if recording else self, *args, **kwargs))
    method.__name__ = name
    method.__doc__ = f"In-place version of {compute.__name__}: writes the result into self and returns self."
    return method


def install_inplace():
    """Adds every _INPLACE_OF method ember lacks (run after the out-of-place ops exist)."""
    for name, base in _INPLACE_OF.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, inplace(name, getattr(Tensor, base)))


def _float_power_(self, exponent):
    # torch computes in float64 and refuses to narrow the result back.
    if self.dtype != ember.float64:
        raise RuntimeError(f"float_power_: the base given to float_power_ has dtype {self.dtype} but the "
                           f"operation's result requires dtype {ember.float64}")
    return _float_power_into(self, exponent)


def _polygamma_of(x, n):
    return ember.polygamma(n, x)


_float_power_into = inplace("float_power_", lambda x, exponent: x.float_power(exponent))
_polygamma_ = inplace("polygamma_", _polygamma_of)


# ---- in-place shape changes: self's own sizes and strides change, its memory does not

def _bump_version(t):
    # A write of no elements still counts as a write: tensors saved for backward
    # with the old geometry are then refused instead of read with the new one.
    with ember.no_grad():
        d = t.detach()
        (d.unsqueeze(0) if d.dim() == 0 else d).narrow(0, 0, 0).fill_(0)


def _restride(name, self, make_view):
    """Gives self the geometry of make_view(self), a view of its own memory."""
    _check_leaf(name, self)
    if not self.requires_grad or self.is_leaf:  # a leaf gets here under no_grad only
        self.data = make_view(self.detach())
        _bump_version(self)
        return self
    if not ember.is_grad_enabled():
        # self's node expects gradients of the old shape, and nothing records a new one.
        raise RuntimeError(f"{name}: ember cannot change the shape in place of a non-leaf tensor that requires grad "
                           f"while grad mode is off; use the out-of-place {name[:-1]}() instead")
    # Autograd: self becomes a copy of the view of its old self. copy_ writes
    # the same values back (one version bump) and makes that view's graph
    # self's history; the old node gets no gradient from self any more.
    source = make_view(self).clone()
    old = self.detach()
    self.data = make_view(old)
    try:
        self.copy_(source)
    except RuntimeError as e:
        self.data = old  # e.g. a view of a leaf that requires grad: leave self as it was
        message = str(e)
        if message.startswith("copy_: "):
            raise type(e)(f"{name}: {message[len('copy_: '):]}") from None
        raise
    return self


def _t_(self):
    if self.dim() > 2:
        raise RuntimeError(f"t_: expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return _restride("t_", self, lambda t: t.t())


def _transpose_(self, dim0, dim1):
    return _restride("transpose_", self, lambda t: t.transpose(dim0, dim1))


def _swapdims_(self, dim0, dim1):
    return _restride("swapdims_", self, lambda t: t.transpose(dim0, dim1))


def _swapaxes_(self, axis0, axis1):
    return _restride("swapaxes_", self, lambda t: t.transpose(axis0, axis1))


def _squeezed(t, dim):
    if dim is None:
        return t.squeeze()
    if isinstance(dim, (tuple, list)):
        for i in sorted({k % max(t.dim(), 1) for k in dim}, reverse=True):  # from the back: indices stay valid
            t = t.squeeze(i)
        return t
    return t.squeeze(dim)


def _squeeze_(self, dim=None):
    return _restride("squeeze_", self, lambda t: _squeezed(t, dim))


def _unsqueeze_(self, dim):
    return _restride("unsqueeze_", self, lambda t: t.unsqueeze(dim))


def install_shape_inplace():
    add_methods(dict(t_=_t_, transpose_=_transpose_, swapdims_=_swapdims_, swapaxes_=_swapaxes_, squeeze_=_squeeze_,
                     unsqueeze_=_unsqueeze_, float_power_=_float_power_, polygamma_=_polygamma_))


# ---- top-level in-place functions (torch.acos_(x), torch.clamp_(x, 0, 1), ...)

_TOP_LEVEL_INPLACE = (
    "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_", "asinh_",
    "atan_", "atanh_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cosh_", "deg2rad_", "erfc_", "exp2_", "fix_",
    "frac_", "gcd_", "i0_", "lcm_", "ldexp_", "log10_", "log2_", "nan_to_num_", "rad2deg_", "round_", "sinc_",
    "sinh_", "tan_", "trunc_", "xlogy_", "zero_", "fill_", "detach_", "addmv_", "logit_", "index_put_",
    "conj_physical_",
)


def _top_level(name):
    def function(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    function.__name__ = name
    function.__doc__ = f"ember.{name}(input, ...) is input.{name}(...)."
    return function


def top_level_functions():
    """{name: function} for the top-level in-place functions ember lacks."""
    return {name: _top_level(name) for name in _TOP_LEVEL_INPLACE
            if hasattr(Tensor, name) and not hasattr(ember, name)}


def _method_aliases():
    """Top-level forms of Tensor methods: ember.index_fill(x, ...) is x.index_fill(...)."""
    names = ("index_copy", "index_fill", "masked_scatter", "detach", "is_floating_point", "sum_to_size")
    aliases = {name: _top_level(name) for name in names}

    def fill(input, value):
        """A tensor like input filled with value (out of place)."""
        return input.clone().fill_(value.item() if isinstance(value, Tensor) else value)
    aliases["fill"] = fill
    del aliases["sum_to_size"]  # a method only in torch
    return aliases


def exports():
    """Installs the methods of this module and its siblings (math, stats,
    shape) on Tensor and returns the top-level functions ember lacked."""
    import ember.nn.functional as F
    from ember import _tensor_api_functions, _tensor_api_math, _tensor_api_more, _tensor_api_shape, _tensor_api_stats
    install_inplace()
    install_shape_inplace()
    _tensor_api_more.install()
    functions = {}
    for table in (_tensor_api_math.FUNCTIONS, _tensor_api_stats.FUNCTIONS, _tensor_api_stats.WINDOWS,
                  _tensor_api_shape.FUNCTIONS, _tensor_api_more.FUNCTIONS, top_level_functions(),
                  dict(cosine_similarity=F.cosine_similarity, pairwise_distance=F.pairwise_distance,
                       hardshrink=F.hardshrink, prelu=F.prelu),
                  _method_aliases(), _tensor_api_functions.functions()):
        functions.update({k: v for k, v in table.items() if not hasattr(ember, k)})
    return functions
