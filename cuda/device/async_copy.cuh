// cp.async (sm_80+): 16-byte copies from global to shared memory that run in
// the background while the thread goes on, grouped by commits and waited
// for by group. Kernels use them to load the next tile while computing on
// the current one. tests/cpp/cuda_emulation.h implements the same calls for
// the host (EMBER_CUDA_EMULATION), landing each copy only at its wait.
#pragma once
#include <cstdint>

namespace ember::cuda::async {

#ifndef EMBER_CUDA_EMULATION

// Copies 16 bytes from src to dst (both 16-byte aligned), or writes 16 zero
// bytes when `valid` is false (src is then not read).
__device__ __forceinline__ void copy16(void* dst, const void* src, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto shared = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared), "l"(src), "r"(valid ? 16 : 0)
               : "memory");
#endif
}

// Closes the group of the copies issued since the last commit.
__device__ __forceinline__ void commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most N of this thread's committed groups are still in
// flight (the newest ones); a __syncthreads then publishes the block's copies.
template <int N>
__device__ __forceinline__ void wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

#else

inline void copy16(void* dst, const void* src, bool valid) { emu::async_copy(dst, src, 16, valid ? 16 : 0); }
inline void commit() { emu::async_commit(); }
template <int N>
void wait() {
  emu::async_wait(N);
}

#endif

}  // namespace ember::cuda::async
