// GradScaler's kernels (cuda/amp.cu launches them): unscale a gradient by
// the inverse scale read from device memory, raising found_inf there (every
// writer writes 1, so the race is benign), and update the scale and growth
// tracker as torch.amp does. Device code only, in a header so that
// tests/cpp/test_amp_emulation.cpp runs the same source on the CPU
// (tests/cpp/cuda_emulation.h).
#pragma once
#include <cstdint>

#ifndef EMBER_CUDA_EMULATION  // tests/cpp/cuda_emulation.h stands in for these
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

__device__ inline float load(const __half* p) { return __half2float(*p); }
__device__ inline float load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ inline float load(const float* p) { return *p; }
__device__ inline double load(const double* p) { return *p; }
__device__ inline void store(__half* p, float v) { *p = __float2half(v); }
__device__ inline void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }
__device__ inline void store(float* p, float v) { *p = v; }
__device__ inline void store(double* p, double v) { *p = v; }

template <class T, class C>
__global__ void unscale_kernel(T* data, int64_t n, float* found_inf, const float* inv_scale) {
  const C inv = static_cast<C>(*inv_scale);
  bool bad = false;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const C v = load(data + i);
    bad |= !isfinite(v);
    store(data + i, v * inv);
  }
  if (bad) *found_inf = 1.0f;
}

// One thread: the scale and tracker after a step (found_inf: backoff, reset;
// growth_interval clean steps: grow when the result is finite, reset).
__global__ void update_scale_kernel(float* scale, int* growth_tracker, const float* found_inf, double growth_factor,
                                    double backoff_factor, int64_t growth_interval) {
  if (*found_inf != 0.0f) {
    *scale = static_cast<float>(*scale * backoff_factor);
    *growth_tracker = 0;
    return;
  }
  const int64_t successful = *growth_tracker + 1;
  if (successful == growth_interval) {
    const float grown = static_cast<float>(*scale * growth_factor);
    if (isfinite(grown)) *scale = grown;
    *growth_tracker = 0;
  } else {
    *growth_tracker = static_cast<int>(successful);
  }
}

}  // namespace
}  // namespace ember::cuda
