// Linked into CPU-only builds: the CUDA sort says that ember was built without
// CUDA (front-ends only call it for CUDA tensors, which such a build cannot
// create).
#include <ember/core/error.h>
#include <ember/cuda/sort.h>

namespace ember::cuda {

void sort(Tensor&, Tensor&, const Tensor&, int64_t, int64_t, bool) {
  throw Error("sort: ember was built without CUDA support; rebuild it on a machine with the CUDA toolkit");
}

}  // namespace ember::cuda
