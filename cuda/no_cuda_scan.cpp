// Linked into CPU-only builds: the running reductions' CUDA kernel. Nothing
// reaches it (no tensor can live on a GPU there).
#include <ember/core/error.h>
#include <ember/cuda/scan.h>

namespace ember::cuda {

void scan(ScanOp, Tensor&, Tensor&, const Tensor&, int64_t, int64_t, int64_t) {
  throw Error("scan: ember was built without CUDA support, so tensors can only live on the CPU");
}

}  // namespace ember::cuda
