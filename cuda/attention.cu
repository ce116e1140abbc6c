// Fused scaled dot product attention (FlashAttention-2's scheme) on tensor
// cores through nvcuda::wmma (16x16x16 fragments, float16/bfloat16 inputs,
// float32 accumulators; sm_80+).
//
// Forward: one block of 4 warps per (n, tile of 64 query rows); each warp owns
// 16 query rows. Tiles of 64 keys and values are staged in shared memory; per
// tile a warp computes its scores S = Q K^T, updates the running row max and
// sum (float32, base-2 exponentials) and adds P V into its output rows, which
// its lanes keep in registers (lanes 2r and 2r+1 own row r, half the columns
// each: wmma's fragment layout is opaque, so rescaling happens outside
// fragments, through a per-warp float scratch). The output is written once,
// with the row's logsumexp for the backward. Causal tiles entirely above the
// diagonal are never visited.
//
// Backward: a pass computes delta = rowsum(dO * O); then one block per
// (n, tile of 64 keys), each warp owning 16 keys, walks the query tiles:
// recomputes S^T = K Q^T and P^T = exp(S^T * scale - lse), adds P^T dO into dV
// and dS^T Q into dK (fragments, in registers), where dS = P * (dO V^T - delta),
// and adds scale * dS K into a float32 dQ buffer with atomics.
//
// Inputs are read where they are (cuda/attention.h's FlashOperand): each
// block finds its slice's rows from a (batch, head, row) stride triple, so
// views such as q, k, v split from one projection and transposed to
// [B, H, T, D] cost no copy; staging through shared memory hides the strided
// rows from the tensor-core loads. The output and dK, dV are written the same
// way (the front-end lays them out like q, k and v, as PyTorch does).
//
// The head dimension E is padded with zeros to D = 32, 64 or 128 in shared
// memory (zero columns add nothing to Q K^T; padded output columns are not
// written); rows past L or S are zero-filled and masked out of P.
//
// The kernels are in cuda/device/flash_attention.cuh; this file launches them.
#include <ember/cuda/attention.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/flash_attention.cuh>
#include <ember/cuda/device/flash_backward_mma.cuh>
#include <ember/cuda/device/flash_forward_mma.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

using namespace flash;

int padded_head_dim(int64_t E) { return E <= 32 ? 32 : E <= 64 ? 64 : 128; }

// The front-end guarantees these; a violation is a bug there, not a user error.
void check_buffer(const Tensor& t, const char* what, int64_t numel, DType dtype) {
  EMBER_CHECK(t.is_contiguous() && reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0 && t.numel() == numel &&
                  t.dtype() == dtype,
              Error, "scaled_dot_product_attention: the fused kernel needs ", what, " contiguous, 16-byte aligned, ",
              numel, " elements of ", dtype_name(dtype), ", got ", t.shape_str(), " ", dtype_name(t.dtype()),
              " (internal error)");
}

// An input or output of N slices of [rows, E] elements, each row contiguous and 16-byte aligned.
void check_operand(const FlashOperand& op, const char* what, int64_t N, int64_t rows, int64_t E, DType dtype) {
  const Tensor& t = op.tensor;
  EMBER_CHECK(t.dim() >= 2 && t.size(-2) == rows && t.size(-1) == E && t.numel() == N * rows * E &&
                  t.dtype() == dtype,
              Error, "scaled_dot_product_attention: the fused kernel got ", what, " ", t.shape_str(), " ",
              dtype_name(t.dtype()), " for ", N, " slices of [", rows, ", ", E, "] ", dtype_name(dtype),
              " (internal error)");
  const int64_t bytes = static_cast<int64_t>(t.element_size());
  bool aligned = reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
  for (int64_t stride : {op.batch_stride, op.head_stride, op.row_stride}) aligned = aligned && stride * bytes % 16 == 0;
  EMBER_CHECK(t.stride(-1) == 1 && aligned, Error, "scaled_dot_product_attention: the fused kernel needs ", what,
              "'s rows contiguous and 16-byte aligned (internal error)");
}

RowStrides row_strides(const FlashOperand& op) { return {op.batch_stride, op.head_stride, op.row_stride}; }

template <class T>
const T* input_ptr(const FlashOperand& op) {
  return static_cast<const T*>(op.tensor.data_ptr());
}

template <class T>
T* output_ptr(const FlashOperand& op) {
  return static_cast<T*>(op.tensor.data_ptr());
}

int64_t grid_size(int64_t n, int64_t tiles) {
  EMBER_CHECK(tiles > 0 && n <= INT_MAX / tiles, Error, "scaled_dot_product_attention: ", n, " heads x ", tiles,
              " tiles exceed the CUDA grid limit");
  return n * tiles;
}

// The kernels: the register-resident mma.sync ones (the backward for head
// sizes up to 64), or with EMBER_FLASH_KERNELS=wmma the first (wmma) ones,
// kept to compare them on a GPU (bench/attention.py times both; read per call
// so that one process can switch).
bool wmma_requested() {
  const char* which = std::getenv("EMBER_FLASH_KERNELS");
  return which != nullptr && std::strcmp(which, "wmma") == 0;
}

template <class T, int D>
void launch_forward(const FlashOperand& out, Tensor& lse, const FlashOperand& q, const FlashOperand& k,
                    const FlashOperand& v, int64_t heads, double scale, bool causal, cudaStream_t stream) {
  const int64_t N = lse.size(0), L = lse.size(1), S = k.tensor.size(-2);
  const int E = static_cast<int>(q.tensor.size(-1));
  const int64_t tiles = (L + kBlockM - 1) / kBlockM;
  const bool wmma = wmma_requested();
  auto kernel = wmma ? flash_forward_kernel<T, D> : flash_forward_mma_kernel<T, D>;
  const int smem = wmma ? forward_smem_bytes(D, sizeof(T)) : forward_mma_smem_bytes(D, sizeof(T));
  EMBER_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kernel<<<static_cast<unsigned>(grid_size(N, tiles)), kThreads, smem, stream>>>(
      output_ptr<T>(out), row_strides(out), static_cast<float*>(lse.data_ptr()), input_ptr<T>(q), row_strides(q),
      input_ptr<T>(k), row_strides(k), input_ptr<T>(v), row_strides(v), heads, L, S, E,
      static_cast<float>(scale) * kLog2e, causal, tiles);
  EMBER_CUDA_KERNEL_CHECK();
}

template <class T, int D>
void launch_backward(Tensor& gq_acc, const FlashOperand& gk, const FlashOperand& gv, Tensor& delta,
                     const FlashOperand& gout,
                     const FlashOperand& q, const FlashOperand& k, const FlashOperand& v, const FlashOperand& out,
                     const Tensor& lse, int64_t heads, double scale, bool causal, cudaStream_t stream) {
  const int64_t N = gq_acc.size(0), L = gq_acc.size(1), S = k.tensor.size(-2);
  const int E = static_cast<int>(gq_acc.size(2));
  const int64_t rows = N * L;
  constexpr int kRowsPerBlock = 8;  // warps of the delta kernel
  EMBER_CHECK((rows + kRowsPerBlock - 1) / kRowsPerBlock <= INT_MAX, Error,
              "scaled_dot_product_attention: too many rows for the CUDA grid");
  flash_delta_kernel<T><<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock), kRowsPerBlock * 32, 0,
                          stream>>>(static_cast<float*>(delta.data_ptr()), input_ptr<T>(gout), row_strides(gout),
                                    input_ptr<T>(out), row_strides(out), heads, L, rows, E);
  EMBER_CUDA_KERNEL_CHECK();

  const int64_t tiles = (S + kBlockN - 1) / kBlockN;
  const bool wmma = D > 64 || wmma_requested();
  auto kernel = flash_backward_kernel<T, D>;
  if constexpr (D <= 64) {
    if (!wmma) kernel = flash_backward_mma_kernel<T, D>;
  }
  const int smem = wmma ? backward_smem_bytes(D, sizeof(T)) : backward_mma_smem_bytes(D, sizeof(T));
  EMBER_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kernel<<<static_cast<unsigned>(grid_size(N, tiles)), kThreads, smem, stream>>>(
      static_cast<float*>(gq_acc.data_ptr()), output_ptr<T>(gk), row_strides(gk), output_ptr<T>(gv), row_strides(gv),
      input_ptr<T>(q), row_strides(q), input_ptr<T>(k), row_strides(k), input_ptr<T>(v), row_strides(v),
      input_ptr<T>(gout), row_strides(gout), static_cast<const float*>(lse.data_ptr()),
      static_cast<const float*>(delta.data_ptr()), heads, L, S, E, static_cast<float>(scale),
      static_cast<float>(scale) * kLog2e, causal, tiles);
  EMBER_CUDA_KERNEL_CHECK();
}

// Calls f(T, D) with the device element type and padded head dimension.
template <class F>
void dispatch(DType dtype, int64_t E, F&& f) {
  EMBER_CHECK(E > 0 && E % 8 == 0 && E <= 128, Error, "scaled_dot_product_attention: the fused kernel takes head "
              "sizes that are multiples of 8 up to 128, got ", E);
  const int D = padded_head_dim(E);
  auto with_type = [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (D == 32) f(TypeTag<T>{}, std::integral_constant<int, 32>{});
    else if (D == 64) f(TypeTag<T>{}, std::integral_constant<int, 64>{});
    else f(TypeTag<T>{}, std::integral_constant<int, 128>{});
  };
  if (dtype == DType::Float16) with_type(TypeTag<__half>{});
  else if (dtype == DType::BFloat16) with_type(TypeTag<__nv_bfloat16>{});
  else throw Error(str("scaled_dot_product_attention: the fused kernel takes float16 or bfloat16, got ",
                       dtype_name(dtype)));
}

}  // namespace

bool flash_attention_supported(int index, int64_t head_dim) {
  if (head_dim <= 0 || head_dim % 8 != 0 || head_dim > 128) return false;
  const DeviceContext& ctx = Registry::get().device(index);
  if (ctx.props.major < 8) return false;
  const int D = padded_head_dim(head_dim);
  // Either kernel set may run (EMBER_FLASH_KERNELS): the most any of them asks for.
  const int need = std::max({forward_smem_bytes(D, 2), backward_smem_bytes(D, 2), forward_mma_smem_bytes(D, 2),
                             D <= 64 ? backward_mma_smem_bytes(D, 2) : 0});
  return ctx.props.sharedMemPerBlockOptin >= static_cast<size_t>(need);
}

void flash_attention_forward(const FlashOperand& out, Tensor& lse, const FlashOperand& q, const FlashOperand& k,
                             const FlashOperand& v, int64_t heads, double scale, bool causal) {
  EMBER_CHECK(heads > 0 && lse.dim() == 2 && lse.size(0) % heads == 0, Error,
              "scaled_dot_product_attention: the fused kernel got ", heads, " heads for a logsumexp ", lse.shape_str(),
              " (internal error)");
  const int64_t N = lse.size(0), L = lse.size(1), E = q.tensor.size(-1), S = k.tensor.size(-2);
  const DType dtype = q.tensor.dtype();
  check_buffer(lse, "lse", N * L, DType::Float32);
  check_operand(q, "q", N, L, E, dtype);
  check_operand(k, "k", N, S, E, dtype);
  check_operand(v, "v", N, S, E, dtype);
  check_operand(out, "out", N, L, E, dtype);
  const int index = q.tensor.device().index;
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  dispatch(dtype, E, [&](auto tag, auto d) {
    launch_forward<typename decltype(tag)::type, decltype(d)::value>(out, lse, q, k, v, heads, scale, causal,
                                                                    stream);
  });
}

void flash_attention_backward(Tensor& gq_acc, const FlashOperand& gk, const FlashOperand& gv, Tensor& delta,
                              const FlashOperand& gout, const FlashOperand& q, const FlashOperand& k,
                              const FlashOperand& v, const FlashOperand& out, const Tensor& lse, int64_t heads,
                              double scale, bool causal) {
  EMBER_CHECK(heads > 0 && gq_acc.dim() == 3 && gq_acc.size(0) % heads == 0, Error,
              "scaled_dot_product_attention: the fused backward got ", heads, " heads for a gradient ",
              gq_acc.shape_str(), " (internal error)");
  const int64_t N = gq_acc.size(0), L = gq_acc.size(1), E = gq_acc.size(2), S = k.tensor.size(-2);
  const DType dtype = q.tensor.dtype();
  check_buffer(gq_acc, "the query gradient buffer", N * L * E, DType::Float32);
  check_buffer(delta, "delta", N * L, DType::Float32);
  check_buffer(lse, "lse", N * L, DType::Float32);
  check_operand(gout, "grad_out", N, L, E, dtype);
  check_operand(q, "q", N, L, E, dtype);
  check_operand(k, "k", N, S, E, dtype);
  check_operand(v, "v", N, S, E, dtype);
  check_operand(out, "out", N, L, E, dtype);
  check_operand(gk, "the key gradient", N, S, E, dtype);
  check_operand(gv, "the value gradient", N, S, E, dtype);
  const int index = q.tensor.device().index;
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  dispatch(dtype, E, [&](auto tag, auto d) {
    launch_backward<typename decltype(tag)::type, decltype(d)::value>(gq_acc, gk, gv, delta, gout, q, k, v, out,
                                                                     lse, heads, scale, causal, stream);
  });
}

}  // namespace ember::cuda
