"""More Tensor methods scripts reach for, written with ember ops: bit shifts
(<<, >>, bitwise_left_shift/right_shift), the random fills cauchy_,
log_normal_ and geometric_, sum_to_size, dim_order, nonzero_static, isreal,
containment and reversed(), apply_/map_/map2_ (CPU, one
Python call per element), and the older linalg functions torch still has
(svd, lu, lu_solve, triangular_solve, matrix_exp) on top of ember.linalg."""
import math

import ember
from ember import _C
from ember._tensor_api_extra import _bump_version, _check_leaf, add_methods, inplace
from ember._tensor_api_math import _return_type

Tensor = _C.Tensor


# ---- bit shifts of integer tensors

def _shift_operands(op, input, other):
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{op}(): expected at least one Tensor argument")
    dtype = ember.result_type(input, other)
    if dtype.is_floating_point or dtype == ember.bool:
        raise NotImplementedError(f"{op}: not implemented for {dtype}; it takes integer tensors")
    device = (input if isinstance(input, Tensor) else other).device
    a = input.to(dtype) if isinstance(input, Tensor) else ember.tensor(input, dtype=dtype, device=device)
    b = other.to(dtype) if isinstance(other, Tensor) else ember.tensor(other, dtype=dtype, device=device)
    bits = ember.iinfo(dtype).bits
    # 2**k for every shift k in range, wrapped to the dtype (2**63 is int64's minimum).
    powers = [((1 << k) + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1)) if dtype != ember.uint8 else 1 << k
              for k in range(bits)]
    power = ember.tensor(powers, dtype=dtype, device=device)[b.clamp(0, bits - 1).to(ember.int64)]
    return a, b, bits, power, dtype


def bitwise_left_shift(input, other):
    """input * 2**other, wrapping like the hardware shift (0 for shifts past the width)."""
    a, b, bits, power, dtype = _shift_operands("bitwise_left_shift", input, other)
    return ember.where((b >= bits) | (b < 0), ember.zeros_like(a * power), a * power)


def bitwise_right_shift(input, other):
    """The arithmetic shift: floor(input / 2**other) (-1 or 0 for shifts past the width)."""
    a, b, bits, power, dtype = _shift_operands("bitwise_right_shift", input, other)
    signed = dtype != ember.uint8
    limit = bits - 1 if signed else bits  # 2**(bits-1) is negative in a signed dtype: handle it apart
    past = ember.where(a < 0, ember.full_like(a, -1), ember.zeros_like(a)) if signed else ember.zeros_like(a)
    return ember.where((b >= limit) | (b < 0), past, a // ember.where(b >= limit, ember.ones_like(power), power))


# ---- random fills

def _random_fill(name, self):
    _check_leaf(name, self)
    if not self.is_floating_point():
        raise RuntimeError(f"{name}: expects a floating point tensor, got {self.dtype}")


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fills self with Cauchy(median, sigma) samples: median + sigma tan(pi (u - 1/2))."""
    _random_fill("cauchy_", self)
    with ember.no_grad():
        self.uniform_(generator=generator)
        self.copy_(median + sigma * ember.tan(math.pi * (self - 0.5)))
    return self


def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fills self with exp of Normal(mean, std) samples."""
    _random_fill("log_normal_", self)
    if std <= 0:
        raise RuntimeError(f"log_normal_: expects std > 0.0, but found std={std}")
    with ember.no_grad():
        self.normal_(mean, std, generator=generator)
        self.exp_()
    return self


def _geometric_(self, p, *, generator=None):
    """Fills self with the number of Bernoulli(p) trials up to the first success (>= 1)."""
    _check_leaf("geometric_", self)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_: expects p to be in (0, 1), got p={p}")
    with ember.no_grad():
        u = ember.empty(self.shape, dtype=ember.float64, device=self.device).uniform_(generator=generator)
        trials = ember.ceil(ember.log1p(-u) / math.log1p(-p)).clamp(min=1)
        self.copy_(trials.to(self.dtype))
    return self


# ---- shapes and layouts

def _sum_to_size(self, *size):
    """The sum of self over the dims broadcasting would expand from `size`."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != t and s != 1 for s, t in zip(size, shape[lead:])):
        raise RuntimeError(f"sum_to_size: size {list(size)} is not expandable to size {list(shape)}")
    out = self
    if lead:
        out = out.sum(tuple(range(lead)))
    keep = tuple(i for i, s in enumerate(size) if s == 1 and out.shape[i] != 1)
    if keep:
        out = out.sum(keep, keepdim=True)
    return out


def _resize_(self, *sizes, memory_format=None):
    """Gives self the shape `sizes`, contiguous, keeping its leading elements
    (row-major): a smaller contiguous tensor keeps its memory; a larger one
    gets new memory whose extra elements are uninitialised. A non-contiguous
    tensor gets new memory holding its first elements in row-major order
    (torch reinterprets its raw storage instead). The same shape changes nothing."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    sizes = tuple(int(s) for s in sizes)
    if self.requires_grad:
        raise RuntimeError("resize_: cannot resize variables that require grad")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"resize_: Trying to create tensor with negative dimension: {list(sizes)}")
    if sizes == tuple(self.shape):
        return self
    n = math.prod(sizes)
    old = self.detach()
    if old.is_contiguous() and n <= old.numel():
        self.data = old.reshape(-1)[:n].view(*sizes)
    else:
        new = ember.empty(sizes, dtype=self.dtype, device=self.device)
        keep = min(n, old.numel())
        new.view(-1)[:keep].copy_(old.reshape(-1)[:keep])
        self.data = new
    _bump_version(self)
    return self


def _resize_as_(self, the_template, memory_format=None):
    return _resize_(self, tuple(the_template.shape))


def _dim_order(self):
    """The dims from outermost (largest stride) to innermost."""
    strides = self.stride()
    return tuple(sorted(range(self.dim()), key=lambda d: -strides[d]))


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero(input) cut or padded (with fill_value rows) to exactly `size` rows."""
    found = ember.nonzero(input)
    n = found.shape[0]
    if n >= size:
        return found[:size]
    pad = ember.full((size - n, found.shape[1]), fill_value, dtype=found.dtype, device=found.device)
    return ember.cat([found, pad])


# ---- complex predicates

def isreal(input):
    """True where an element has no imaginary part (everywhere for real dtypes)."""
    if input.is_complex():
        return input.imag == 0
    return ember.ones(input.shape, dtype=ember.bool, device=input.device)


def _contains(self, element):
    if not isinstance(element, (Tensor, int, float, bool)):
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                           f"{type(element).__name__}.")
    return bool((self == element).any())


def _reversed(self):
    return self if self.dim() == 0 else self.flip(0)


# ---- Python callables, elementwise (CPU only, as in torch)

def _check_cpu(name, *tensors):
    for t in tensors:
        if t.device.type != "cpu":
            raise TypeError(f"{name} is only implemented on CPU tensors")


def _apply_(self, callable):
    _check_cpu("apply_", self)
    values = [callable(v) for v in self.reshape(-1).tolist()]
    self.copy_(ember.tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def _map_(self, tensor, callable):
    _check_cpu("map_", self, tensor)
    other = tensor.expand(*self.shape).reshape(-1).tolist()
    values = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), other)]
    self.copy_(ember.tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def _map2_(self, x, y, callable):
    _check_cpu("map2_", self, x, y)
    xs, ys = x.expand(*self.shape).reshape(-1).tolist(), y.expand(*self.shape).reshape(-1).tolist()
    values = [callable(a, b, c) for a, b, c in zip(self.reshape(-1).tolist(), xs, ys)]
    self.copy_(ember.tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


# ---- the older linear-algebra functions, on ember.linalg



_svd_t = _return_type("svd", ("U", "S", "V"))
_triangular_solve_t = _return_type("triangular_solve", ("solution", "cloned_coefficient"))


def svd(input, some=True, compute_uv=True):
    """(U, S, V) with input = U diag(S) V^T (V, not V^T, unlike linalg.svd)."""
    u, s, vh = ember.linalg.svd(input, full_matrices=not some)
    if not compute_uv:
        u, vh = ember.zeros_like(u), ember.zeros_like(vh)
    return _svd_t(u, s, vh.mT)


def lu(A, pivot=True, get_infos=False):
    """(LU, pivots) of linalg.lu_factor, with zero infos when get_infos."""
    if not pivot:
        raise NotImplementedError("lu: pivot=False is not supported (ember's LU always pivots)")
    factors, pivots = ember.linalg.lu_factor(A)
    if get_infos:
        infos = ember.zeros(tuple(A.shape[:-2]), dtype=ember.int32, device=A.device)
        return factors, pivots, infos
    return factors, pivots


def lu_solve(b, LU_data, LU_pivots):
    """The solution x of A x = b, from A's LU factors."""
    return ember.linalg.lu_solve(LU_data, LU_pivots, b)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """(solution of op(A) x = b with A triangular, a copy of A)."""
    coefficient = A.mT if transpose else A
    x = ember.linalg.solve_triangular(coefficient, b, upper=upper != transpose, unitriangular=unitriangular)
    return _triangular_solve_t(x, A.clone())


def matrix_exp(input):
    return ember.linalg.matrix_exp(input)


def _hardshrink(self, lambd=0.5):
    return ember.nn.functional.hardshrink(self, lambd)


def _prelu(self, weight):
    return ember.nn.functional.prelu(self, weight)


FUNCTIONS = dict(bitwise_left_shift=bitwise_left_shift, bitwise_right_shift=bitwise_right_shift,
                 nonzero_static=nonzero_static, isreal=isreal, resize_as_=_resize_as_,
                 svd=svd, lu=lu, lu_solve=lu_solve, triangular_solve=triangular_solve, matrix_exp=matrix_exp)


def install():
    methods = {name: FUNCTIONS[name] for name in ("bitwise_left_shift", "bitwise_right_shift", "isreal",
                                                  "svd", "lu_solve", "triangular_solve", "matrix_exp")}
    left_shift_ = inplace("bitwise_left_shift_", bitwise_left_shift)
    right_shift_ = inplace("bitwise_right_shift_", bitwise_right_shift)
    methods.update(
        lu=lambda self, pivot=True, get_infos=False: lu(self, pivot, get_infos),
        nonzero_static=nonzero_static, bitwise_left_shift_=left_shift_, bitwise_right_shift_=right_shift_,
        __lshift__=bitwise_left_shift, __rshift__=bitwise_right_shift,
        __rlshift__=lambda self, other: bitwise_left_shift(other, self),
        __rrshift__=lambda self, other: bitwise_right_shift(other, self),
        __ilshift__=left_shift_, __irshift__=right_shift_,
        cauchy_=_cauchy_, log_normal_=_log_normal_, geometric_=_geometric_, sum_to_size=_sum_to_size,
        resize_=_resize_, resize_as_=_resize_as_, dim_order=_dim_order,
        __contains__=_contains, __reversed__=_reversed, apply_=_apply_, map_=_map_, map2_=_map2_,
        const_data_ptr=lambda self: self.data_ptr(), hardshrink=_hardshrink, prelu=_prelu,
        ger=Tensor.outer,  # torch's deprecated name
    )
    # ember has only dense, strided, unquantized tensors: scripts that check may go on.
    methods.update({flag: property(lambda self: False)
                    for flag in ("is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_nested")})
    add_methods(methods)
