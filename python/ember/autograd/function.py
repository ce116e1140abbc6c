"""Custom autograd functions, as torch.autograd.Function.

    class Exp(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)

forward runs without recording a graph; the outputs get one node (named
"ExpBackward") whose backward calls the class's backward with one gradient per
output and expects one gradient (or None) per forward argument. Both of
torch's styles work: forward(ctx, *args), or forward(*args) together with
setup_context(ctx, inputs, output).
"""
import functools
import inspect

from ember import _C

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The `ctx` of forward and backward: saves tensors for backward and
    carries any attribute forward sets on it."""

    def __init__(self):
        self.to_save = ()
        self.needs_input_grad = ()
        self.materialize_grads = True
        self._saved = None
        self._non_differentiable = []
        self._dirty = []

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _C.Tensor):
                raise TypeError(f"save_for_backward can only save tensors (or None), but argument {i} is "
                                f"{type(t).__name__}; store other values as attributes of ctx")
        self.to_save = tensors

    @property
    def saved_tensors(self):
        if self._saved is None:
            raise RuntimeError("saved_tensors: only available in backward (save them with ctx.save_for_backward "
                               "in forward)")
        return self._saved

    def mark_non_differentiable(self, *tensors):
        """These outputs get no gradient (backward still receives a zero one for them)."""
        self._non_differentiable.extend(tensors)

    def mark_dirty(self, *tensors):
        """forward modified these inputs in place (and returns them)."""
        self._dirty.extend(tensors)

    def set_materialize_grads(self, value):
        """With False, backward gets None instead of zeros for the outputs
        that got no gradient (unused, or not differentiable)."""
        self.materialize_grads = bool(value)


def _is_in(t, tensors):
    return any(t is x for x in tensors)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_name = name + "Backward"


class Function(metaclass=_FunctionMeta):
    """Subclass with static forward and backward methods, then call apply()."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__}: autograd functions are not instantiated; "
                           f"call {type(self).__name__}.apply(...) instead")

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("Function: subclasses must define a static forward method")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("Function: setup_context is not defined")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("Function: subclasses must define a static backward method to be "
                                  "differentiated")

    vjp = backward

    @classmethod
    def _separate_setup(cls):
        return cls.setup_context is not Function.setup_context

    @classmethod
    def _bind(cls, args, kwargs):
        if not kwargs:
            return args
        sig = inspect.signature(cls.forward)
        params = list(sig.parameters.values())
        if not cls._separate_setup():
            params = params[1:]  # ctx
        bound = inspect.Signature(params).bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments[p.name] for p in params if p.kind not in (p.VAR_KEYWORD,))

    @classmethod
    def apply(cls, *args, **kwargs):
        args = cls._bind(args, kwargs)
        ctx = FunctionCtx()
        tensor_args = [a for a in args if isinstance(a, _C.Tensor)]
        grad_on = _C.is_grad_enabled()
        ctx.needs_input_grad = tuple(grad_on and isinstance(a, _C.Tensor) and a.requires_grad for a in args)
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            if cls._separate_setup():
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        finally:
            _C._set_grad_enabled(prev)
        if not any(ctx.needs_input_grad):
            return output
        return _connect(cls, ctx, args, tensor_args, output)


def _connect(cls, ctx, args, tensor_args, output):
    """Gives the outputs of forward one node leading back to the tensor arguments."""
    single = not isinstance(output, (tuple, list))
    outs = [output] if single else list(output)
    name = cls._backward_name
    for t in ctx._dirty:
        if not _is_in(t, tensor_args) or not _is_in(t, outs):
            raise RuntimeError(f"{name}: a tensor passed to mark_dirty must be an input of forward that forward "
                               "also returns")
        _C._check_inplace(t, name)
    # The node's outputs. An input returned as it is (or modified in place)
    # is represented by a new tensor sharing its storage, so the input's own
    # history is not overwritten.
    recorded = [o.detach() if isinstance(o, _C.Tensor) and _is_in(o, tensor_args) else o for o in outs]
    diff = [i for i, o in enumerate(outs) if isinstance(o, _C.Tensor) and o.is_floating_point()
            and not _is_in(o, ctx._non_differentiable)]
    if not diff:
        return output
    # An output kept as a ctx attribute (ctx.y = y) would close a reference
    # cycle through the node that Python's collector cannot see: it is saved
    # like save_for_backward's tensors instead and put back for backward.
    stashed = [attr for attr, value in vars(ctx).items()
               if not attr.startswith("_") and isinstance(value, _C.Tensor) and _is_in(value, outs)]
    saved = list(ctx.to_save) + [getattr(ctx, attr) for attr in stashed]
    for attr in stashed:
        delattr(ctx, attr)
    backward = _BackwardCall(cls, ctx, args, outs, diff, len(ctx.to_save), stashed)
    # Only save_for_backward's tensors go through saved-tensor hooks (torch
    # does not save ctx attributes at all).
    _C._record_function(name, tensor_args, [recorded[i] for i in diff], saved, backward, len(ctx.to_save),
                        ctx.materialize_grads)
    # The node keeps the saved tensors (outputs without their history); ctx
    # holding them too would make a reference cycle through the node.
    ctx.to_save = ()
    ctx._non_differentiable = []
    results = recorded
    for i, o in enumerate(outs):
        if _is_in(o, ctx._dirty):
            _C._rebase_history(o, recorded[i])
            results[i] = o
    ctx._dirty = []
    if single:
        return results[0]
    return tuple(results) if isinstance(output, tuple) else results


class _BackwardCall:
    """What the node calls: the gradients of the differentiable outputs and
    the saved tensors in, one gradient per tensor argument out."""

    def __init__(self, cls, ctx, args, outs, diff, n_saved, stashed):
        self.cls = cls
        self.ctx = ctx
        self.n_saved = n_saved  # saved[:n_saved] are save_for_backward's; the rest ctx attributes
        self.stashed = stashed
        self.arg_is_tensor = [isinstance(a, _C.Tensor) for a in args]
        self.diff = diff
        # Zeros stand in for the outputs that got no gradient.
        self.out_meta = [(tuple(o.shape), o.dtype, o.device) if isinstance(o, _C.Tensor) else None for o in outs]

    def __call__(self, grads, saved, needs_grad):
        ctx = self.ctx
        full = [None] * len(self.out_meta)
        for i, g in zip(self.diff, grads):
            full[i] = g
        if ctx.materialize_grads:
            for i, meta in enumerate(self.out_meta):
                if full[i] is None and meta is not None:
                    full[i] = _C.zeros(meta[0], dtype=meta[1], device=meta[2])
        ctx._saved = tuple(saved[:self.n_saved])
        for name, value in zip(self.stashed, saved[self.n_saved:]):
            setattr(ctx, name, value)
        try:
            result = self.cls.backward(ctx, *full)
        finally:
            ctx._saved = None
            for name in self.stashed:
                ctx.__dict__.pop(name, None)
        return self._check(result)

    def _check(self, result):
        name = self.cls._backward_name
        result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        n = len(self.arg_is_tensor)
        if len(result) < n or any(r is not None for r in result[n:]):
            raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {n}, "
                               f"got {len(result)})")
        grads = []
        for i, (g, is_tensor) in enumerate(zip(result, self.arg_is_tensor)):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(f"function {name} returned a gradient different than None at position "
                                       f"{i + 1}, but the corresponding forward input was not a Tensor")
                continue
            if g is not None and not isinstance(g, _C.Tensor):
                raise TypeError(f"function {name} returned {type(g).__name__} as the gradient at position "
                                f"{i + 1}; expected a Tensor or None")
            grads.append(g)
        return grads


def once_differentiable(backward):
    """Decorates a backward that is not itself differentiable: it runs without
    recording a graph, so a double backward through it gets no gradient."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            return backward(ctx, *grads)
        finally:
            _C._set_grad_enabled(prev)
    return wrapper
