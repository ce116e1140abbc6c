// Front-ends of the amp family: argument checks and the choice of kernel: the
// CPU one, the CUDA one (found_inf and inv_scale on the gradient's GPU), or,
// for any other placement, ordinary ops (mul_, isfinite_mask, amin). The
// scale update runs on the host unless its three tensors share a GPU.
#include <ember/core/ops/amp.h>

#include <cmath>
#include <cstdint>

#include <ember/autograd/grad_mode.h>
#include <ember/core/cpu/amp.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/unary.h>
#include <ember/cuda/amp.h>

namespace ember {
namespace {

void check_one_element(const char* op, const char* what, const Tensor& t, DType dtype) {
  EMBER_CHECK(t.defined(), ValueError, op, ": ", what, " is undefined");
  EMBER_CHECK(t.numel() == 1, Error, op, ": ", what, " must be a one-element tensor, got shape ", t.shape_str());
  EMBER_CHECK(t.dtype() == dtype, Error, op, ": ", what, " must be a ", dtype_name(dtype), " tensor, got ",
              dtype_name(t.dtype()));
}

// found_inf = max(found_inf, any non-finite in grad), on grad's device.
void unscale_generic(const Tensor& grad, Tensor& found_inf, const Tensor& inv_scale) {
  if (grad.numel() == 0) return;
  const Tensor finite = amin(isfinite_mask(grad)).to(DType::Float32);  // 0 when some element is not finite
  const Tensor bad = sub(full({}, 1.0, DType::Float32, grad.device()), finite);
  found_inf.copy_(maximum(found_inf, bad.to(found_inf.device()).reshape(found_inf.shape())));
  Tensor g = grad;
  g.mul_(inv_scale.to(grad.device(), grad.dtype()).reshape({}));
}

}  // namespace

void amp_foreach_non_finite_check_and_unscale_(const std::vector<Tensor>& grads, Tensor& found_inf,
                                               const Tensor& inv_scale) {
  const char* op = "_amp_foreach_non_finite_check_and_unscale_";
  check_one_element(op, "found_inf", found_inf, DType::Float32);
  check_one_element(op, "inv_scale", inv_scale, DType::Float32);
  autograd::NoGradGuard no_grad;
  for (const Tensor& g : grads) {
    EMBER_CHECK(g.defined(), ValueError, op, ": got an undefined gradient");
    EMBER_CHECK(is_floating(g.dtype()), Error, op, ": gradients must be floating point, got ", dtype_name(g.dtype()));
  }
  bool found_on_host = false;
  double inv = 0;
  const bool host_scalars = found_inf.device().is_cpu() && inv_scale.device().is_cpu();
  if (host_scalars) inv = inv_scale.item().to_double();
  for (const Tensor& g : grads) {
    const bool on_cpu = g.device().is_cpu() && host_scalars;
    const bool on_gpu = g.device().is_cuda() && found_inf.device() == g.device() && inv_scale.device() == g.device();
    if (!on_cpu && !on_gpu) {
      unscale_generic(g, found_inf, inv_scale);
      continue;
    }
    // The kernels want contiguous memory: others go through a work copy.
    Tensor work = g.is_contiguous() ? g : g.contiguous();
    if (on_cpu) found_on_host |= cpu::unscale_and_check(work, inv);
    else cuda::amp_unscale_and_check(work, found_inf, inv_scale);
    Tensor dst = g;
    if (work.impl() != g.impl()) dst.copy_(work);
    else g.bump_version();
  }
  if (found_on_host) found_inf.fill_(1.0);
}

Tensor& amp_update_scale_(Tensor& scale, Tensor& growth_tracker, const Tensor& found_inf, double growth_factor,
                          double backoff_factor, int64_t growth_interval) {
  const char* op = "_amp_update_scale_";
  check_one_element(op, "scale", scale, DType::Float32);
  check_one_element(op, "growth_tracker", growth_tracker, DType::Int32);
  check_one_element(op, "found_inf", found_inf, DType::Float32);
  autograd::NoGradGuard no_grad;
  if (scale.device().is_cuda() && growth_tracker.device() == scale.device() && found_inf.device() == scale.device()) {
    cuda::amp_update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval);
    scale.bump_version();
    growth_tracker.bump_version();
    return scale;
  }
  float s = static_cast<float>(scale.item().to_double());
  int64_t tracker = growth_tracker.item().to_int();
  if (found_inf.item().to_double() != 0) {
    s = static_cast<float>(s * backoff_factor);
    tracker = 0;
  } else {
    ++tracker;
    if (tracker == growth_interval) {
      const float grown = static_cast<float>(s * growth_factor);
      if (std::isfinite(grown)) s = grown;
      tracker = 0;
    }
  }
  scale.fill_(static_cast<double>(s));
  growth_tracker.fill_(tracker);
  return scale;
}

}  // namespace ember
