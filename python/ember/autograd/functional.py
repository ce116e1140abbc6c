"""Higher-level differentiation of functions of tensors, as
torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp. Built on
ember.autograd.grad (jvp by the double-vjp trick), so every op ember can
differentiate twice works. `inputs` (and `v`) are a tensor or a tuple of them;
results follow the same structure, as in torch."""
import ember
from ember.autograd import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(x, name, fn):
    if isinstance(x, ember.Tensor):
        return (x,), False
    if isinstance(x, (tuple, list)) and all(isinstance(t, ember.Tensor) for t in x):
        return tuple(x), True
    raise TypeError(f"{fn}: expected {name} to be a Tensor or a tuple of Tensors, got {type(x).__name__}")


def _prepare(inputs, create_graph):
    """Inputs that require grad, detached from their history unless create_graph."""
    return tuple(t if create_graph and t.requires_grad else t.detach().requires_grad_(True) for t in inputs)


def _safe_grad(outputs, inputs, grad_outputs, create_graph):
    """autograd.grad over the outputs that are in a graph; None for every
    input when none is (a constant function's derivative, which torch gives as zeros)."""
    grad_outputs = grad_outputs if grad_outputs is not None else [None] * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return [None] * len(inputs)
    return _grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=True, create_graph=create_graph,
                 allow_unused=True)


def _grads(outputs, inputs, grad_outputs, create_graph, strict, fn):
    got = _safe_grad(outputs, inputs, grad_outputs, create_graph)
    result = []
    for i, (g, x) in enumerate(zip(got, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(f"{fn}: the output is independent of input {i}; strict=True does not allow that")
            g = ember.zeros_like(x)
        result.append(g if create_graph else g.detach())
    return tuple(result)


def _outputs_of(func, inputs, fn):
    out = func(*inputs)
    outs, is_tuple = _as_tuple(out, "the function's output", fn)
    return outs, is_tuple


def _pack(values, is_tuple):
    return tuple(values) if is_tuple else values[0]


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs."""
    ins, in_tuple = _as_tuple(inputs, "inputs", "vjp")
    ins = _prepare(ins, create_graph)
    with ember.enable_grad():
        outs, out_tuple = _outputs_of(func, ins, "vjp")
        if v is None:
            if len(outs) != 1 or outs[0].numel() != 1:
                raise RuntimeError("vjp: v can be omitted only when the function returns a single one-element tensor")
            vs = (ember.ones_like(outs[0]),)
        else:
            vs, _ = _as_tuple(v, "v", "vjp")
            for o, t in zip(outs, vs):
                if tuple(o.shape) != tuple(t.shape):
                    raise RuntimeError(f"vjp: v has shape {list(t.shape)} where the output has {list(o.shape)}")
        g = _grads(list(outs), list(ins), list(vs), create_graph, strict, "vjp")
    detached = [o if create_graph else o.detach() for o in outs]
    return _pack(detached, out_tuple), _pack(list(g), in_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by differentiating
    the vjp u -> u^T J with respect to u (the double-vjp trick)."""
    ins, in_tuple = _as_tuple(inputs, "inputs", "jvp")
    ins = _prepare(ins, create_graph)
    if v is None:
        if len(ins) != 1 or ins[0].numel() != 1:
            raise RuntimeError("jvp: v can be omitted only when the input is a single one-element tensor")
        vs = (ember.ones_like(ins[0]),)
    else:
        vs, _ = _as_tuple(v, "v", "jvp")
    with ember.enable_grad():
        outs, out_tuple = _outputs_of(func, ins, "jvp")
        us = [ember.zeros_like(o).requires_grad_(True) for o in outs]
        g = _safe_grad(list(outs), list(ins), us, create_graph=True)
        pairs = [(gi, vi) for gi, vi in zip(g, vs) if gi is not None and gi.requires_grad]
        if not pairs:
            jv = [ember.zeros_like(o) for o in outs]
        else:
            jv = _grad([p[0] for p in pairs], us, [p[1] for p in pairs], retain_graph=True,
                       create_graph=create_graph, allow_unused=True)
            jv = [ember.zeros_like(o) if j is None else j for j, o in zip(jv, outs)]
    detached = [o if create_graph else o.detach() for o in outs]
    return _pack(detached, out_tuple), _pack([j if create_graph else j.detach() for j in jv], out_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """J[i][j] = d output_i / d input_j, shaped output_i.shape + input_j.shape;
    one vjp per output element (reverse mode)."""
    if strategy != "reverse-mode":
        raise NotImplementedError("jacobian: only strategy='reverse-mode' is implemented")
    ins, in_tuple = _as_tuple(inputs, "inputs", "jacobian")
    ins = _prepare(ins, create_graph)
    with ember.enable_grad():
        outs, out_tuple = _outputs_of(func, ins, "jacobian")
        rows = []
        for o in outs:
            flat = o.reshape(-1)
            per_input = [[] for _ in ins]
            for k in range(flat.numel()):
                g = _grads([flat[k]], list(ins), None, create_graph, strict, "jacobian")
                for j, gj in enumerate(g):
                    per_input[j].append(gj)
            blocks = []
            for j, x in enumerate(ins):
                if per_input[j]:
                    blocks.append(ember.stack(per_input[j]).reshape(*o.shape, *x.shape))
                else:
                    blocks.append(ember.zeros(*o.shape, *x.shape, dtype=x.dtype, device=x.device))
            rows.append(_pack(blocks, in_tuple))
    return _pack(rows, out_tuple)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Jacobian of the gradient of a function returning one element."""
    ins, in_tuple = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs):
        out = func(*xs)
        if not isinstance(out, ember.Tensor) or out.numel() != 1:
            raise RuntimeError("hessian: the function must return a single one-element tensor")
        g = _safe_grad([out], list(xs), None, create_graph=True)
        return tuple(ember.zeros_like(x) if gi is None else gi for gi, x in zip(g, xs))

    result = jacobian(gradient, ins, create_graph=create_graph, strict=strict)
    if not in_tuple:
        return result[0][0]
    return result


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v); H is symmetric, so this is v^T H transposed."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func, inputs, v, create_graph, strict, fn):
    ins, in_tuple = _as_tuple(inputs, "inputs", fn)
    vs, _ = _as_tuple(v, "v", fn) if v is not None else ((None,), False)
    ins = _prepare(ins, create_graph)
    with ember.enable_grad():
        out = func(*ins)
        if not isinstance(out, ember.Tensor) or out.numel() != 1:
            raise RuntimeError(f"{fn}: the function must return a single one-element tensor")
        if v is None:
            if len(ins) != 1 or ins[0].numel() != 1:
                raise RuntimeError(f"{fn}: v can be omitted only when the input is a single one-element tensor")
            vs = (ember.ones_like(ins[0]),)
        g = _safe_grad([out], list(ins), None, create_graph=True)
        pairs = [(gi, vi) for gi, vi in zip(g, vs) if gi is not None and gi.requires_grad]
        if not pairs:
            prod = tuple(ember.zeros_like(x) for x in ins)
        else:
            prod = _grads([p[0] for p in pairs], list(ins), [p[1] for p in pairs], create_graph, strict, fn)
    return (out if create_graph else out.detach()), _pack(list(prod), in_tuple)
