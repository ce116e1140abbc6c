// The matmul family on the GPU: every product is one cuBLAS call,
// cublasGemmEx for a single matrix product, cublasGemmStridedBatchedEx when
// each operand's batch dims collapse into a single stride (the usual case,
// broadcast operands included), otherwise cublasGemmBatchedEx over a device
// array of matrix pointers.
//
// cuBLAS is column-major: ember's row-major out [M, N] is, to cuBLAS, the
// column-major N x M matrix out^T = b^T a^T, so b is cuBLAS's first operand
// and a its second. A row-major matrix with strides (rs, cs) is, transposed,
// a column-major matrix with ld = rs when cs == 1 (op N), or the transpose
// of a column-major matrix with ld = cs when rs == 1 (op T). Any other layout
// is first copied to contiguous memory.
//
// addmm / linear with a bias vector over the output columns go through
// cublasLtMatmul instead, whose BIAS epilogue adds the bias as the product is
// written (matmul_bias; the column-major D's rows are ember's columns).
#include <ember/cuda/matmul.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <ember/core/error.h>
#include <ember/core/ops/matmul.h>
#include <ember/cuda/context.h>
#include <ember/cuda/cuda_api.h>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

// How cuBLAS sees one operand: the transpose of ember's row-major matrix.
struct Operand {
  Tensor t;                    // the tensor actually read (a contiguous copy when needed)
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 1;
  bool ok = false;
};

// rows x cols row-major matrix with strides (rs, cs) -> cuBLAS layout of its transpose.
Operand layout_of(const Tensor& t, int64_t rows, int64_t cols) {
  int64_t rs = t.stride(t.dim() - 2), cs = t.stride(t.dim() - 1);
  if (cols == 1) cs = 1;                            // a lone column: its stride is never used
  if (rows == 1) rs = cs == 1 ? std::max<int64_t>(cols, 1) : 1;  // likewise a lone row
  Operand o;
  o.t = t;
  if (cs == 1 && rs >= std::max<int64_t>(cols, 1)) {
    o.op = CUBLAS_OP_N;
    o.ld = rs;
    o.ok = true;
  } else if (rs == 1 && cs >= std::max<int64_t>(rows, 1)) {
    o.op = CUBLAS_OP_T;
    o.ld = cs;
    o.ok = true;
  }
  return o;
}

// The single stride that walks t's batch dims (the dims before the last two)
// in row-major order, or false when they do not collapse into one.
bool batch_stride(const Tensor& t, int64_t& stride) {
  const int64_t nb = t.dim() - 2;
  stride = 0;
  bool first = true;
  int64_t expect = 0;
  for (int64_t i = nb - 1; i >= 0; --i) {
    if (t.size(i) == 1) continue;
    if (first) {
      stride = t.stride(i);
      first = false;
    } else if (t.stride(i) != expect) {
      return false;
    }
    expect = t.stride(i) * t.size(i);
  }
  return true;
}

Tensor contiguous_copy(const Tensor& t) {
  Tensor c = empty(t.shape(), t.dtype(), t.device());
  copy(c, t);
  return c;
}

cudaDataType_t data_type(DType d) {
  switch (d) {
    case DType::Float32: return CUDA_R_32F;
    case DType::Float64: return CUDA_R_64F;
    case DType::Float16: return CUDA_R_16F;
    case DType::BFloat16: return CUDA_R_16BF;
    default: throw NotImplementedError(str("matmul: not implemented for ", dtype_name(d), " tensors on CUDA"));
  }
}

cublasComputeType_t compute_type(DType d) {
  if (d == DType::Float64) return CUBLAS_COMPUTE_64F;
  if (d == DType::Float32 && float32_matmul_precision() != Float32MatmulPrecision::Highest) {
    // "high" and "medium" both mean TF32 here, as in PyTorch's cuBLAS path.
    return CUBLAS_COMPUTE_32F_FAST_TF32;
  }
  return CUBLAS_COMPUTE_32F;  // float32, and float16/bfloat16 accumulated in float32
}

int to_int(int64_t v, const char* what) {
  EMBER_CHECK(v <= std::numeric_limits<int>::max(), Error, "matmul: ", what, " of ", v,
              " exceeds cuBLAS's 32-bit limit on CUDA");
  return static_cast<int>(v);
}

// ---- cuBLASLt (the bias epilogue)

cublasLtHandle_t cublaslt_handle(int index) {
  DeviceContext& ctx = Registry::get().device(index);
  std::lock_guard<std::mutex> lock(ctx.mutex);
  if (!ctx.cublaslt) {
    DeviceGuard guard(ctx.index);
    cublasLtHandle_t h = nullptr;
    EMBER_CUBLAS_CHECK(cublasLtCreate(&h));
    ctx.cublaslt = h;
  }
  return static_cast<cublasLtHandle_t>(ctx.cublaslt);
}

// The largest power of two (up to 256) dividing p's address: cuBLASLt's
// algorithms assume 256-byte aligned operands unless told otherwise.
uint32_t alignment_of(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a != 0) a /= 2;
  return a;
}

// The descriptors of one cublasLtMatmul call, destroyed with it.
struct LtCall {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, out = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  LtCall() = default;
  LtCall(const LtCall&) = delete;
  LtCall& operator=(const LtCall&) = delete;
  ~LtCall() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (out) cublasLtMatrixLayoutDestroy(out);
    if (second) cublasLtMatrixLayoutDestroy(second);
    if (first) cublasLtMatrixLayoutDestroy(first);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

template <class V>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const V& v) {
  EMBER_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof(v)));
}

template <class V>
void set_pref(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, const V& v) {
  EMBER_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(p, attr, &v, sizeof(v)));
}

// The most workspace offered to cuBLASLt (taken from the caching allocator):
// what cuBLAS recommends, 32 MiB on Hopper and newer, 4 MiB before.
uint64_t lt_workspace(int index) {
  return uint64_t{Registry::get().device(index).props.major >= 9 ? 32u : 4u} << 20;
}

// out [M, N] = alpha * a [M, K] @ b [K, N] (+ bias [N] over the columns when
// defined) as one cublasLtMatmul; false when the shapes, dtypes or strides do
// not fit it or its heuristic finds no algorithm (the caller falls back).
bool lt_product(const Tensor& out, const Tensor& a_in, const Tensor& b_in, const Tensor& bias, double alpha);

// Whether single half-precision products go through cuBLASLt rather than
// cublasGemmEx: EMBER_MATMUL_BACKEND=cublaslt (read per call, so that
// bench/matmul.py times both in one process; cublasGemmEx is the default).
bool prefer_lt() {
  const char* v = std::getenv("EMBER_MATMUL_BACKEND");
  return v != nullptr && std::string(v) == "cublaslt";
}

}  // namespace

void matmul(const Tensor& out, const Tensor& a_in, const Tensor& b_in, double alpha, double beta) {
  const DType dtype = out.dtype();
  const cudaDataType_t dt = data_type(dtype);
  const int64_t nd = out.dim();
  const int64_t M = out.size(nd - 2), N = out.size(nd - 1), K = a_in.size(nd - 1);
  int64_t batch = 1;
  for (int64_t i = 0; i < nd - 2; ++i) batch *= out.size(i);
  if (batch == 0 || M == 0 || N == 0) return;
  const int index = out.device().index;
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  if (K == 0 && beta == 0) {  // an empty sum: zeros (out is contiguous)
    EMBER_CUDA_CHECK(cudaMemsetAsync(out.data_ptr(), 0, out.numel() * itemsize(dtype), stream));
    return;
  }

  const float alpha_f = static_cast<float>(alpha), beta_f = static_cast<float>(beta);
  const void* alpha_p = dtype == DType::Float64 ? static_cast<const void*>(&alpha) : &alpha_f;
  const void* beta_p = dtype == DType::Float64 ? static_cast<const void*>(&beta) : &beta_f;
  if (K == 0) {  // an empty sum: out = beta * out, without asking GEMM about zero-sized operands
    const cudaDataType_t scale_type = dtype == DType::Float64 ? CUDA_R_64F : CUDA_R_32F;
    EMBER_CUBLAS_CHECK(cublasScalEx(cublas_handle(index), to_int(out.numel(), "an output size"), beta_p, scale_type,
                                    out.data_ptr(), dt, 1, scale_type));
    return;
  }

  Operand A = layout_of(a_in, M, K), B = layout_of(b_in, K, N);
  if (!A.ok) A = layout_of(contiguous_copy(a_in), M, K);
  if (!B.ok) B = layout_of(contiguous_copy(b_in), K, N);

  const cublasComputeType_t ct = compute_type(dtype);
  const int m = to_int(N, "a dimension"), n = to_int(M, "a dimension"), k = to_int(K, "a dimension");
  const int lda = to_int(B.ld, "a leading dimension"), ldb = to_int(A.ld, "a leading dimension");
  const int ldc = m;
  const int count = to_int(batch, "the batch size");
  cublasHandle_t handle = cublas_handle(index);

  const bool lt_candidate = count == 1 && beta == 0 && is_half(dtype) && nd == 2 && prefer_lt();
  if (lt_candidate && lt_product(out, A.t, B.t, Tensor(), alpha)) return;  // operands already laid out
  if (count == 1) {  // a single product: plain GEMM, whose heuristics PyTorch's mm also gets
    EMBER_CUBLAS_CHECK(cublasGemmEx(handle, B.op, A.op, m, n, k, alpha_p, B.t.data_ptr(), dt, lda, A.t.data_ptr(), dt,
                                    ldb, beta_p, out.data_ptr(), dt, ldc, ct, CUBLAS_GEMM_DEFAULT));
    return;
  }
  int64_t sa = 0, sb = 0;
  if (batch_stride(A.t, sa) && batch_stride(B.t, sb)) {
    EMBER_CUBLAS_CHECK(cublasGemmStridedBatchedEx(handle, B.op, A.op, m, n, k, alpha_p, B.t.data_ptr(), dt, lda, sb,
                                                  A.t.data_ptr(), dt, ldb, sa, beta_p, out.data_ptr(), dt, ldc, M * N,
                                                  count, ct, CUBLAS_GEMM_DEFAULT));
    return;
  }

  // Batch dims that broadcast in a pattern no single stride describes: one
  // pointer per matrix, copied to the device (the host array may go once
  // cudaMemcpyAsync returns: pageable copies are staged before it does).
  const size_t es = itemsize(dtype);
  std::vector<const void*> ptrs(3 * static_cast<size_t>(batch));
  std::vector<int64_t> idx(nd - 2, 0);
  for (int64_t bi = 0; bi < batch; ++bi) {
    int64_t oa = 0, ob = 0;
    for (int64_t d = 0; d < nd - 2; ++d) {
      oa += idx[d] * A.t.stride(d);
      ob += idx[d] * B.t.stride(d);
    }
    ptrs[bi] = static_cast<const char*>(B.t.data_ptr()) + ob * es;
    ptrs[batch + bi] = static_cast<const char*>(A.t.data_ptr()) + oa * es;
    ptrs[2 * batch + bi] = static_cast<const char*>(out.data_ptr()) + bi * M * N * es;
    for (int64_t d = nd - 3; d >= 0; --d) {  // next batch index, row-major
      if (++idx[d] < out.size(d)) break;
      idx[d] = 0;
    }
  }
  const size_t bytes = ptrs.size() * sizeof(void*);
  std::shared_ptr<void> dev_ptrs = allocate(bytes, index);
  EMBER_CUDA_CHECK(cudaMemcpyAsync(dev_ptrs.get(), ptrs.data(), bytes, cudaMemcpyHostToDevice, stream));
  auto** arr = static_cast<void**>(dev_ptrs.get());
  EMBER_CUBLAS_CHECK(cublasGemmBatchedEx(handle, B.op, A.op, m, n, k, alpha_p, arr, dt, lda, arr + batch, dt, ldb,
                                         beta_p, arr + 2 * batch, dt, ldc, count, ct, CUBLAS_GEMM_DEFAULT));
}

bool matmul_bias(const Tensor& out, const Tensor& a_in, const Tensor& b_in, const Tensor& bias, double alpha) {
  return bias.defined() && lt_product(out, a_in, b_in, bias, alpha);
}

namespace {

bool lt_product(const Tensor& out, const Tensor& a_in, const Tensor& b_in, const Tensor& bias, double alpha) {
  const DType dtype = out.dtype();
  if (dtype != DType::Float32 && dtype != DType::Float16 && dtype != DType::BFloat16) return false;
  if (out.dim() != 2 || a_in.dim() != 2 || b_in.dim() != 2 || (bias.defined() && bias.dim() != 1)) return false;
  if (a_in.dtype() != dtype || b_in.dtype() != dtype || !out.is_contiguous()) return false;
  const int64_t M = out.size(0), N = out.size(1), K = a_in.size(1);
  if (M == 0 || N == 0 || K == 0 || a_in.size(0) != M || b_in.size(0) != K || b_in.size(1) != N) return false;
  if (bias.defined()) {
    if (bias.dtype() != dtype || bias.size(0) != N || (N > 1 && bias.stride(0) != 1)) return false;
    if (reinterpret_cast<uintptr_t>(bias.data_ptr()) % 16 != 0) return false;
  }
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (M > kMax || N > kMax || K > kMax) return false;

  Operand A = layout_of(a_in, M, K), B = layout_of(b_in, K, N);
  if (!A.ok) A = layout_of(contiguous_copy(a_in), M, K);
  if (!B.ok) B = layout_of(contiguous_copy(b_in), K, N);
  if (A.ld > kMax || B.ld > kMax) return false;

  const int index = out.device().index;
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  cublasLtHandle_t lt = cublaslt_handle(index);
  const cudaDataType_t dt = data_type(dtype);
  // As in matmul(): cuBLAS's first operand is b (m = N rows of the
  // column-major result), its second a (n = M columns).
  const uint64_t m = static_cast<uint64_t>(N), n = static_cast<uint64_t>(M), k = static_cast<uint64_t>(K);
  LtCall call;
  EMBER_CUBLAS_CHECK(cublasLtMatmulDescCreate(&call.desc, compute_type(dtype), CUDA_R_32F));
  set_desc(call.desc, CUBLASLT_MATMUL_DESC_TRANSA, B.op);
  set_desc(call.desc, CUBLASLT_MATMUL_DESC_TRANSB, A.op);
  if (bias.defined()) {
    set_desc(call.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
    set_desc(call.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias.data_ptr());
  }
  // A layout describes the matrix as stored, before its transpose.
  const bool b_n = B.op == CUBLAS_OP_N, a_n = A.op == CUBLAS_OP_N;
  EMBER_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&call.first, dt, b_n ? m : k, b_n ? k : m, B.ld));
  EMBER_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&call.second, dt, a_n ? k : n, a_n ? n : k, A.ld));
  EMBER_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&call.out, dt, m, n, static_cast<int64_t>(m)));
  EMBER_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&call.pref));
  set_pref(call.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, lt_workspace(index));
  set_pref(call.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment_of(B.t.data_ptr()));
  set_pref(call.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment_of(A.t.data_ptr()));
  set_pref(call.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment_of(out.data_ptr()));
  set_pref(call.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment_of(out.data_ptr()));

  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, call.desc, call.first, call.second, call.out,
                                                           call.out, call.pref, 1, &best, &found);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0 || best.state != CUBLAS_STATUS_SUCCESS) return false;

  const std::shared_ptr<void> ws = best.workspaceSize ? allocate(best.workspaceSize, index) : nullptr;
  const float alpha_f = static_cast<float>(alpha), beta_f = 0.0f;  // D = alpha * op(A) op(B) (+ bias)
  EMBER_CUBLAS_CHECK(cublasLtMatmul(lt, call.desc, &alpha_f, B.t.data_ptr(), call.first, A.t.data_ptr(), call.second,
                                    &beta_f, out.data_ptr(), call.out, out.data_ptr(), call.out, &best.algo, ws.get(),
                                    best.workspaceSize, stream));
  return true;
}

}  // namespace

}  // namespace ember::cuda
