// Integer formulas shared by the CPU kernels (core/cpu/*.cpp) and the CUDA
// ones (cuda/device/unary_ops.cuh, binary_ops.cuh): Python's sign rules for
// floor division and remainder, two's-complement wrap-around where C++ would
// have undefined behaviour. A zero divisor gives 0 here; the CPU kernels
// notice it first and raise.
#pragma once
#include <cstdint>
#include <type_traits>

#include <ember/core/host_device.h>

namespace ember::int_math {

// ---- wrap-around arithmetic
// Signed overflow (INT_MAX + 1, -INT_MIN, INT_MIN * -1) is undefined in C++
// and CUDA: the compiler may assume it never happens, for instance when it
// vectorizes a loop. numpy and PyTorch wrap around (two's complement), so
// integers compute in wrap_t<T>, the unsigned type T promotes to, whose
// overflow is defined modulo 2^N; the low bits, cast back to T, are that
// result (C++20 defines the cast; GCC, Clang and nvcc always did). Promoting
// first keeps int8/uint8 out of signed int arithmetic as well. For floating
// types and bool, wrap_t<T> is T and the helpers are the plain operators.
template <class T, bool = std::is_integral_v<T> && !std::is_same_v<T, bool>>
struct Wrapping {
  using type = T;
};
template <class T>
struct Wrapping<T, true> {
  using type = std::make_unsigned_t<decltype(+T())>;
};
template <class T>
using wrap_t = typename Wrapping<T>::type;

template <class T>
EMBER_HOST_DEVICE inline T wrapping_add(T a, T b) {
  return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b));
}

template <class T>
EMBER_HOST_DEVICE inline T wrapping_sub(T a, T b) {
  return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b));
}

template <class T>
EMBER_HOST_DEVICE inline T wrapping_mul(T a, T b) {
  return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b));
}

// -a (for floats a true negation: -(+0) is -0); -INT_MIN is INT_MIN.
template <class T>
EMBER_HOST_DEVICE inline T wrapping_neg(T a) {
  return static_cast<T>(-static_cast<wrap_t<T>>(a));
}

// |a| of an integer; |INT_MIN| is INT_MIN, as in numpy and PyTorch.
template <class T>
EMBER_HOST_DEVICE inline T wrapping_abs(T a) {
  static_assert(std::is_integral_v<T>, "wrapping_abs: floats take fabs (which makes -0 +0)");
  if constexpr (std::is_signed_v<T>) return a < T(0) ? wrapping_neg(a) : a;
  else return a;
}

// ceil(a / b) for a >= 0, b > 0, without the a + b - 1 that overflows for a
// huge b (a stride or step of 2**63 - 1).
template <class T>
EMBER_HOST_DEVICE inline T ceil_div(T a, T b) {
  return static_cast<T>(a / b + (a % b != 0 ? 1 : 0));
}

// ---- division with Python's sign rules

template <class T>
EMBER_HOST_DEVICE inline bool is_negative(T v) {
  if constexpr (std::is_signed_v<T>) return v < T(0);
  else return false;
}

// a / -1 is -a: INT_MIN / -1 overflows (and traps on x86).
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
