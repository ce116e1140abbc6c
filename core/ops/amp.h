// The two ops behind ember.amp.GradScaler (torch's private ops of the same
// names). They update their tensor arguments in place and run without autograd.
#pragma once
#include <vector>

#include <ember/core/tensor.h>

namespace ember {

// Multiplies every gradient by inv_scale in place and sets found_inf (a
// one-element float32 tensor) to 1 when any gradient holds an inf or NaN;
// found_inf is never reset to 0 here. inv_scale: one-element float32 tensor.
void amp_foreach_non_finite_check_and_unscale_(const std::vector<Tensor>& grads, Tensor& found_inf,
                                               const Tensor& inv_scale);

// GradScaler's dynamic scale: after a step with an inf/NaN (found_inf != 0),
// scale *= backoff_factor and the growth tracker restarts; otherwise the
// tracker counts successful steps and, at growth_interval, scale *=
// growth_factor (kept only when finite) and the tracker restarts. scale:
// one-element float32, growth_tracker: one-element int32. Returns scale.
Tensor& amp_update_scale_(Tensor& scale, Tensor& growth_tracker, const Tensor& found_inf, double growth_factor,
                          double backoff_factor, int64_t growth_interval);

}  // namespace ember
