#include <ember/core/cpu/factory.h>

#include <ember/core/cpu/loops.h>
#include <ember/core/int_math.h>

namespace ember::cpu {

void fill(Tensor& t, const Scalar& value) {
  dispatch(t.dtype(), "fill_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.to<T>();
    if (t.numel() == 1) {  // scalar tensors: skip the iterator
      *t.data<T>() = v;
      return;
    }
    map<T>(TensorIterator({t}), [v]() { return v; });
  });
}

void arange(Tensor& t, double start, double step) {
  dispatch(t.dtype(), "arange", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(start + step * static_cast<double>(i));
  });
}

void arange_int(Tensor& t, int64_t start, int64_t step) {
  dispatch(t.dtype(), "arange", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    // step * i alone may overflow (arange(-2**63, 2**63 - 1, 2**62)) even where
    // start + step * i fits: computed modulo 2^64, the sum is exact all the same.
    for (int64_t i = 0; i < t.numel(); ++i) {
      p[i] = static_cast<T>(int_math::wrapping_add(start, int_math::wrapping_mul(step, i)));
    }
  });
}

void linspace(Tensor& t, double start, double end) {
  dispatch(t.dtype(), "linspace", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using S = std::conditional_t<std::is_same_v<T, double> || std::is_integral_v<T>, double, float>;
    T* p = t.data<T>();
    const int64_t n = t.numel();
    if (n == 0) return;
    // torch converts the bounds to the output type first (integers truncate).
    const auto bound = [](double v) {
      if constexpr (std::is_integral_v<T>) return static_cast<S>(static_cast<T>(v));
      else return static_cast<S>(v);
    };
    const S s = bound(start), e = bound(end);
    const S step = n > 1 ? (e - s) / static_cast<S>(n - 1) : S(0);
    const int64_t half = n / 2;
    for (int64_t i = 0; i < n; ++i) {
      const S v = i < half ? s + step * static_cast<S>(i) : e - step * static_cast<S>(n - 1 - i);
      if constexpr (std::is_same_v<T, bool>) p[i] = v != 0;
      else p[i] = static_cast<T>(v);
    }
    if (n == 1) p[0] = static_cast<T>(s);
  });
}

}  // namespace ember::cpu
