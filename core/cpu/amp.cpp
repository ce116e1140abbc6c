#include <ember/core/cpu/amp.h>

#include <cmath>

#include <ember/core/dtype.h>
#include <ember/core/half.h>

namespace ember::cpu {
namespace {

template <class T, class C>
bool unscale(T* p, int64_t n, C inv) {
  bool bad = false;
  for (int64_t i = 0; i < n; ++i) {
    const C v = static_cast<C>(p[i]);
    bad |= !std::isfinite(v);  // no early exit: every gradient is unscaled
    p[i] = static_cast<T>(v * inv);
  }
  return bad;
}

}  // namespace

bool unscale_and_check(const Tensor& grad, double inv_scale) {
  const int64_t n = grad.numel();
  const float inv = static_cast<float>(inv_scale);
  switch (grad.dtype()) {
    case DType::Float16: return unscale(grad.data<Half>(), n, inv);
    case DType::BFloat16: return unscale(grad.data<BFloat16>(), n, inv);
    case DType::Float32: return unscale(grad.data<float>(), n, inv);
    case DType::Float64: return unscale(grad.data<double>(), n, inv_scale);
    default: return false;  // the front-end accepts floating grads only
  }
}

}  // namespace ember::cpu
