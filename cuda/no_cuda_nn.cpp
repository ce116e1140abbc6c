// Linked into CPU-only builds: the nn-side CUDA kernels (matmul, ...) say that
// ember was built without CUDA. The front-ends only call them for CUDA
// tensors, which such a build cannot create, so this is a safety net.
#include <ember/core/error.h>
#include <ember/cuda/matmul.h>

namespace ember::cuda {

namespace {
[[noreturn]] void no_cuda_nn(const char* op) {
  throw Error(str(op, ": ember was built without CUDA support; rebuild it on a machine with the CUDA toolkit"));
}
}  // namespace

void matmul(const Tensor&, const Tensor&, const Tensor&, double, double) { no_cuda_nn("matmul"); }

}  // namespace ember::cuda
