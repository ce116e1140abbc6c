// CPU-only builds: NVTX ships with the CUDA toolkit, which this build lacks.
#include <ember/core/error.h>
#include <ember/cuda/nvtx.h>

namespace ember::cuda {

namespace {
[[noreturn]] void no_nvtx(const char* what) {
  throw Error(str("ember.cuda.nvtx.", what, ": ember was built without CUDA support, so NVTX is not available"));
}
}  // namespace

int nvtx_range_push(const std::string&) { no_nvtx("range_push"); }
int nvtx_range_pop() { no_nvtx("range_pop"); }
uint64_t nvtx_range_start(const std::string&) { no_nvtx("range_start"); }
void nvtx_range_end(uint64_t) { no_nvtx("range_end"); }
void nvtx_mark(const std::string&) { no_nvtx("mark"); }

}  // namespace ember::cuda
