"""Shape, indexing and predicate methods PyTorch has and ember lacked, written
with ember ops: broadcast_to, argwhere, ravel, swapdims, take, put(_),
diagflat, diagonal_scatter, index_reduce(_), combinations, chain_matmul,
split_with_sizes and the unsafe_* aliases, narrow_copy, empty_strided and
new_empty_strided, resolve_conj / resolve_neg, the conjugate transposes
(adjoint, mH, H) and is_signed, is_conj, is_neg, is_nonzero, is_same_size.

ember's conj() makes a conjugated copy (there are no lazy conjugate bits), so
resolve_conj and resolve_neg return self and is_conj / is_neg are False."""
import itertools

import ember
from ember import _C
from ember._tensor_api_extra import _check_leaf, add_methods, write_back
from ember._tensor_api_math import wrap_dim

Tensor = _C.Tensor


def broadcast_to(input, size):
    """input expanded (a view) to size; -1 keeps a dimension."""
    return input.expand(*size)


def argwhere(input):
    """The indices of the nonzero elements, one row per element: (n, input.dim())."""
    return ember.nonzero(input)


def ravel(input):
    """The elements as a 1-D tensor (a view when the layout allows)."""
    return input.reshape(-1)


def swapdims(input, dim0, dim1):
    return input.transpose(dim0, dim1)


def _check_flat_index(op, index, numel):
    if not isinstance(index, Tensor) or index.dtype != ember.int64:
        got = index.dtype if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got {got}")
    if index.numel():
        lo, hi = int(index.min()), int(index.max())
        bad = hi if hi >= numel else (lo if lo < -numel else None)
        if bad is not None:
            raise IndexError(f"{op}(): out of range: tried to access index {bad} on a tensor of {numel} elements.")
    return ember.where(index < 0, index + numel, index)


def take(input, index):
    """input's elements at the flat (row-major) positions index holds; index's shape."""
    flat_index = _check_flat_index("take", index, input.numel())
    return input.reshape(-1)[flat_index.reshape(-1)].reshape(index.shape)


def _put_(self, index, source, accumulate=False):
    """Writes source's elements at the flat positions index holds (adds them with accumulate)."""
    _check_leaf("put_", self)
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{self.dtype} and source.dtype = {source.dtype}")
    flat = _check_flat_index("put_", index, self.numel()).reshape(-1)
    target = self if self.dim() else self.unsqueeze(0)  # a view: writes land in self
    coords, rest = [], flat
    for size in reversed(target.shape):  # row-major position -> one coordinate per dim
        coords.append(rest % size)
        rest = rest // size
    target.index_put_(tuple(reversed(coords)), source.reshape(-1), accumulate)
    return self


def put(input, index, source, accumulate=False):
    return _put_(input.clone(), index, source, accumulate)


def diagflat(input, offset=0):
    """A matrix with input's flattened elements on diagonal `offset`."""
    return ember.diag(input.reshape(-1), offset)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of input whose diagonal (as input.diagonal(offset, dim1, dim2)) is src."""
    out = input.clone()
    diagonal = out.diagonal(offset, dim1, dim2)
    if tuple(diagonal.shape) != tuple(src.shape):
        raise RuntimeError(f"diagonal_scatter: expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(diagonal.shape)}")
    diagonal.copy_(src)
    return out


# ---- index_reduce

def _check_index_reduce(self, dim, index, source, reduce):
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if not isinstance(index, Tensor) or index.dtype not in (ember.int64, ember.int32):
        got = index.dtype if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {got}")
    if index.dim() > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, got {index.dim()}-D")
    d = wrap_dim("index_reduce_", dim, self.dim())
    src = source if source.dim() else source.reshape(1)
    if src.dim() != max(self.dim(), 1) or index.numel() != src.shape[d]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({src.shape[d] if src.dim() > d else 1}), for dim: {dim}")
    for i in range(src.dim()):
        if i != d and src.shape[i] != (self.shape[i] if self.dim() else 1):
            raise RuntimeError(f"index_reduce_(): self and source must have the same sizes outside dim {dim}, "
                               f"got {list(self.shape)} and {list(source.shape)}")
    return d, src


def _index_prod(x, dim, index, src, include_self):
    """The product, in rounds: round r multiplies in each target's r-th source
    slice, so no round writes one target twice."""
    out = x if include_self else x.index_fill(dim, index, 1)
    seen = {}
    rounds = []
    for position, target in enumerate(index.reshape(-1).tolist()):
        r = seen.get(target, 0)
        seen[target] = r + 1
        if r == len(rounds):
            rounds.append([])
        rounds[r].append(position)
    for positions in rounds:
        pick = ember.tensor(positions, dtype=ember.int64, device=index.device)
        targets = index.reshape(-1)[pick].to(ember.int64)
        product = out.index_select(dim, targets) * src.index_select(dim, pick).to(out.dtype)
        out = out.index_copy(dim, targets, product)
    return out


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with source's slices along dim reduced ("prod", "mean", "amax",
    "amin") into the slices index names (include_self: input's own values take part)."""
    d, src = _check_index_reduce(input, dim, index, source, reduce)
    x = input if input.dim() else input.reshape(1)
    if reduce == "prod":
        out = _index_prod(x, d, index, src, include_self)
    else:
        shape = [1] * src.dim()
        shape[d] = index.numel()
        spread = index.reshape(shape).to(ember.int64).expand(*src.shape)
        out = ember.scatter_reduce(x, d, spread, src.to(x.dtype), reduce, include_self=include_self)
    return out.reshape(input.shape)


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    _check_leaf("index_reduce_", self)
    recording = ember.is_grad_enabled() and (self.requires_grad or source.requires_grad)
    return write_back("index_reduce_", self, index_reduce(self.clone() if recording else self, dim, index, source,
                                                          reduce, include_self=include_self))


# ---- combinations and products

def combinations(input, r=2, with_replacement=False):
    """The r-element combinations of a 1-D tensor's elements, one per row."""
    if input.dim() != 1:
        raise RuntimeError(f"combinations: Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"combinations: Expect a non-negative number, but got {r}")
    if r == 0:
        return ember.empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    if not rows:
        return ember.empty((0, r), dtype=input.dtype, device=input.device)
    return input[ember.tensor(rows, dtype=ember.int64, device=input.device)]


def chain_matmul(*matrices, out=None):
    """The product of 2-D matrices, left to right (torch.linalg.multi_dot's older name)."""
    if out is not None:
        raise NotImplementedError("chain_matmul: out= is not supported")
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"chain_matmul(): Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    result = matrices[0]
    for m in matrices[1:]:
        result = ember.mm(result, m)
    return result


# ---- splitting and copies

def split_with_sizes(input, split_sizes, dim=0):
    """Views of input along dim with the given sizes, which must add up to its size there."""
    sizes = [int(s) for s in split_sizes]
    n = input.shape[dim]
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {dim}), but got split_sizes={sizes}")
    return tuple(ember.split(input, sizes, dim))


def unsafe_split(input, split_size_or_sections, dim=0):
    return tuple(ember.split(input, split_size_or_sections, dim))


def unsafe_chunk(input, chunks, dim=0):
    return tuple(ember.chunk(input, chunks, dim))


def narrow_copy(input, dim, start, length):
    """A contiguous copy of input.narrow(dim, start, length)."""
    return input.narrow(dim, start, length).contiguous().clone()


# ---- strided allocation

def _dense_strides(size, stride):
    """An empty tensor's permutation (outermost first) giving `stride`, or None."""
    dims = sorted(range(len(size)), key=lambda d: (-stride[d], -size[d]))
    expected = 1
    for d in reversed(dims):
        if size[d] > 1 and stride[d] != expected:
            return None
        expected *= max(size[d], 1)
    return dims


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor with the given strides. A permutation of a dense
    layout (stride 0 allowed for broadcast dimensions) is allocated as one,
    where the strides of dimensions of size 0 or 1 may differ from the ones
    asked for; other strides (gaps, overlaps) view a buffer of the extent they
    span through as_strided."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"empty_strided: mismatch in length of strides and shape ({len(size)} vs {len(stride)})")
    if any(s < 0 for s in size):
        raise RuntimeError(f"empty_strided: Trying to create tensor with negative dimension: {list(size)}")
    broadcast = [d for d in range(len(size)) if stride[d] == 0 and size[d] > 1]
    stored = tuple(1 if d in broadcast else size[d] for d in range(len(size)))
    order = _dense_strides(stored, stride)
    kwargs = dict(dtype=dtype or ember.get_default_dtype())
    if device is not None:
        kwargs["device"] = device
    if order is None:
        if any(s < 0 for s in stride):
            raise RuntimeError(f"empty_strided: strides must be non-negative, got {list(stride)}")
        extent = 0 if 0 in size else 1 + sum((n - 1) * st for n, st in zip(size, stride))
        return ember.empty(extent, **kwargs).as_strided(size, stride).requires_grad_(requires_grad)
    base = ember.empty(tuple(stored[d] for d in order), **kwargs)
    inverse = sorted(range(len(order)), key=lambda i: order[i])
    out = base.permute(*inverse) if order else base
    if broadcast:
        out = out.expand(*size)
    return out.requires_grad_(requires_grad)


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                       pin_memory=False):
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)


# ---- conjugation: ember has no lazy conjugate or negative bits, so resolving
# them changes nothing

def _identity(input):
    return input


def _matrix_transpose(what, input):
    if input.dim() < 2:
        raise RuntimeError(f"tensor.{what} is only supported on matrices or batches of matrices. "
                           f"Got {input.dim()}-D tensor.")
    return input.transpose(-2, -1).conj()


def adjoint(input):
    """The conjugate transpose of the last two dims (a view of real tensors; a copy of complex ones)."""
    return _matrix_transpose("adjoint()", input)


def _H(self):
    if self.dim() != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor."
                           + (" For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""))
    return self.t().conj()


# ---- predicates

def is_signed(input):
    return input.dtype not in (ember.uint8, ember.bool)


def _false(input):
    return False


def is_nonzero(input):
    """The truth of a one-element tensor (an error for any other number of elements)."""
    if input.numel() == 0:
        raise RuntimeError("is_nonzero: Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("is_nonzero: Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


FUNCTIONS = dict(broadcast_to=broadcast_to, argwhere=argwhere, ravel=ravel, swapdims=swapdims, take=take, put=put,
                 diagflat=diagflat, diagonal_scatter=diagonal_scatter, index_reduce=index_reduce,
                 combinations=combinations, chain_matmul=chain_matmul, split_with_sizes=split_with_sizes,
                 unsafe_split=unsafe_split, unsafe_chunk=unsafe_chunk, unsafe_split_with_sizes=split_with_sizes,
                 narrow_copy=narrow_copy, empty_strided=empty_strided, resolve_conj=_identity,
                 resolve_neg=_identity, adjoint=adjoint, is_signed=is_signed,
                 is_conj=_false, is_neg=_false, is_nonzero=is_nonzero, is_same_size=is_same_size)

# Tensor methods: the functions above except the ones torch has only at top level.
_TOP_LEVEL_ONLY = ("combinations", "chain_matmul", "empty_strided")
add_methods({name: fn for name, fn in FUNCTIONS.items() if name not in _TOP_LEVEL_ONLY})
add_methods(dict(put_=_put_, index_reduce_=_index_reduce_, new_empty_strided=_new_empty_strided,
                 conj_physical_=lambda self: self.copy_(self.conj()) if self.is_complex() else self,
                 mH=property(lambda self: _matrix_transpose("mH", self),
                             doc="The conjugate transpose of the last two dims."),
                 H=property(_H, doc="The conjugate transpose of a matrix.")))
