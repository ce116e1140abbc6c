// CUDA kernel of the amp family (GradScaler's unscale pass). No CUDA headers:
// core/ops/amp.cpp calls it; cuda/no_cuda_amp.cpp stands in for CPU builds.
#pragma once
#include <cstdint>

namespace ember {
class Tensor;
namespace cuda {

// grad *= *inv_scale in place, and *found_inf = 1 where grad holds an inf or
// NaN, all on grad's GPU and its current stream, without a host round trip.
// grad: contiguous float16/bfloat16/float32/float64; found_inf, inv_scale:
// one-element float32 tensors on the same GPU.
void amp_unscale_and_check(const Tensor& grad, const Tensor& found_inf, const Tensor& inv_scale);

// GradScaler's scale update (see ember::amp_update_scale_) as a one-thread
// kernel on the tensors' GPU: no host round trip. scale, found_inf: float32,
// growth_tracker: int32, one element each, all on the same GPU.
void amp_update_scale(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                      double growth_factor, double backoff_factor, int64_t growth_interval);

}  // namespace cuda
}  // namespace ember
