// One step of each running reduction of core/cpu/scan.h, shared by the CPU
// kernels and the CUDA ones (core/host_device.h), so both give the same bits.
// Max/Min follow PyTorch: a NaN, once seen, stays with its index; equal
// values move the index to the later element.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include <ember/core/cpu/scan.h>
#include <ember/core/host_device.h>
#include <ember/core/int_math.h>

namespace ember::scan_step {

template <class T>
EMBER_HOST_DEVICE inline bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

// acc and its index after element v at position i (i == 0 starts the run).
template <ScanOp Op, class T>
EMBER_HOST_DEVICE inline void step(T& acc, int64_t& at, T v, int64_t i) {
  if (i == 0) {
    acc = v;
    at = 0;
    return;
  }
  if constexpr (Op == ScanOp::Prod) {
    acc = int_math::wrapping_mul(acc, v);
  } else if constexpr (Op == ScanOp::Max || Op == ScanOp::Min) {
    if (is_nan(acc)) return;
    const bool take = is_nan(v) || (Op == ScanOp::Max ? v >= acc : v <= acc);
    if (take) {
      acc = v;
      at = i;
    }
  } else {  // LogSumExp: log(exp(acc) + exp(v)); equal infinities stay themselves
    const T hi = acc > v ? acc : v, lo = acc > v ? v : acc;
    if (is_nan(acc) || is_nan(v)) acc = acc + v;
    else if (hi == lo && (hi - hi) != (hi - hi)) acc = hi;
    else acc = hi + static_cast<T>(::log1p(::exp(static_cast<double>(lo - hi))));
  }
}

}  // namespace ember::scan_step
