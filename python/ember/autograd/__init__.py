"""ember.autograd: backward, grad, gradcheck and custom Functions."""
import numpy as np

from ember import _C
from ember.autograd import function  # noqa: F401
from ember.autograd.function import Function, FunctionCtx, once_differentiable  # noqa: F401
from ember.autograd.anomaly_mode import (detect_anomaly, is_anomaly_check_nan_enabled,  # noqa: F401
                                         is_anomaly_enabled, set_detect_anomaly)
from ember.autograd.variable import Variable  # noqa: F401
from ember.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from ember import grad_mode  # noqa: F401,E402  (torch.autograd.grad_mode)


def _as_list(x):
    if x is None:
        return None
    if isinstance(x, _C.Tensor):
        return [x]
    return list(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates gradients of `tensors` into the leaves' .grad (only into
    the .grad of `inputs` when given)."""
    tensors = _as_list(tensors)
    grads = _as_list(grad_tensors) or [None] * len(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None:
        _C._backward(tensors, grads, retain_graph, create_graph)
        return
    inputs = _as_list(inputs)
    if not inputs:
        raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty.")
    results = _C._grad(tensors, inputs, grads, retain_graph, create_graph, True)
    for x, g in zip(inputs, results):
        if g is None:
            continue
        if not create_graph:
            g = g.detach()
        x.grad = g if x.grad is None else x.grad + g


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Tensor.backward, as torch.Tensor.backward."""
    if gradient is not None and not isinstance(gradient, _C.Tensor):
        gradient = _C.tensor(gradient, dtype=self.dtype)
    backward([self], None if gradient is None else [gradient], retain_graph, create_graph, inputs)


_C.Tensor.backward = _tensor_backward


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Returns the gradients of `outputs` with respect to `inputs` (a tuple).
    Unused inputs get None with allow_unused=True, zeros with materialize_grads=True.
    is_grads_batched: the first dim of every grad_output indexes a batch of vectors, and each input's
    gradient gets that dim too (one backward pass per vector here, where torch uses vmap)."""
    outputs = _as_list(outputs)
    inputs = _as_list(inputs)
    grads = _as_list(grad_outputs) or [None] * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("autograd.grad: expected allow_unused to be True or not passed when materialize_grads=True")
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused, materialize_grads)
    result = _C._grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused)
    if materialize_grads:
        result = [_C.zeros_like(x) if g is None else g for x, g in zip(inputs, result)]
    return tuple(result)


def _batched_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused, materialize_grads):
    if any(g is None for g in grads):
        raise RuntimeError("autograd.grad: is_grads_batched=True needs a grad_output for every output")
    batch = {g.shape[0] if g.dim() else None for g in grads}
    if len(batch) != 1 or None in batch:
        raise RuntimeError("autograd.grad: with is_grads_batched=True every grad_output must have the same first "
                           f"(batch) dimension, got shapes {[list(g.shape) for g in grads]}")
    n = batch.pop()
    per_vector = [grad(outputs, inputs, [g[i] for g in grads], retain_graph=True if i < n - 1 else retain_graph,
                       create_graph=create_graph, allow_unused=allow_unused, materialize_grads=materialize_grads)
                  for i in range(n)]
    result = []
    for k, x in enumerate(inputs):
        column = [row[k] for row in per_vector]
        if all(g is None for g in column):
            result.append(None)
            continue
        result.append(_C.stack([_C.zeros_like(x) if g is None else g for g in column]))
    return tuple(result)


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytic and numerical gradients disagree."""


def _host(t):
    """A tensor's values as a float64 numpy array (copied to the host first
    when the tensor lives on a GPU)."""
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64).copy()


class _HostPerturb:
    """Perturbs one element of an input in place. A CPU input is written
    through a numpy view with its own strides (reshape(-1) would silently copy
    a non-contiguous one); an input on another device is written by copying a
    perturbed host copy back into it."""

    def __init__(self, x, on_host=None):
        self.x = x.detach()
        self.on_host = x.device.type == "cpu" if on_host is None else on_host
        self.view = self.x.numpy() if self.on_host else self.x.cpu().numpy().copy()

    def set(self, k, value):
        self.view[k] = value
        if not self.on_host:
            prev = _C.is_grad_enabled()
            _C._set_grad_enabled(False)
            try:
                self.x.copy_(_C.tensor(self.view))
            finally:
                _C._set_grad_enabled(prev)


def _numerical_jacobian(fn, inputs, index, eps, on_host=None):
    perturb = _HostPerturb(inputs[index], on_host)
    view = perturb.view
    base = [_host(o) for o in _outputs(fn, inputs)]
    cols = []
    for k in np.ndindex(*view.shape):
        orig = view[k].copy()
        perturb.set(k, orig + eps)
        plus = [_host(o) for o in _outputs(fn, inputs)]
        perturb.set(k, orig - eps)
        minus = [_host(o) for o in _outputs(fn, inputs)]
        perturb.set(k, orig)
        cols.append(np.concatenate([((p - m) / (2 * eps)).reshape(-1) for p, m in zip(plus, minus)]))
    total = sum(b.size for b in base)
    return np.stack(cols, axis=1) if cols else np.zeros((total, 0))


def _overlaps(x):
    """True when two elements of x share memory (an expanded input)."""
    return any(st == 0 and sz > 1 for st, sz in zip(x.stride(), x.shape))


def _outputs(fn, inputs):
    out = fn(*inputs)
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _analytical_jacobian(fn, inputs, index):
    outs = [o for o in _outputs(fn, inputs)]
    rows = []
    for o in outs:
        n = o.numel()
        for k in range(n):
            seed = np.zeros(n, dtype=np.float64)
            seed[k] = 1.0
            g = _C.tensor(seed.reshape(o.shape), dtype=o.dtype, device=o.device)
            if not o.requires_grad:
                rows.append(np.zeros(inputs[index].numel()))
                continue
            (gi,) = grad([o], [inputs[index]], [g], retain_graph=True, allow_unused=True)
            rows.append(np.zeros(inputs[index].numel()) if gi is None else _host(gi).reshape(-1))
    return np.stack(rows, axis=0) if rows else np.zeros((0, inputs[index].numel()))


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Compares autograd's gradients of `fn` with central finite differences.

    Inputs that require grad should be float64 tensors, on any device (a GPU
    input is perturbed through a host copy written back). Returns True, or
    raises GradcheckError (returns False with raise_exception=False) naming the
    input and the largest mismatch.
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    for i, x in enumerate(inputs):
        if not (isinstance(x, _C.Tensor) and x.requires_grad):
            continue
        if x.dtype != _C.float64:
            raise ValueError(f"gradcheck: input {i} is {x.dtype}; use float64 inputs for finite differences")
        if _overlaps(x):
            raise ValueError(f"gradcheck: input {i} has overlapping memory (stride 0, e.g. from expand); "
                             "pass x.contiguous() so each element can be perturbed on its own")
        numerical = _numerical_jacobian(fn, inputs, i, eps)
        analytical = _analytical_jacobian(fn, inputs, i)
        if numerical.shape != analytical.shape or not np.allclose(analytical, numerical, atol=atol, rtol=rtol):
            diff = np.abs(analytical - numerical).max() if numerical.shape == analytical.shape else float("nan")
            msg = (f"gradcheck: Jacobian mismatch for input {i} (max abs difference {diff:.3g})\n"
                   f"numerical:\n{numerical}\nanalytical:\n{analytical}")
            if raise_exception:
                raise GradcheckError(msg)
            return False
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True):
    """Checks second derivatives: gradcheck of the function that maps
    (inputs, grad_outputs) to the gradients of fn's outputs with respect to
    the inputs, computed with create_graph=True. Random float64 grad_outputs
    are drawn when none are given."""
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    outputs = _outputs(fn, inputs)
    if grad_outputs is None:
        grad_outputs = [_C.randn(tuple(o.shape), dtype=o.dtype, device=o.device).requires_grad_(True)
                        for o in outputs if o.requires_grad]
    else:
        grad_outputs = list(grad_outputs) if isinstance(grad_outputs, (tuple, list)) else [grad_outputs]
    diff_index = [i for i, x in enumerate(inputs) if isinstance(x, _C.Tensor) and x.requires_grad]
    n = len(inputs)

    def first_derivatives(*args):
        xs, gs = args[:n], list(args[n:])
        outs = [o for o in _outputs(fn, xs) if o.requires_grad]
        wrt = [xs[i] for i in diff_index]
        grads = grad(outs, wrt, gs, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else _C.zeros_like(w) for g, w in zip(grads, wrt))

    return gradcheck(first_derivatives, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)


from ember.autograd import functional  # noqa: E402,F401  (needs grad, defined above)
from ember.autograd import profiler  # noqa: E402,F401  (the legacy profile / record_function)
from ember.autograd import graph  # noqa: E402,F401  (saved_tensors_hooks, save_on_cpu)
