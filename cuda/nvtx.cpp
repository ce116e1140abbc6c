// NVTX3 is header-only: it finds the profiler's injection library at run
// time, so there is nothing to link.
#include <ember/cuda/nvtx.h>

#include <nvtx3/nvToolsExt.h>

namespace ember::cuda {

int nvtx_range_push(const std::string& message) { return nvtxRangePushA(message.c_str()); }

int nvtx_range_pop() { return nvtxRangePop(); }

uint64_t nvtx_range_start(const std::string& message) { return nvtxRangeStartA(message.c_str()); }

void nvtx_range_end(uint64_t id) { nvtxRangeEnd(id); }

void nvtx_mark(const std::string& message) { nvtxMarkA(message.c_str()); }

}  // namespace ember::cuda
