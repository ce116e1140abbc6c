#include <ember/core/cpu/factory.h>

#include <ember/core/cpu/loops.h>

namespace ember::cpu {

void fill(Tensor& t, const Scalar& value) {
  dispatch(t.dtype(), "fill_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.to<T>();
    TensorIterator iter({t});
    map<T>(iter, [v]() { return v; });
  });
}

void arange(Tensor& t, double start, double step) {
  dispatch(t.dtype(), "arange", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(start + step * static_cast<double>(i));
  });
}

void linspace(Tensor& t, double start, double end, double step) {
  dispatch(t.dtype(), "linspace", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    const int64_t n = t.numel();
    const int64_t half = n / 2;
    for (int64_t i = 0; i < n; ++i) {
      const double v = i < half ? start + step * static_cast<double>(i)
                                : end - step * static_cast<double>(n - 1 - i);
      p[i] = static_cast<T>(v);
    }
  });
}

}  // namespace ember::cpu
