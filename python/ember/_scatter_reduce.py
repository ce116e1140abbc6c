"""scatter_reduce (torch.Tensor.scatter_reduce): src's elements reduced into
input at the positions index gives along dim, with reduce "sum", "mean",
"amax" or "amin" (include_self: whether input's own values take part).
Built from ember ops: sum and mean from scatter_add; amax/amin by sorting the
scattered values by target position (stable sorts), so equal targets form runs
whose last element is the extreme; the results are written with index_put.
Differentiable through those ops (an extreme's gradient goes to one of its
tied elements, not split among them as torch does)."""
import ember
from ember import _C

Tensor = _C.Tensor


def _target_positions(input, dim, index):
    """The flat (row-major) position in input of every element of index."""
    strides = [1] * input.dim()
    for d in range(input.dim() - 2, -1, -1):
        strides[d] = strides[d + 1] * input.shape[d + 1]
    flat = ember.zeros(index.shape, dtype=ember.int64, device=index.device)
    for d in range(index.dim()):
        if d == dim:
            coord = index.long()
        else:
            shape = [1] * index.dim()
            shape[d] = index.shape[d]
            coord = ember.arange(index.shape[d], device=index.device).view(*shape)
        flat = flat + coord * strides[d]
    return flat.reshape(-1)


def _checked_dim(input, dim, index, src):
    """dim wrapped into range, after the checks scatter makes (the amax/amin
    path below indexes a flat view, which would not catch these itself)."""
    nd = max(input.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"scatter_reduce: Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                         f"but got {dim})")
    dim %= nd
    if index.dtype != ember.int64:
        raise RuntimeError(f"scatter_reduce: Expected dtype int64 for index, got {index.dtype}")
    if src.dtype != input.dtype:
        raise RuntimeError(f"scatter_reduce: Expected self.dtype to be equal to src.dtype (got {input.dtype} and "
                           f"{src.dtype})")
    if index.dim() != input.dim() or src.dim() != input.dim():
        raise RuntimeError(f"scatter_reduce: index ({index.dim()}-D) and src ({src.dim()}-D) must have as many dims "
                           f"as self ({input.dim()}-D)")
    for d in range(index.dim()):
        if index.shape[d] > src.shape[d] or (d != dim and index.shape[d] > input.shape[d]):
            raise RuntimeError(f"scatter_reduce: Expected index {list(index.shape)} to be no larger than self "
                               f"{list(input.shape)} apart from dimension {dim} and to be no larger size than src "
                               f"{list(src.shape)}")
    _C._check_index_range(index, input.shape[dim] if input.dim() else 1, dim, "scatter_reduce", runtime_error=True)
    return dim


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"scatter_reduce: reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if reduce == "prod":
        raise NotImplementedError("scatter_reduce: reduce='prod' is not supported yet (sum, mean, amax, amin are)")
    dim = _checked_dim(input, dim, index, src)
    # src beyond index's shape takes no part, as in torch.
    src = src[tuple(slice(0, n) for n in index.shape)] if tuple(src.shape) != tuple(index.shape) else src
    if reduce in ("sum", "mean"):
        base = input if include_self else input.scatter(dim, index, 0)
        total = base.scatter_add(dim, index, src)
        if reduce == "sum":
            return total
        counts = ember.ones_like(input) if include_self else ember.ones_like(input).scatter(dim, index, 0)
        counts = counts.scatter_add(dim, index, ember.ones_like(src, dtype=input.dtype))
        if input.is_floating_point():
            return total / counts
        return ember.div(total, counts, rounding_mode="floor")
    targets = _target_positions(input, dim, index)
    values = src.reshape(-1)
    if values.numel() == 0:
        return input.clone()
    # Sort by value, then stably by target: each target's run is in
    # ascending order, so its first element is the minimum and its last the
    # maximum (NaN sorts last; it is put back below, as NaN propagates).
    by_value = ember.argsort(values, stable=True)
    order = by_value[ember.argsort(targets[by_value], stable=True)]
    sorted_targets = targets[order]
    edge = ember.ones(sorted_targets.shape, dtype=ember.bool, device=sorted_targets.device)
    if sorted_targets.numel() > 1:
        change = sorted_targets[1:] != sorted_targets[:-1]
        if reduce == "amax":
            edge[:-1] = change  # the last of each run
        else:
            edge[1:] = change  # the first of each run
    where = sorted_targets[edge]
    extreme = values[order[edge]]
    out = input.clone()
    flat = out.view(-1)
    if include_self:
        pick = ember.maximum if reduce == "amax" else ember.minimum
        extreme = pick(flat[where], extreme)
    flat[where] = extreme
    if values.is_floating_point():
        nan = ember.isnan(values)
        if bool(nan.any()):
            flat[targets[nan]] = float("nan")
    return out


def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    result = scatter_reduce(self, dim, index, src, reduce, include_self=include_self)
    self.copy_(result)
    return self


Tensor.scatter_reduce = scatter_reduce
Tensor.scatter_reduce_ = _scatter_reduce_
