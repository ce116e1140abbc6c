// The formulas of the extra math functions' CUDA kernels
// (cuda/device/unary_math_ops.cuh) run on the CPU, float and double, against
// ember's CPU kernels (core/cpu/unary_math.cpp): each op must map to the same
// function (a CUDA name mixed up, asinf for asinhf, say, shows here), special
// values included (NaN, infinities, signed zeros, poles, out-of-domain).
#include <cmath>
#include <vector>

#include <ember/core/cpu/unary_math.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"
#include "cuda_emulation.h"

#include <ember/cuda/device/unary_math_ops.cuh>

namespace {

using namespace emu_test;
using ember::MathOp;
using ember::MathOp2;

const std::vector<double> kPoints = {0.0, -0.0, 0.3, -0.3, 0.999, -0.999, 1.0, -1.0, 1.5, -2.5, -3.0, 2.0, 7.25,
                                     -7.25, 30.0, 1e-6, 100.0, INFINITY, -INFINITY, NAN};

template <class T>
void check_unary(MathOp op, const char* name) {
  const DType dtype = sizeof(T) == 4 ? DType::Float32 : DType::Float64;
  const Tensor in = tensor_of(kPoints, {static_cast<int64_t>(kPoints.size())}, dtype);
  Tensor want = ember::empty(in.shape(), dtype);
  ember::cpu::unary_math(op, want, in);
  std::vector<double> got;
  const T* x = ptr<T>(in);
  ember::cuda::math_ops::visit_unary_math<T>(op, [&](auto f) {
    for (int64_t i = 0; i < in.numel(); ++i) got.push_back(static_cast<double>(f(x[i])));
  });
  // libm and CUDA's math library agree to a few ulps, not bit for bit.
  require_close(got, values_of(want), sizeof(T) == 4 ? 4e-6 : 1e-13, 1e-30, name);
}

template <class T>
void check_binary(MathOp2 op, const char* name, double float_rtol = 4e-6, double float_atol = 1e-30) {
  const DType dtype = sizeof(T) == 4 ? DType::Float32 : DType::Float64;
  std::vector<double> av, bv;
  for (double a : kPoints) {
    for (double b : kPoints) {
      av.push_back(a);
      bv.push_back(b);
    }
  }
  const Shape shape = {static_cast<int64_t>(av.size())};
  const Tensor a = tensor_of(av, shape, dtype), b = tensor_of(bv, shape, dtype);
  Tensor want = ember::empty(shape, dtype);
  ember::cpu::binary_math(op, want, a, b);
  std::vector<double> got;
  ember::cuda::math_ops::visit_binary_math<T>(op, [&](auto f) {
    for (int64_t i = 0; i < a.numel(); ++i) got.push_back(static_cast<double>(f(ptr<T>(a)[i], ptr<T>(b)[i])));
  });
  require_close(got, values_of(want), sizeof(T) == 4 ? float_rtol : 1e-13, sizeof(T) == 4 ? float_atol : 1e-30, name);
}

}  // namespace

TEST_CASE("unary math formulas of the CUDA kernels match the CPU kernels", "[emulation][unary_math]") {
  const std::pair<MathOp, const char*> ops[] = {
      {MathOp::Log2, "log2"},   {MathOp::Log10, "log10"},   {MathOp::Exp2, "exp2"},   {MathOp::Sinh, "sinh"},
      {MathOp::Cosh, "cosh"},   {MathOp::Tan, "tan"},       {MathOp::Asin, "asin"},   {MathOp::Acos, "acos"},
      {MathOp::Atan, "atan"},   {MathOp::Asinh, "asinh"},   {MathOp::Acosh, "acosh"}, {MathOp::Atanh, "atanh"},
      {MathOp::Trunc, "trunc"}, {MathOp::Frac, "frac"},     {MathOp::Erfc, "erfc"},   {MathOp::Lgamma, "lgamma"},
      {MathOp::Digamma, "digamma"}, {MathOp::Trigamma, "trigamma"}, {MathOp::Erfinv, "erfinv"},
  };
  for (const auto& [op, name] : ops) {
    check_unary<float>(op, name);
    check_unary<double>(op, name);
  }
}

TEST_CASE("binary math formulas of the CUDA kernels match the CPU kernels", "[emulation][unary_math]") {
  const std::pair<MathOp2, const char*> ops[] = {
      {MathOp2::Atan2, "atan2"},       {MathOp2::Hypot, "hypot"},           {MathOp2::Fmod, "fmod"},
      {MathOp2::Copysign, "copysign"}, {MathOp2::LogAddExp, "logaddexp"},   {MathOp2::LogAddExp2, "logaddexp2"},
      {MathOp2::Xlogy, "xlogy"},
  };
  for (const auto& [op, name] : ops) {
    check_binary<float>(op, name);
    check_binary<double>(op, name);
  }
  // The fused gradients g * f'(x) in float32: the CPU's erf is accurate to 1.5e-7 absolute and its tanh
  // to 4 ulp (fast_math.h); g (up to 100 here) scales the former, and 1 - t^2 near saturation (x = -3)
  // and cdf + x pdf cancel, which amplifies both: looser bounds than the plain formulas'.
  const std::pair<MathOp2, const char*> gradients[] = {
      {MathOp2::GeluBackward, "gelu'"}, {MathOp2::GeluTanhBackward, "gelu tanh'"}, {MathOp2::SiluBackward, "silu'"},
      {MathOp2::TanhBackward, "tanh'"},  {MathOp2::SigmoidBackward, "sigmoid'"},
  };
  for (const auto& [op, name] : gradients) {
    check_binary<float>(op, name, 1e-4, 1e-5);
    check_binary<double>(op, name);
  }
}
