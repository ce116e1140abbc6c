// Linked into CPU-only builds: every CUDA entry point says how to get CUDA.
#include <ember/core/error.h>
#include <ember/cuda/cuda_api.h>

namespace ember::cuda {

namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw Error(str(what, ": ember was built without CUDA support, so tensors can only live on the CPU; "
                        "use device='cpu' (ember.cuda.is_available() tells whether a GPU can be used)"));
}
}  // namespace

bool is_available() { return false; }
int device_count() { return 0; }
std::string unavailable_reason() { return "ember was built without CUDA support"; }
std::shared_ptr<void> allocate(size_t, int) { no_cuda("allocate on cuda"); }
void copy(Tensor&, const Tensor&) { no_cuda("copy to or from cuda"); }

}  // namespace ember::cuda
