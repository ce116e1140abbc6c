// The CUDA build's side of pinned host memory (cuda/pinned_memory.cpp), for
// the copies that read or write it asynchronously.
#pragma once
#include <cuda_runtime_api.h>

namespace ember::cuda {

// The pinned block holding ptr is used by work just queued on `stream`: it is
// not reused, once freed, before that work has finished. No-op for memory
// ember did not pin.
void record_host_use(const void* ptr, cudaStream_t stream);

}  // namespace ember::cuda
