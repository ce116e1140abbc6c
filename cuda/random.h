// CUDA random fills (cuda/random.cu) with the signatures of core/cpu/random.h
// and the same use of the Philox stream (element i takes the words the CPU
// kernel gives it), so a seed gives the same numbers on both backends up to
// the rounding of log/sin/cos. `out` is contiguous on a CUDA device; for the
// tensor form of bernoulli, p is a contiguous float64 tensor on that device.
// randperm and multinomial have no CUDA kernel.
#pragma once
#include <cstdint>

#include <ember/core/generator.h>
#include <ember/core/tensor.h>

namespace ember::cuda {

void uniform(Tensor& out, double from, double to, const PhiloxStream& s);
void normal(Tensor& out, double mean, double std, const PhiloxStream& s);
void randint(Tensor& out, int64_t low, uint64_t range, const PhiloxStream& s);
void bernoulli(Tensor& out, const Tensor& p, const PhiloxStream& s);
void bernoulli(Tensor& out, double p, const PhiloxStream& s);
void exponential(Tensor& out, double lambd, const PhiloxStream& s);

}  // namespace ember::cuda
