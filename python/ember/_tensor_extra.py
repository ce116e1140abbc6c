"""More Tensor methods and functions PyTorch has, written with ember ops (so
they run on any device and, where they are differentiable, record autograd):
new_* constructors, get_device, nansum/nanmean, fill_diagonal_, index_copy(_),
index_fill(_), masked_scatter(_), unique and unique_consecutive."""
import ember
from ember import _C

Tensor = _C.Tensor


def _like(self, dtype, device):
    return dict(dtype=self.dtype if dtype is None else dtype, device=self.device if device is None else device)


def _new_sized(fill):
    def method(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        if len(size) == 1 and isinstance(size[0], (tuple, list, ember.Size)):
            size = tuple(size[0])
        return fill(size, **_like(self, dtype, device)).requires_grad_(requires_grad)
    return method


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    return ember.full(tuple(size), fill_value, **_like(self, dtype, device)).requires_grad_(requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    if isinstance(data, Tensor):
        out = data.detach().clone().to(**_like(self, dtype, device))
    else:
        out = ember.tensor(data, **_like(self, dtype, device))
    return out.requires_grad_(requires_grad)


Tensor.new_zeros = _new_sized(lambda s, **kw: ember.zeros(tuple(s), **kw))
Tensor.new_ones = _new_sized(lambda s, **kw: ember.ones(tuple(s), **kw))
Tensor.new_empty = _new_sized(lambda s, **kw: ember.empty(tuple(s), **kw))
Tensor.new_full = _new_full
Tensor.new_tensor = _new_tensor
Tensor.get_device = lambda self: -1 if self.device.type == "cpu" else self.device.index or 0
Tensor.ndimension = lambda self: self.dim()


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum, NaNs counted as zero."""
    x = ember.where(ember.isnan(input), ember.zeros_like(input), input) if input.is_floating_point() else input
    if dim is None:
        return x.sum(dtype=dtype) if dtype is not None else x.sum()
    return x.sum(dim, keepdim=keepdim, dtype=dtype) if dtype is not None else x.sum(dim, keepdim=keepdim)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the values that are not NaN (NaN where there are none)."""
    if not input.is_floating_point():
        raise RuntimeError(f"nanmean: expected a floating point tensor, got {input.dtype}")
    count = (~ember.isnan(input)).to(input.dtype)
    total = nansum(input, dim, keepdim, dtype=dtype)
    n = count.sum() if dim is None else count.sum(dim, keepdim=keepdim)
    return total / n


Tensor.nansum = nansum
Tensor.nanmean = nanmean


def _fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal in place; all dims must be equal beyond 2-D.
    With wrap, a tall matrix's diagonal restarts every ncols + 1 rows."""
    if self.dim() < 2:
        raise RuntimeError("fill_diagonal_: dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("fill_diagonal_: all dimensions of input must be of equal length")
    if self.dim() == 2:
        rows, cols = self.shape
        for start in range(0, rows if wrap else 1, cols + 1):
            self[start:].diagonal().fill_(fill_value)
    else:
        ar = ember.arange(self.shape[0], device=self.device)
        self[(ar,) * self.dim()] = fill_value
    return self


Tensor.fill_diagonal_ = _fill_diagonal_


def _moved(t, dim):
    return t.transpose(0, dim) if dim != 0 else t


def _check_index(op, index):
    if not isinstance(index, Tensor) or index.dim() > 1 or index.dtype != ember.int64:
        got = f"{index.dtype} of shape {list(index.shape)}" if isinstance(index, Tensor) else type(index).__name__
        raise IndexError(f"{op}: index must be a 0-D or 1-D int64 tensor, got {got}")


def _checked_dim(op, self, dim):
    nd = max(self.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    return dim % nd


def _index_copy_(self, dim, index, source):
    _check_index("index_copy_", index)
    dim = _checked_dim("index_copy_", self, dim)
    n = index.numel()
    if self.dim() == 0:
        if n != 1 or source.numel() != 1 or source.dim() > 1:
            raise IndexError(f"index_copy_: a 0-d self takes one index and one source element, got {n} indices "
                             f"and a source of shape {list(source.shape)}")
    else:
        if source.dim() != self.dim() or source.shape[dim] != n:
            raise IndexError(f"index_copy_: Number of indices ({n}) should be equal to source.size(dim) "
                             f"({source.shape[dim] if source.dim() == self.dim() else 'none'}), with source "
                             f"{list(source.shape)} and self {list(self.shape)}")
        for d in range(self.dim()):
            if d != dim and source.shape[d] != self.shape[d]:
                raise RuntimeError(f"index_copy_: Source/destination tensor must have same slice shapes: source "
                                   f"{list(source.shape)}, self {list(self.shape)}, dim {dim}")
    # index_copy takes no negative indices (index_fill does, as in PyTorch)
    _C._check_index_range(index, self.shape[dim] if self.dim() else 1, dim, "index_copy_")
    target = self.view(1) if self.dim() == 0 else self  # a 0-d self acts as 1 element
    _moved(target, dim)[index.reshape(-1)] = _moved(source, dim) if source.dim() else source
    return self


def _index_fill_(self, dim, index, value):
    _check_index("index_fill_", index)
    dim = _checked_dim("index_fill_", self, dim)
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"index_fill_: only supports a 0-dimensional value tensor, but got one of shape "
                           f"{list(value.shape)}")
    target = self.view(1) if self.dim() == 0 else self
    try:
        _moved(target, dim)[index.reshape(-1)] = value
    except RuntimeError as e:  # a value out of self's range: name the op the user called
        if not str(e).startswith("setitem: "):
            raise
        raise RuntimeError("index_fill_: " + str(e)[len("setitem: "):]) from None
    return self


def _masked_scatter_(self, mask, source):
    """Copies source's first elements, in order, into the places mask is true."""
    if mask.dtype != ember.bool:
        raise RuntimeError(f"masked_scatter_: expected a bool mask, got {mask.dtype}")
    mask = mask.expand(*self.shape)
    n = int(mask.sum())
    if n > source.numel():
        raise RuntimeError(f"masked_scatter_: the mask selects {n} elements but source has only {source.numel()}")
    self[mask] = source.reshape(-1)[:n]
    return self


Tensor.index_copy_ = _index_copy_
Tensor.index_copy = lambda self, dim, index, source: _index_copy_(self.clone(), dim, index, source)
Tensor.index_fill_ = _index_fill_
Tensor.index_fill = lambda self, dim, index, value: _index_fill_(self.clone(), dim, index, value)
Tensor.masked_scatter_ = _masked_scatter_
Tensor.masked_scatter = lambda self, mask, source: _masked_scatter_(self.clone(), mask, source)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (always sorted, as torch's CUDA and CPU kernels
    give them), with the index of each input element's value and the counts.
    Built from sort, so it runs on any device ember sorts on."""
    if dim is not None:
        raise NotImplementedError("unique: the dim argument is not supported yet; flatten the input or use "
                                  "unique over dim=None")
    flat = input.reshape(-1)
    values, order = ember.sort(flat, stable=True)
    return _collapse_runs(values, order, flat.numel(), input.shape, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapses runs of equal consecutive values (no sorting)."""
    if dim is not None:
        raise NotImplementedError("unique_consecutive: the dim argument is not supported yet")
    flat = input.reshape(-1)
    return _collapse_runs(flat, None, flat.numel(), input.shape, return_inverse, return_counts)


def _collapse_runs(values, order, n, shape, return_inverse, return_counts):
    if n == 0:
        empty = values[:0]
        out = [empty]
        if return_inverse:
            out.append(ember.zeros(shape, dtype=ember.int64, device=values.device))
        if return_counts:
            out.append(ember.zeros(0, dtype=ember.int64, device=values.device))
        return out[0] if len(out) == 1 else tuple(out)
    starts = ember.ones(n, dtype=ember.bool, device=values.device)
    if n > 1:
        starts[1:] = values[1:] != values[:-1]
    result = [values[starts]]
    if return_inverse:
        group = ember.cumsum(starts.to(ember.int64), 0) - 1  # the run each sorted position belongs to
        inverse = group if order is None else ember.empty_like(group).scatter_(0, order, group)
        result.append(inverse.reshape(shape))
    if return_counts:
        positions = ember.nonzero(starts).reshape(-1)
        ends = ember.cat([positions[1:], ember.tensor([n], device=values.device)])
        result.append(ends - positions)
    return result[0] if len(result) == 1 else tuple(result)


Tensor.unique = unique
Tensor.unique_consecutive = unique_consecutive

# torch's Tensor._grad is the storage slot behind .grad; A3C scripts hand gradients to shared
# parameters with `shared_param._grad = local_param.grad`, so it must be .grad, not a new attribute.
Tensor._grad = property(lambda self: self.grad, lambda self, value: setattr(self, "grad", value))
