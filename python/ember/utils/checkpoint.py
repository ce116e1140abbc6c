"""Activation checkpointing, as torch.utils.checkpoint: trade compute for
memory by not keeping a block's intermediate results for backward, and running
the block again when backward reaches it.

    out = checkpoint(block, x, use_reentrant=False)

How ember does it: the block runs once, recording its graph as usual; that
graph tells which parameters the block used. Its outputs are then handed back
with a single node instead, and the recorded graph (with every activation it
saved) is dropped. Backward runs the block again with the same random number
state and autocast settings and differentiates it against the arguments and
those parameters. Gradients reach parameters even when no argument requires
grad (torch's use_reentrant=False behaviour; ember gives it for either value of
use_reentrant). A block may not use a tensor that requires grad, was computed
before the call and is not an argument: pass such tensors as arguments.
"""
import contextlib

from ember import _C
from ember.autograd.graph import _no_saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential"]

_AUTOCAST_DEVICES = ("cuda", "cpu")
_TENSOR = object()  # the place of a tensor argument in _Recompute.args


class _RngStates:
    """The CPU generator's state and that of every GPU an argument lives on."""

    def __init__(self, args):
        from ember import cuda
        self.cpu = _C.get_rng_state()
        indices = sorted({a.device.index or 0 for a in args if isinstance(a, _C.Tensor) and a.device.type == "cuda"})
        self.cuda = {i: cuda.get_rng_state(i) for i in indices}

    @contextlib.contextmanager
    def restored(self):
        """Runs the body from the saved states, then puts the current ones back."""
        from ember import cuda
        now_cpu = _C.get_rng_state()
        now_cuda = {i: cuda.get_rng_state(i) for i in self.cuda}
        _C.set_rng_state(self.cpu)
        for i, state in self.cuda.items():
            cuda.set_rng_state(state, i)
        try:
            yield
        finally:
            _C.set_rng_state(now_cpu)
            for i, state in now_cuda.items():
                cuda.set_rng_state(state, i)


def _autocast_settings():
    return [(d, _C.is_autocast_enabled(d), _C.get_autocast_dtype(d)) for d in _AUTOCAST_DEVICES]


@contextlib.contextmanager
def _autocast_as(settings):
    from ember.amp import autocast
    with contextlib.ExitStack() as stack:
        for device, enabled, dtype in settings:
            if enabled or _C.is_autocast_enabled(device):
                stack.enter_context(autocast(device, dtype=dtype, enabled=enabled))
        yield


def _flatten(output):
    return [output] if isinstance(output, _C.Tensor) else list(output) if isinstance(output, (tuple, list)) else []


class _Recompute:
    """The checkpoint node's backward: runs the block again and differentiates it."""

    def __init__(self, function, args, kwargs, positions, params, rng, amp):
        self.function = function
        # Tensor arguments come back from the node's saved tensors (checked
        # there against later in-place changes); the rest are kept here.
        self.args = [_TENSOR if isinstance(a, _C.Tensor) else a for a in args]
        self.kwargs = kwargs
        self.positions = positions  # which outputs carry the node's gradients
        self.params = params
        self.rng = rng
        self.amp = amp

    def __call__(self, grads, saved, needs_grad):
        from ember.autograd import grad
        create_graph = _C.is_grad_enabled()
        saved = iter(saved)
        args = [next(saved) if a is _TENSOR else a for a in self.args]
        if not create_graph:
            # The rerun's graph stops at the arguments. Under create_graph the
            # gradients must stay connected to the arguments' own history.
            args = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, _C.Tensor) else a for a in args]
        rng = self.rng.restored() if self.rng is not None else contextlib.nullcontext()
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)
        try:
            with rng, _autocast_as(self.amp), _no_saved_tensors_hooks():
                outs = _flatten(self.function(*args, **self.kwargs))
            targets = [a for a in args if isinstance(a, _C.Tensor) and a.requires_grad] + self.params
            pairs = [(outs[i], g) for i, g in zip(self.positions, grads) if outs[i].requires_grad]
            if not pairs:
                return [None] * len(targets)
            result = grad([o for o, _ in pairs], targets, [g for _, g in pairs], create_graph=create_graph,
                           allow_unused=True)
        finally:
            _C._set_grad_enabled(prev)
        return list(result)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    """Runs function(*args, **kwargs) without keeping its activations for
    backward (see the module's docstring). Outputs may be a tensor or a tuple
    or list of them (other values pass through)."""
    if context_fn is not None:
        raise NotImplementedError("checkpoint: context_fn is not supported by ember")
    if not _C.is_grad_enabled():
        return function(*args, **kwargs)
    rng = _RngStates(args) if preserve_rng_state else None
    amp = _autocast_settings()
    since = _C._next_sequence_nr()
    # The block's graph is dropped below: saved-tensor hooks in force see only
    # the checkpoint's own saved arguments, not the activations it frees.
    with _no_saved_tensors_hooks():
        output = function(*args, **kwargs)
    outs = _flatten(output)
    positions = [i for i, o in enumerate(outs) if isinstance(o, _C.Tensor) and o.requires_grad]
    if not positions:
        return output
    arg_tensors = [a for a in args if isinstance(a, _C.Tensor) and a.requires_grad]
    params, captured = _C._graph_inputs([outs[i] for i in positions], arg_tensors, since)
    if captured:
        raise RuntimeError(f"checkpoint: the function uses {captured} tensor(s) that require grad, were computed "
                           "before the call and are not among its arguments (captured from an enclosing scope); "
                           "their gradients would be lost when the block runs again. Pass them as arguments.")
    # The outputs handed back share storage with the block's but not its graph,
    # which goes away (with the activations it saved) when `output` does.
    detached = [o.detach() if isinstance(o, _C.Tensor) else o for o in outs]
    backward = _Recompute(function, args, kwargs, positions, list(params), rng, amp)
    _C._record_function("CheckpointFunctionBackward", arg_tensors + list(params),
                        [detached[i] for i in positions], [a for a in args if isinstance(a, _C.Tensor)], backward)
    if isinstance(output, _C.Tensor):
        return detached[0]
    return tuple(detached) if isinstance(output, tuple) else detached


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs a sequence of modules (an nn.Sequential or a list) in `segments`
    checkpointed chunks; the last chunk runs normally, as in torch."""
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)
    if segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be at least 1, got {segments}")
    size = max(1, len(functions) // segments)

    def run(start, end):
        def chunk(x):
            for f in functions[start:end]:
                x = f(x)
            return x
        return chunk

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end + 1), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions))(input)
