// The matmul family on the GPU: every product is one cuBLAS call,
// cublasGemmStridedBatchedEx when each operand's batch dims collapse into a
// single stride (the usual case, broadcast operands included), otherwise
// cublasGemmBatchedEx over a device array of matrix pointers.
//
// cuBLAS is column-major: ember's row-major out [M, N] is, to cuBLAS, the
// column-major N x M matrix out^T = b^T a^T, so b is cuBLAS's first operand
// and a its second. A row-major matrix with strides (rs, cs) is, transposed,
// a column-major matrix with ld = rs when cs == 1 (op N), or the transpose
// of a column-major matrix with ld = cs when rs == 1 (op T). Any other layout
// is first copied to contiguous memory.
#include <ember/cuda/matmul.h>

#include <algorithm>
#include <limits>
#include <vector>

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

}  // namespace ember::cuda
