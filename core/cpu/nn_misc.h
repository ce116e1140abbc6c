// CPU kernels of dropout (core/ops/nn_misc.cpp), the fused native_dropout.
// The draw follows the layout of core/cpu/random.h that bernoulli_ uses:
// element i takes word i of the reserved stream (word w = block(w / 4)[w % 4]),
// and is kept when w_i < threshold, threshold = ceil((1 - p) * 2^32), which is
// the same test as bernoulli's w * 2^-32 < 1 - p. The kept value is
// x * scale computed in C (double for float64, float for the other types),
// the dropped one x * 0. cuda/device/dropout_kernels.cuh does the same, so a
// seed gives the same mask and bits on both backends.
#pragma once
#include <cmath>
#include <cstdint>

#include <ember/core/generator.h>
#include <ember/core/tensor.h>

namespace ember::cpu {

// The keep test's bound: w < threshold keeps (0 drops everything, 2^32 keeps
// everything). (1 - p) * 2^32 is exact in double, and for an integer w,
// w * 2^-32 < q exactly when w < ceil(q * 2^32).
inline uint64_t dropout_threshold(double p) {
  const double keep = 1.0 - p;
  if (!(keep > 0.0)) return 0;
  return static_cast<uint64_t>(std::ceil(keep * 4294967296.0));
}

// out = input * (keep ? scale : 0) and mask = keep, for contiguous input, out
// (input's dtype, floating) and mask (bool) of one numel; out may be input.
void native_dropout(Tensor& out, Tensor& mask, const Tensor& input, uint64_t threshold, double scale,
                    const PhiloxStream& s);
// grad_input = grad * (mask ? scale : 0): grad_input contiguous of grad's
// shape and dtype, mask bool broadcast to it, any strides.
void native_dropout_backward(Tensor& grad_input, const Tensor& grad, const Tensor& mask, double scale);

}  // namespace ember::cpu
