// Integer formulas shared by the CPU kernels (core/cpu/unary.cpp, binary.cpp)
// and the CUDA ones (cuda/device/unary_ops.cuh, binary_ops.cuh): Python's sign
// rules for floor division and remainder, two's-complement wrap-around where
// C++ would have undefined behaviour. A zero divisor gives 0 here; the CPU
// kernels notice it first and raise.
#pragma once
#include <cstdint>
#include <type_traits>

#include <ember/core/host_device.h>

namespace ember::int_math {

// -a with wrap-around (INT_MIN / -1 would trap).
template <class T>
EMBER_HOST_DEVICE inline T wrapping_neg(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(U(0) - static_cast<U>(a)));
}

template <class T>
EMBER_HOST_DEVICE inline bool is_negative(T v) {
  if constexpr (std::is_signed_v<T>) return v < T(0);
  else return false;
}

template <class T>
EMBER_HOST_DEVICE inline T div_trunc(T a, T b) {
  if (b == T(0)) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return wrapping_neg(a);
  }
  return static_cast<T>(a / b);
}

template <class T>
EMBER_HOST_DEVICE inline T div_floor(T a, T b) {
  if (b == T(0)) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return wrapping_neg(a);
  }
  T q = static_cast<T>(a / b);
  const T r = static_cast<T>(a % b);
  if (r != T(0) && is_negative(r) != is_negative(b)) q = static_cast<T>(q - 1);
  return q;
}

// Python's %: the result takes the sign of b.
template <class T>
EMBER_HOST_DEVICE inline T remainder(T a, T b) {
  if (b == T(0)) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);
  }
  T r = static_cast<T>(a % b);
  if (r != T(0) && is_negative(r) != is_negative(b)) r = static_cast<T>(r + b);
  return r;
}

// base^e by squaring, wrapping on overflow like unsigned math; for negative
// exponents only 1 and -1 have integer reciprocals.
template <class T>
EMBER_HOST_DEVICE inline T pow(T base, int64_t e) {
  if (e < 0) {
    if (base == T(1)) return T(1);
    if constexpr (std::is_signed_v<T>) {
      if (base == T(-1)) return (e & 1) ? static_cast<T>(-1) : T(1);
    }
    return T(0);
  }
  uint64_t result = 1;
  uint64_t b = static_cast<uint64_t>(static_cast<int64_t>(base));
  for (uint64_t n = static_cast<uint64_t>(e); n; n >>= 1) {
    if (n & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

}  // namespace ember::int_math
