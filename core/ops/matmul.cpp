// The matmul family's front-ends: checks, PyTorch's shape rules (1-D
// operands gain and lose a dim, batch dims broadcast), the kernel call and
// the autograd node. Every op funnels into product(), which expands both
// operands to [batch..., M, K] and [batch..., K, N] views without copying.
#include <ember/core/ops/matmul.h>
#include <ember/core/autocast.h>

#include <ember/autograd/functions/matmul.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/copy.h>
#include <ember/core/cpu/matmul.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/complex.h>
#include <ember/core/ops/shape.h>
#include <ember/core/type_promotion.h>
#include <ember/cuda/cuda_api.h>
#include <ember/cuda/matmul.h>

#include <algorithm>
#include <atomic>
#include <climits>

namespace ember {

namespace functions = autograd::functions;

namespace {

void check_operands(const char* op, const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) EMBER_CHECK(t.defined(), ValueError, op, ": got an undefined tensor");
  const Device dev = common_device(op, ts);
  for (const Tensor& t : ts) {
    EMBER_CHECK(t.dtype() == ts[0].dtype(), Error, op, ": expected both inputs to have the same dtype, but got ",
                dtype_name(ts[0].dtype()), " and ", dtype_name(t.dtype()));
  }
  EMBER_CHECK(ts[0].dtype() != DType::Bool, Error, op, ": not implemented for bool tensors");
  // cuBLAS has no integer GEMM; PyTorch refuses these on CUDA too. Complex
  // products run as real products of the parts.
  const DType dt = ts[0].dtype();
  EMBER_CHECK(dev.is_cpu() || is_floating(dt) || is_complex(dt), NotImplementedError, op, ": not implemented for ",
              dtype_name(dt), " tensors on CUDA");
}

void check_dim(const char* op, const Tensor& t, int64_t want, const char* what) {
  EMBER_CHECK(t.dim() == want, Error, op, ": expected ", what, " to be a ", want, "-D tensor, but got a ", t.dim(),
              "-D tensor of shape ", t.shape_str());
}

[[noreturn]] void not_multipliable(const char* op, const Tensor& a, const Tensor& b) {
  throw Error(str(op, ": shapes ", a.shape_str(), " and ", b.shape_str(), " cannot be multiplied"));
}

// t viewed (no copy, no autograd) with shape `batch + matrix`, its own dims
// aligned to the right and broadcast dims given stride 0.
Tensor expand_to(const Tensor& t, const Shape& batch, const Shape& matrix, const Strides& matrix_strides) {
  Shape shape = batch;
  Strides strides(batch.size(), 0);
  const int64_t own_batch = t.dim() - 2;  // may be negative for 1-D inputs
  for (int64_t i = 0; i < own_batch; ++i) {
    const size_t d = batch.size() - own_batch + i;
    if (t.size(i) == batch[d]) strides[d] = t.stride(i);
  }
  shape.insert(shape.end(), matrix.begin(), matrix.end());
  strides.insert(strides.end(), matrix_strides.begin(), matrix_strides.end());
  return make_view(t, shape, strides, t.storage_offset());
}

// When b (an expanded [batch..., K, N] view) is the same matrix for every
// batch entry and a's ([batch..., M, K]) batch and row dims fold into one
// strided dim with unit column stride, the batch is one tall GEMM: returns the
// row stride of that folded dim, or -1.
int64_t folded_row_stride(const Tensor& a, const Tensor& b) {
  const int64_t nd = a.dim(), K = a.size(nd - 1);
  for (int64_t d = 0; d < nd - 2; ++d) {
    if (b.size(d) != 1 && b.stride(d) != 0) return -1;
  }
  if (a.stride(nd - 1) != 1 && K > 1) return -1;
  int64_t stride = -1, expected = -1;
  for (int64_t d = nd - 2; d >= 0; --d) {
    if (a.size(d) == 1) continue;
    if (stride < 0) {
      stride = a.stride(d);
      expected = stride * a.size(d);
    } else if (a.stride(d) == expected) {
      expected *= a.size(d);
    } else {
      return -1;
    }
  }
  if (stride < 0) stride = std::max<int64_t>(K, 1);
  return stride >= std::max<int64_t>(K, 1) ? stride : -1;  // a stride-0 (expanded) row stays batched
}

// a @ b by matmul's rules, without autograd. `bias` (already cast and
// broadcastable to the result) is added as beta * bias + alpha * a @ b.
Tensor product(const char* op, const Tensor& a, const Tensor& b, const Tensor& bias = Tensor(), double beta = 0,
               double alpha = 1) {
  EMBER_CHECK(a.dim() >= 1 && b.dim() >= 1, Error, op, ": both arguments need at least 1 dimension, but got ",
              a.dim(), "-D and ", b.dim(), "-D tensors");
  // Shapes and strides of the matrix part: a vector a is one row, a vector b one column.
  const bool a_vec = a.dim() == 1, b_vec = b.dim() == 1;
  const int64_t M = a_vec ? 1 : a.size(-2 + a.dim()), K = a.size(a.dim() - 1);
  const int64_t Kb = b_vec ? b.size(0) : b.size(b.dim() - 2), N = b_vec ? 1 : b.size(b.dim() - 1);
  if (K != Kb) not_multipliable(op, a, b);
  const Shape a_batch(a.shape().begin(), a.shape().end() - std::min<int64_t>(a.dim(), 2));
  const Shape b_batch(b.shape().begin(), b.shape().end() - std::min<int64_t>(b.dim(), 2));
  Shape batch;
  try {
    batch = broadcast_shapes(a_batch, b_batch, op);
  } catch (const Error&) {
    throw Error(str(op, ": shapes ", a.shape_str(), " and ", b.shape_str(),
                    " cannot be multiplied (batch dims ", shape_str(a_batch), " and ", shape_str(b_batch),
                    " do not broadcast)"));
  }

  Shape result_shape = batch;
  if (!a_vec) result_shape.push_back(M);
  if (!b_vec) result_shape.push_back(N);
  const DType dtype = a.dtype();
  // The CPU computes half types in float32; cuBLAS reads and writes them
  // directly, accumulating in float32.
  const bool on_cuda = a.device().is_cuda();
  const DType compute = is_half(dtype) && !on_cuda ? DType::Float32 : dtype;
  Tensor out = empty(result_shape, compute, a.device());
  Shape out_full = batch;
  out_full.push_back(M);
  out_full.push_back(N);
  Tensor out_view = make_view(out, out_full, contiguous_strides(out_full), 0);

  autograd::NoGradGuard no_grad;  // the dtype casts are internal
  const Tensor ac = a.to(compute), bc = b.to(compute);
  const Strides a_ms = a_vec ? Strides{K * ac.stride(0), ac.stride(0)} : Strides{ac.stride(-2 + ac.dim()), ac.stride(ac.dim() - 1)};
  const Strides b_ms = b_vec ? Strides{bc.stride(0), 1} : Strides{bc.stride(-2 + bc.dim()), bc.stride(bc.dim() - 1)};
  Tensor av = expand_to(ac, batch, {M, K}, a_ms), bv = expand_to(bc, batch, {K, N}, b_ms);
  // [batch..., M, K] @ one shared [K, N] (a Linear layer's weight) is one
  // [batch * M, K] GEMM when a's rows fold: one large call instead of a
  // batched one. Past 2^31 rows the batched call keeps each GEMM in cuBLAS's
  // and the BLAS's 32-bit sizes.
  if (!batch.empty()) {
    const int64_t rs = folded_row_stride(av, bv), rows = numel_of(batch) * M;
    if (rs >= 0 && rows <= INT_MAX) {
      av = make_view(av, {rows, K}, {rs, 1}, av.storage_offset());
      bv = make_view(bv, {K, N}, b_ms, bv.storage_offset());
      out_view = make_view(out, {rows, N}, {N, 1}, 0);
      batch.clear();
    }
  }
  // addmm / linear on CUDA: a bias vector over the output columns is added by
  // cuBLASLt's epilogue when it can be (else copied into out below).
  if (on_cuda && bias.defined() && beta == 1 && batch.empty() && !a_vec && !b_vec && bias.dim() == 1 &&
      cuda::matmul_bias(out_view, av, bv, bias, alpha)) {
    return out;
  }
  if (bias.defined() && beta != 0) {
    if (on_cuda) {
      cuda::copy(out_view, bias);
    } else {
      cpu::copy(out_view, bias);
    }
  }
  if (on_cuda) {
    cuda::matmul(out_view, av, bv, alpha, bias.defined() ? beta : 0.0);
  } else {
    cpu::matmul(out_view, av, bv, alpha, bias.defined() ? beta : 0.0);
  }
  return compute == dtype ? out : out.to(dtype);
}

Tensor product_with_grad(const char* op, const char* node, const Tensor& a, const Tensor& b) {
  // Complex products are real products of the parts (differentiated through them).
  if (complex_ops::any_complex(a, b)) return complex_ops::matmul(a, b);
  Tensor out = product(op, a, b);
  if (autograd::any_requires_grad({a, b})) {
    autograd::record(node, {a, b}, {out}, {a, b}, functions::matmul_backward());
  }
  return out;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (autocast::Scope ac{"matmul", a, b}; ac) return matmul(ac[0], ac[1]);
  check_operands("matmul", {a, b});
  const char* node = a.dim() == 1 && b.dim() == 1   ? "DotBackward0"
                     : a.dim() == 2 && b.dim() == 1 ? "MvBackward0"
                     : a.dim() == 2 && b.dim() == 2 ? "MmBackward0"
                                                    : "MatmulBackward0";
  return product_with_grad("matmul", node, a, b);
}

Tensor mm(const Tensor& a, const Tensor& b) {
  if (autocast::Scope ac{"mm", a, b}; ac) return mm(ac[0], ac[1]);
  check_operands("mm", {a, b});
  check_dim("mm", a, 2, "self");
  check_dim("mm", b, 2, "mat2");
  return product_with_grad("mm", "MmBackward0", a, b);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (autocast::Scope ac{"bmm", a, b}; ac) return bmm(ac[0], ac[1]);
  check_operands("bmm", {a, b});
  check_dim("bmm", a, 3, "batch1");
  check_dim("bmm", b, 3, "batch2");
  EMBER_CHECK(a.size(0) == b.size(0), Error, "bmm: batch sizes differ: shapes ", a.shape_str(), " and ",
              b.shape_str());
  return product_with_grad("bmm", "BmmBackward0", a, b);
}

Tensor mv(const Tensor& a, const Tensor& v) {
  if (autocast::Scope ac{"mv", a, v}; ac) return mv(ac[0], ac[1]);
  check_operands("mv", {a, v});
  check_dim("mv", a, 2, "self");
  check_dim("mv", v, 1, "vec");
  return product_with_grad("mv", "MvBackward0", a, v);
}

Tensor dot(const Tensor& a, const Tensor& b) {
  if (autocast::Scope ac{"dot", a, b}; ac) return dot(ac[0], ac[1]);
  check_operands("dot", {a, b});
  check_dim("dot", a, 1, "self");
  check_dim("dot", b, 1, "other");
  EMBER_CHECK(a.size(0) == b.size(0), Error, "dot: shapes ", a.shape_str(), " and ", b.shape_str(),
              " cannot be multiplied (inconsistent tensor size)");
  return product_with_grad("dot", "DotBackward0", a, b);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.defined() && b.defined(), ValueError, "outer: got an undefined tensor");
  check_dim("outer", a, 1, "self");
  check_dim("outer", b, 1, "vec2");
  // A broadcast product: promotes like mul, as PyTorch's outer does.
  return mul(a.unsqueeze(1), b.unsqueeze(0));
}

Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta, const Scalar& alpha) {
  if (autocast::Scope ac{"addmm", input, m1, m2}; ac) return addmm(ac[0], ac[1], ac[2], beta, alpha);
  check_operands("addmm", {input, m1, m2});
  check_dim("addmm", m1, 2, "mat1");
  check_dim("addmm", m2, 2, "mat2");
  if (m1.size(1) != m2.size(0)) not_multipliable("addmm", m1, m2);
  const Shape out_shape{m1.size(0), m2.size(1)};
  bool fits = input.dim() <= 2;
  for (int64_t i = 1; fits && i <= input.dim(); ++i) {
    const int64_t s = input.size(input.dim() - i);
    fits = s == 1 || s == out_shape[2 - i];
  }
  EMBER_CHECK(fits, Error,
              "addmm: input of shape ", input.shape_str(), " cannot be broadcast to the product's shape ",
              shape_str(out_shape));
  const double b = beta.to_double(), al = alpha.to_double();
  Tensor bias;
  {
    autograd::NoGradGuard no_grad;
    bias = input.to(is_half(input.dtype()) && input.device().is_cpu() ? DType::Float32 : input.dtype());
  }
  Tensor out = product("addmm", m1, m2, bias, b, al);
  if (autograd::any_requires_grad({input, m1, m2})) {
    autograd::record("AddmmBackward0", {input, m1, m2}, {out}, {m1, m2}, functions::addmm_backward(beta, alpha));
  }
  return out;
}

namespace {
std::atomic<Float32MatmulPrecision> g_float32_matmul_precision{Float32MatmulPrecision::Highest};
}  // namespace

void set_float32_matmul_precision(Float32MatmulPrecision p) { g_float32_matmul_precision.store(p); }
Float32MatmulPrecision float32_matmul_precision() { return g_float32_matmul_precision.load(); }

Tensor Tensor::matmul(const Tensor& other) const { return ember::matmul(*this, other); }
Tensor Tensor::mm(const Tensor& other) const { return ember::mm(*this, other); }
Tensor Tensor::bmm(const Tensor& other) const { return ember::bmm(*this, other); }
Tensor Tensor::outer(const Tensor& other) const { return ember::outer(*this, other); }

}  // namespace ember
