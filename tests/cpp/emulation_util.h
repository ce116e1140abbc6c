// Helpers for the kernel emulation tests (tests/cpp/test_*_emulation.cpp):
// random inputs as CPU tensors whose buffers the emulated kernels read, and
// comparisons that treat NaN as equal to NaN and infinities exactly.
// Include after the ember headers and before tests/cpp/cuda_emulation.h.
#pragma once
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <ember/core/tensor.h>

#include "catch.h"

namespace emu_test {

using ember::DType;
using ember::Shape;
using ember::Tensor;

// t's data as the kernels take it (nullptr for an undefined tensor).
template <class T>
T* ptr(const Tensor& t) {
  return t.defined() ? static_cast<T*>(t.data_ptr()) : nullptr;
}

// A contiguous CPU tensor holding `v` rounded to `dtype`.
inline Tensor tensor_of(const std::vector<double>& v, const Shape& shape, DType dtype) {
  Tensor t = ember::empty(shape, DType::Float64);
  REQUIRE(static_cast<size_t>(t.numel()) == v.size());
  if (!v.empty()) std::memcpy(t.data_ptr(), v.data(), v.size() * sizeof(double));
  return dtype == DType::Float64 ? t : t.to(dtype);
}

// A CPU tensor of `dtype` whose every element is NaN: an element a kernel
// never writes fails the comparison.
inline Tensor nan_tensor(const Shape& shape, DType dtype) {
  Tensor t = ember::empty(shape, DType::Float64);
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = NAN;
  return dtype == DType::Float64 ? t : t.to(dtype);
}

inline std::vector<double> values_of(const Tensor& t) {
  const Tensor c = t.to(DType::Float64, /*copy=*/true).contiguous();
  const double* p = c.data<double>();
  return std::vector<double>(p, p + c.numel());
}

inline std::vector<double> normal_values(size_t n, double scale, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<double> v(n);
  for (double& x : v) x = normal(rng);
  return v;
}

// |got - want| <= atol + rtol * |want| elementwise; NaN matches NaN, an
// infinity matches the same infinity.
inline void require_close(const std::vector<double>& got, const std::vector<double>& want, double rtol, double atol,
                          const char* what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    bool ok;
    if (std::isnan(w) || std::isnan(g)) ok = std::isnan(g) && std::isnan(w);
    else if (std::isinf(w) || std::isinf(g)) ok = g == w;
    else ok = std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (!ok) {  // one assertion per mismatch only: the loop stays fast
      INFO(what << "[" << i << "]: got " << g << ", want " << w);
      REQUIRE(ok);
    }
  }
}

}  // namespace emu_test
