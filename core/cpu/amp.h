// CPU kernel of the amp family (GradScaler's unscale pass).
#pragma once
#include <ember/core/tensor.h>

namespace ember::cpu {

// grad *= inv_scale in place (grad contiguous, any floating dtype; half types
// compute in float32). Returns whether grad held an inf or NaN before scaling.
bool unscale_and_check(const Tensor& grad, double inv_scale);

}  // namespace ember::cpu
