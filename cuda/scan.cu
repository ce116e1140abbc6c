// Running reductions on the GPU: a thread per column (cuda/device/
// scan_kernels.cuh). Simple and exact; a long single column runs on one
// thread (cumsum, in cuda/reduce.cu, has the block-parallel scan).
#include <ember/cuda/scan.h>

#include <algorithm>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/scan_kernels.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

template <ScanOp Op, class T>
void run(Tensor& out, Tensor& indices, const Tensor& x, int64_t columns, int64_t length, int64_t inner) {
  const int64_t blocks = std::min<int64_t>((columns + kScanThreads - 1) / kScanThreads, 65535 * 8);
  int64_t* idx = indices.defined() ? indices.data<int64_t>() : nullptr;
  scan_kernel<Op, T><<<static_cast<unsigned>(std::max<int64_t>(blocks, 1)), kScanThreads, 0, current_cuda_stream()>>>(
      x.data<T>(), out.data<T>(), idx, columns, length, inner);
  EMBER_CUDA_KERNEL_CHECK();
}

template <class T>
void scan_typed(ScanOp op, Tensor& out, Tensor& indices, const Tensor& x, int64_t columns, int64_t length,
                int64_t inner) {
  switch (op) {
    case ScanOp::Prod: return run<ScanOp::Prod, T>(out, indices, x, columns, length, inner);
    case ScanOp::Max: return run<ScanOp::Max, T>(out, indices, x, columns, length, inner);
    case ScanOp::Min: return run<ScanOp::Min, T>(out, indices, x, columns, length, inner);
    case ScanOp::LogSumExp:
      if constexpr (std::is_floating_point_v<T>) return run<ScanOp::LogSumExp, T>(out, indices, x, columns, length, inner);
      else break;
  }
  throw Error("scan: unsupported op for this dtype");
}

}  // namespace

void scan(ScanOp op, Tensor& out, Tensor& indices, const Tensor& x, int64_t outer, int64_t length, int64_t inner) {
  const int64_t columns = outer * inner;
  if (columns == 0 || length == 0) return;
  DeviceGuard guard(x.device().index);
  switch (x.dtype()) {
    case DType::Float32: return scan_typed<float>(op, out, indices, x, columns, length, inner);
    case DType::Float64: return scan_typed<double>(op, out, indices, x, columns, length, inner);
    case DType::Int64: return scan_typed<int64_t>(op, out, indices, x, columns, length, inner);
    case DType::Int32: return scan_typed<int32_t>(op, out, indices, x, columns, length, inner);
    case DType::Int8: return scan_typed<int8_t>(op, out, indices, x, columns, length, inner);
    case DType::UInt8: return scan_typed<uint8_t>(op, out, indices, x, columns, length, inner);
    default: throw Error(str("scan: the CUDA kernel takes float32, float64 or integer inputs, got ",
                             dtype_name(x.dtype())));
  }
}

}  // namespace ember::cuda
