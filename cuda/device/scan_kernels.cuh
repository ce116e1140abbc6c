// The running reductions' CUDA kernel (cuda/scan.cu): one thread per column
// of the [outer, length, inner] layout walks it in order with
// core/scan_step.h's step, as the CPU kernel does. In a header so
// tests/cpp/test_scan_emulation.cpp runs it on the CPU.
#pragma once
#include <cstdint>

#include <ember/core/scan_step.h>

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

constexpr int kScanThreads = 256;

template <ScanOp Op, class T>
__global__ void scan_kernel(const T* x, T* out, int64_t* idx, int64_t columns, int64_t length, int64_t inner) {
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < columns;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = (c / inner) * length * inner + c % inner;
    T acc{};
    int64_t at = 0;
    for (int64_t i = 0; i < length; ++i) {
      const int64_t k = base + i * inner;
      scan_step::step<Op>(acc, at, x[k], i);
      out[k] = acc;
      if (idx != nullptr) idx[k] = at;
    }
  }
}

}  // namespace
}  // namespace ember::cuda
