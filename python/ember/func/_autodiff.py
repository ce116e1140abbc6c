"""grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian (as torch.func's),
written on ember's tape autograd (ember.autograd.grad).

Each call makes fresh differentiable stand-ins for the inputs it
differentiates, runs the function with gradients enabled, and asks the tape
for the derivative. When an input already carries a graph (an enclosing
transform differentiates through this one: grad(grad(f)), hessian,
vmap(grad(f)) under grad), the derivative is built with create_graph=True so
the enclosing transform can differentiate it again; at the outermost level the
results come back detached. Tensors func closes over are constants to these
transforms (pass them as arguments to differentiate with respect to them).

ember has no forward-mode AD: jvp is computed by the double-vjp trick
(J t = d/du <J^T u, t>, exact, two reverse passes), and jacfwd builds the
Jacobian column by column the same way (one pass per input element after one
shared reverse pass), while jacrev builds it row by row (one reverse pass per
output element)."""
import ember

from ._pytree import tree_flatten, tree_unflatten


def _is_tensor(x):
    return isinstance(x, ember.Tensor)


def _prepare(tree):
    """(stand-ins, flat stand-ins, nested): the tensors of tree replaced by differentiable stand-ins; nested
    says an enclosing transform tracks one of them (so derivatives must stay differentiable)."""
    leaves, spec = tree_flatten(tree)
    nested = False
    made = []
    for leaf in leaves:
        if not _is_tensor(leaf):
            made.append(leaf)
        elif leaf.requires_grad:
            nested = True
            made.append(leaf.view_as(leaf))  # a distinct node whose graph still reaches the enclosing one
        else:
            if not leaf.is_floating_point() and not leaf.is_complex():
                raise RuntimeError("func transforms: only floating point tensors can be differentiated, got "
                                   f"{leaf.dtype}")
            made.append(leaf.detach().requires_grad_())
    return tree_unflatten(made, spec), [m for m in made if _is_tensor(m)], nested


def _argnums_tuple(argnums, n_args, name):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise RuntimeError(f"{name}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{name}: argnums must be int or Tuple[int, ...], got: {type(a).__name__}")
        if not -n_args <= a < n_args:
            raise RuntimeError(f"{name}: Got argnums={a}, but only {n_args} positional inputs")
    return tuple(a % n_args for a in nums), single


def _grads(outputs, inputs, grad_outputs, create_graph):
    """d<outputs, grad_outputs>/d inputs, zeros for inputs the outputs do not depend on."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs or not inputs:
        return [ember.zeros_like(x) for x in inputs]
    got = ember.autograd.grad([o for o, _ in pairs], inputs, grad_outputs=[g for _, g in pairs],
                              retain_graph=True, create_graph=create_graph, allow_unused=True)
    return [ember.zeros_like(x) if g is None else g for g, x in zip(got, inputs)]


def _finish(tree, nested):
    """Outermost level: results detached (no graph leaks to the caller)."""
    if nested:
        return tree
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([x.detach() if _is_tensor(x) else x for x in leaves], spec)


def _split_aux(out, has_aux, name):
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise RuntimeError(f"{name}(f, ...)(*args): output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return out[0], out[1]


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (gradient of func's scalar output with respect to args[argnums], output); with
    has_aux, func returns (output, aux) and the result is (gradient, (output, aux))."""
    def wrapper(*args, **kwargs):
        nums, single = _argnums_tuple(argnums, len(args), "grad_and_value")
        args = list(args)
        flat_inputs, per_arg, nested = [], [], False
        for a in nums:
            args[a], flat, arg_nested = _prepare(args[a])
            per_arg.append((args[a], len(flat)))
            flat_inputs += flat
            nested = nested or arg_nested
        with ember.enable_grad():
            out, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value")
            if not _is_tensor(out):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(out).__name__}")
            if out.numel() != 1 or out.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs "
                                   "instead?")
            grads = _grads([out], flat_inputs, [ember.ones_like(out)], create_graph=nested)
        # regroup the flat gradients by argument, each in its argument's structure
        result, start = [], 0
        for stand_in, count in per_arg:
            leaves, spec = tree_flatten(stand_in)
            grads_here = iter(grads[start:start + count])
            result.append(tree_unflatten([next(grads_here) if _is_tensor(x) else x for x in leaves], spec))
            start += count
        g = result[0] if single else tuple(result)
        value = out if aux is None else (out, aux)
        return _finish(g, nested), _finish(value, nested)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of func's scalar output with respect to args[argnums] (a tuple of
    gradients for a tuple of argnums; with has_aux, (gradient, aux))."""
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) returns the vector-Jacobian products, one per
    primal, as a tuple."""
    stand_ins, flat_inputs, nested = _prepare(tuple(primals))
    with ember.enable_grad():
        out, aux = _split_aux(func(*stand_ins), has_aux, "vjp")
    out_leaves, out_spec = tree_flatten(out)
    for leaf in out_leaves:
        if not _is_tensor(leaf):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has a Tensor output, got "
                               f"{type(leaf).__name__}")

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        ct_leaves, ct_spec = tree_flatten(cotangents)
        if len(ct_leaves) != len(out_leaves):
            raise RuntimeError("vjp_fn: Expected pytree structure of cotangents to be the same as pytree "
                               "structure of outputs to the function")
        for o, c in zip(out_leaves, ct_leaves):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(f"vjp_fn: Mismatch in shape: output has shape {tuple(o.shape)} but the "
                                   f"cotangent has shape {tuple(c.shape)}")
        make_graph = nested or bool(create_graph) or any(c.requires_grad for c in ct_leaves)
        with ember.enable_grad():
            grads = _grads(out_leaves, flat_inputs, ct_leaves, create_graph=make_graph)
        leaves, spec = tree_flatten(stand_ins)
        it = iter(grads)
        return _finish(tree_unflatten([next(it) if _is_tensor(x) else x for x in leaves], spec), make_graph)

    result = (_finish(out, nested), vjp_fn)
    return result + (_finish(aux, nested),) if has_aux else result


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J @ tangents[, aux]); computed with two reverse passes (double-vjp), which is exact
    but needs func's backward to be differentiable (every ember op's is)."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples")
    if len(primals) != len(tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same length")
    stand_ins, flat_inputs, nested = _prepare(primals)
    flat_tangents, _ = tree_flatten(tangents)
    flat_tangents = [t for t in flat_tangents if _is_tensor(t)]
    for x, t in zip(flat_inputs, flat_tangents):
        if tuple(x.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same shape, "
                               f"got {tuple(x.shape)} and {tuple(t.shape)}")
    with ember.enable_grad():
        out, aux = _split_aux(func(*stand_ins), has_aux, "jvp")
        out_leaves, out_spec = tree_flatten(out)
        # u: a dummy cotangent; g(u) = J^T u is linear in u, and d<g(u), t>/du = J t
        dummies = [ember.zeros_like(o).requires_grad_() for o in out_leaves]
        vjps = _grads(out_leaves, flat_inputs, dummies, create_graph=True)
        nested = nested or any(t.requires_grad for t in flat_tangents)
        jvps = _grads(vjps, dummies, flat_tangents, create_graph=nested)
    result = (_finish(out, nested), _finish(tree_unflatten(jvps, out_spec), nested))
    return result + (_finish(aux, nested),) if has_aux else result


def _rows_by_reverse(out_leaves, inputs, nested):
    """[output][input] Jacobian blocks, one reverse pass per output element (a row of the Jacobian)."""
    blocks = []
    for o in out_leaves:
        rows = [[] for _ in inputs]
        flat = o.reshape(-1)
        for i in range(flat.numel()):
            seed = ember.zeros_like(flat)
            seed[i] = 1
            for k, g in enumerate(_grads([flat], inputs, [seed], create_graph=nested)):
                rows[k].append(g)
        blocks.append([ember.stack(rows[k]).reshape(*o.shape, *x.shape) if rows[k] else
                       ember.zeros(*o.shape, *x.shape, dtype=x.dtype, device=x.device)
                       for k, x in enumerate(inputs)])
    return blocks


def _columns_by_double_vjp(out_leaves, inputs, nested):
    """[output][input] Jacobian blocks, one pass per input element (a column of the Jacobian): with a dummy
    cotangent u, g(u) = J^T u is computed once (keeping its graph), and d g_j / du is column j of J."""
    dummies = [ember.zeros_like(o).requires_grad_() for o in out_leaves]
    vjps = _grads(out_leaves, inputs, dummies, create_graph=True)
    columns = [[[] for _ in inputs] for _ in out_leaves]
    for k, x in enumerate(inputs):
        flat = vjps[k].reshape(-1)
        for j in range(x.numel()):
            seed = ember.zeros_like(flat)
            seed[j] = 1
            for oi, col in enumerate(_grads([flat], dummies, [seed], create_graph=nested)):
                columns[oi][k].append(col)
    return [[ember.stack(columns[oi][k], -1).reshape(*o.shape, *x.shape) if columns[oi][k] else
             ember.zeros(*o.shape, *x.shape, dtype=x.dtype, device=x.device)
             for k, x in enumerate(inputs)]
            for oi, o in enumerate(out_leaves)]


def _jacobian(func, argnums, has_aux, name, blocks_of):
    def wrapper(*args, **kwargs):
        nums, single = _argnums_tuple(argnums, len(args), name)
        args = list(args)
        inputs, nested = [], False
        for a in nums:
            if not _is_tensor(args[a]):
                raise RuntimeError(f"{name}: the differentiated arguments must be Tensors, got "
                                   f"{type(args[a]).__name__}")
            stand_in, _, arg_nested = _prepare(args[a])
            args[a] = stand_in
            inputs.append(stand_in)
            nested = nested or arg_nested
        with ember.enable_grad():
            out, aux = _split_aux(func(*args, **kwargs), has_aux, name)
            out_leaves, out_spec = tree_flatten(out)
            blocks = blocks_of(out_leaves, inputs, nested)
        per_output = [b[0] if single else tuple(b) for b in blocks]
        result = _finish(tree_unflatten(per_output, out_spec), nested)
        return (result, _finish(aux, nested)) if has_aux else result
    return wrapper


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """A function returning the Jacobian of func with respect to args[argnums] (shape: output shape + input
    shape), one reverse pass per output element. chunk_size is accepted and ignored."""
    return _jacobian(func, argnums, has_aux, "jacrev", _rows_by_reverse)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian column by column, one pass per input element, as forward mode would (cheaper than jacrev
    when the inputs are fewer than the outputs). ember has no forward-mode AD: each column is a
    Jacobian-vector product by the double-vjp trick, sharing one first reverse pass."""
    return _jacobian(func, argnums, has_aux, "jacfwd", _columns_by_double_vjp)


def hessian(func, argnums=0):
    """The Hessian of a scalar-valued func with respect to args[argnums] (jacfwd of jacrev)."""
    return jacfwd(jacrev(func, argnums), argnums)
