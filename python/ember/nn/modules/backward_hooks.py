"""Module backward hooks (register_full_backward_hook / _pre_hook), as torch's:
the module's tensor inputs and outputs pass through identity autograd
Functions. The outputs' node runs first in backward: it hands grad_output to
the pre-hooks (which may replace it) and keeps it; the inputs' node then calls
each hook(module, grad_input, grad_output), which may replace grad_input."""
import ember
from ember.autograd import Function


def _tensors(values):
    return [(i, v) for i, v in enumerate(values) if isinstance(v, ember.Tensor)]


class _Identity(Function):
    """Returns its tensors unchanged; backward passes the gradients to `on_grads`."""

    @staticmethod
    def forward(ctx, on_grads, *tensors):
        ctx.on_grads = on_grads
        ctx.needs = [t.requires_grad for t in tensors]
        for t in tensors:
            if not (t.requires_grad and t.is_floating_point()):
                ctx.mark_non_differentiable(t)
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        grads = tuple(g if need else None for g, need in zip(grads, ctx.needs))
        return (None,) + tuple(ctx.on_grads(grads))


class BackwardHookCall:
    """One call of a module that has backward hooks."""

    def __init__(self, module, hooks, pre_hooks):
        self.module = module
        self.hooks = list(hooks)
        self.pre_hooks = list(pre_hooks)
        self.grad_output = None
        self.n_inputs = 0
        self.inputs_hooked = False

    def setup_inputs(self, args):
        tensors = _tensors(args)
        self.n_inputs = len(tensors)
        if not ember.is_grad_enabled() or not any(t.requires_grad for _, t in tensors):
            return args
        self.inputs_hooked = True
        wrapped = _Identity.apply(self._input_grads, *[t for _, t in tensors])
        args = list(args)
        for (i, _), w in zip(tensors, wrapped):
            args[i] = w
        return tuple(args)

    def setup_outputs(self, output):
        single = isinstance(output, ember.Tensor)
        values = [output] if single else list(output) if isinstance(output, (tuple, list)) else None
        if values is None or not ember.is_grad_enabled():
            return output
        tensors = _tensors(values)
        if not any(t.requires_grad for _, t in tensors):
            return output
        wrapped = _Identity.apply(self._output_grads, *[t for _, t in tensors])
        for (i, _), w in zip(tensors, wrapped):
            values[i] = w
        if single:
            return values[0]
        return tuple(values) if isinstance(output, tuple) else values

    def _output_grads(self, grads):
        for hook in self.pre_hooks:
            result = hook(self.module, grads)
            if result is not None:
                grads = self._checked(result, len(grads), "backward pre-hook", "grad_output")
        self.grad_output = grads
        if not self.inputs_hooked:  # no input needs a gradient: the hooks see None for each
            self._run_hooks((None,) * self.n_inputs)
        return grads

    def _input_grads(self, grads):
        return self._run_hooks(grads)

    def _run_hooks(self, grad_input):
        for hook in self.hooks:
            result = hook(self.module, grad_input, self.grad_output)
            if result is not None:
                grad_input = self._checked(result, len(grad_input), "backward hook", "grad_input")
        return grad_input

    def _checked(self, result, n, kind, what):
        result = (result,) if isinstance(result, ember.Tensor) else tuple(result)
        if len(result) != n:
            raise RuntimeError(f"{type(self.module).__name__}: a {kind} returned {len(result)} values for {what}, "
                               f"but the module has {n}")
        return result
