"""vmap (as torch.func.vmap's interface): func mapped over a batch dimension of
its inputs. ember has no batching rules: vmap runs func once per batch
element, on slices of the mapped inputs, and stacks the results along
out_dims. The result is the same as torch's for functions without side
effects; the cost is one call of func per element. Nesting works (an inner
vmap loops inside the outer loop), and so do the autodiff transforms inside
and around it (vmap(grad(f)) gives per-sample gradients)."""
import ember

from ._pytree import tree_flatten, tree_unflatten

_RANDOMNESS = ("error", "different", "same")


def _dims_for(in_dims, args):
    """One in_dim (int or None) per leaf of args, from in_dims: an int/None for all, or a tuple with one entry
    per argument (each an int/None or a structure matching that argument)."""
    if isinstance(in_dims, int) or in_dims is None:
        per_arg = [in_dims] * len(args)
    elif isinstance(in_dims, (tuple, list)):
        if len(in_dims) != len(args):
            raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                             f"structure of `inputs`. in_dims has structure of {len(in_dims)} entries but inputs "
                             f"has {len(args)} arguments.")
        per_arg = list(in_dims)
    else:
        raise ValueError(f"vmap(f, in_dims={in_dims}, ...): expected `in_dims` to be int or a (potentially nested) "
                         f"tuple matching the structure of inputs, got: {type(in_dims).__name__}.")
    dims = []
    for arg, d in zip(args, per_arg):
        leaves, _ = tree_flatten(arg)
        if isinstance(d, int) or d is None:
            dims += [d] * len(leaves)
        else:
            sub, _ = tree_flatten(d)
            if len(sub) != len(leaves):
                raise ValueError(f"vmap: in_dims entry {d} does not match the structure of its argument")
            dims += sub
    return dims


def _rng_states():
    states = [ember.get_rng_state()]
    if ember._C._cuda.is_available():  # (ember.cuda.is_available would warn on machines without a driver)
        states += list(ember.cuda.get_rng_state_all())
    return states


def _same(a, b):
    return len(a) == len(b) and all(bool((x == y).all()) for x, y in zip(a, b))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over dim in_dims of its inputs (None: not mapped), results stacked along out_dims.
    randomness: 'error' raises if func draws random numbers, 'different' lets each element draw its own,
    'same' gives every element the same draws. chunk_size is accepted and ignored (func runs per element)."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")

    def wrapper(*args, **kwargs):
        if not args:
            raise ValueError("vmap(f)(*inputs): got no inputs. Maybe you forgot to add inputs, or you are trying "
                             "to vmap over a function with no inputs. The latter is unsupported.")
        leaves, spec = tree_flatten(list(args))
        dims = _dims_for(in_dims, args)
        sizes = []
        for leaf, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(leaf, ember.Tensor):
                raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but the "
                                 f"input is of type {type(leaf).__name__}. We cannot vmap over non-Tensor arguments")
            if not -leaf.dim() <= d < max(leaf.dim(), 1) or leaf.dim() == 0:
                raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but "
                                 f"that input is a Tensor of dimensionality {leaf.dim()} so expected in_dim to "
                                 f"satisfy -{leaf.dim()} <= in_dim < {leaf.dim()}.")
            sizes.append(leaf.shape[d])
        if not sizes:
            raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): at least one input must be mapped over "
                             "(got in_dim=None for every input)")
        if len(set(sizes)) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        results = []
        start_state = _rng_states() if randomness != "different" else None
        for i in range(sizes[0]):
            if randomness == "same":
                _restore(start_state)
            sliced = [leaf.select(d, i) if d is not None else leaf for leaf, d in zip(leaves, dims)]
            out = func(*tree_unflatten(sliced, spec), **kwargs)
            if randomness == "error" and not _same(start_state, _rng_states()):
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please either "
                                   "use the 'same' or 'different' randomness flags on vmap or perform the "
                                   "randomness operation out of vmap")
            results.append(out)
        return _stack_outputs(results, out_dims)
    return wrapper


def _restore(states):
    ember.set_rng_state(states[0])
    if len(states) > 1:
        ember.cuda.set_rng_state_all(states[1:])


def _stack_outputs(results, out_dims):
    first_leaves, spec = tree_flatten(results[0])
    per_leaf = list(zip(*[tree_flatten(r)[0] for r in results]))
    if isinstance(out_dims, int) or out_dims is None:
        dims = [out_dims] * len(first_leaves)
    else:
        dims, _ = tree_flatten(out_dims)
        if len(dims) != len(first_leaves):
            raise ValueError(f"vmap(f, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                             f"structure of `outputs`. out_dims has {len(dims)} entries but outputs has "
                             f"{len(first_leaves)}.")
    stacked = []
    for values, d in zip(per_leaf, dims):
        if not all(isinstance(v, ember.Tensor) for v in values):
            raise ValueError("vmap: `f` must return only tensors (or tuples/lists/dicts of them), got "
                             f"{type(next(v for v in values if not isinstance(v, ember.Tensor))).__name__}")
        if d is None:
            stacked.append(values[0])  # an unmapped output: every element returned the same thing
            continue
        ndim = values[0].dim() + 1
        if not -ndim <= d < ndim:
            raise ValueError(f"vmap: out_dim={d} is out of range for an output of {ndim - 1} dims")
        stacked.append(ember.stack(list(values), d))
    return tree_unflatten(stacked, spec)
