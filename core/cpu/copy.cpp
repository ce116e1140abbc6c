#include <ember/core/cpu/copy.h>

#include <cstring>

#include <ember/core/cpu/loops.h>

namespace ember::cpu {

namespace {
// Half types convert through float; everything else casts directly.
template <class D, class S>
inline D convert(S v) {
  if constexpr (std::is_same_v<D, bool>) {
    if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) return static_cast<float>(v) != 0.0f;
    else return v != S(0);
  } else if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
    return static_cast<D>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
    return D(static_cast<float>(v));
  } else {
    return static_cast<D>(v);
  }
}
}  // namespace

void copy(Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() && dst.shape() == src.shape()) {
    std::memcpy(dst.data_ptr(), src.data_ptr(), dst.numel() * dst.element_size());
    return;
  }
  dispatch(dst.dtype(), "copy_", [&](auto dtag) {
    using D = typename decltype(dtag)::type;
    dispatch(src.dtype(), "copy_", [&](auto stag) {
      using S = typename decltype(stag)::type;
      if (dst.numel() == 1) {  // scalars (casts of Python numbers): skip the iterator
        *dst.data<D>() = convert<D>(*src.data<S>());
        return;
      }
      map<D, S>(TensorIterator({dst, src}), [](S v) { return convert<D>(v); });
    });
  });
}

}  // namespace ember::cpu
