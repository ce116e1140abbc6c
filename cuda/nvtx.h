// NVTX ranges and markers (ember.cuda.nvtx) for Nsight Systems timelines.
// Without a profiler attached they cost a check and do nothing. No CUDA
// headers here; CPU-only builds raise "built without CUDA".
#pragma once
#include <cstdint>
#include <string>

namespace ember::cuda {

// Opens a nested range on this thread; returns its zero-based depth (negative
// when no profiler tracks ranges).
int nvtx_range_push(const std::string& message);
// Closes this thread's innermost range; returns the depth it had.
int nvtx_range_pop();
// A range that may start and end on different threads, by id.
uint64_t nvtx_range_start(const std::string& message);
void nvtx_range_end(uint64_t id);
// An instantaneous marker.
void nvtx_mark(const std::string& message);

}  // namespace ember::cuda
