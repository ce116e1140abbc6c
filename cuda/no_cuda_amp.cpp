// CPU builds: the amp family's CUDA kernel is absent (no tensor can be on a GPU).
#include <ember/core/error.h>
#include <ember/cuda/amp.h>

namespace ember::cuda {

void amp_unscale_and_check(const Tensor&, const Tensor&, const Tensor&) {
  throw Error("_amp_foreach_non_finite_check_and_unscale_: ember was built without CUDA support");
}

void amp_update_scale(const Tensor&, const Tensor&, const Tensor&, double, double, int64_t) {
  throw Error("_amp_update_scale_: ember was built without CUDA support");
}

}  // namespace ember::cuda
