// Helpers for the C++ tests: build a tensor from a list of values, read one
// back, and check that a call throws a given ember exception whose message
// contains a given text (the same for Catch2 v2 and v3).
#pragma once
#include <string>
#include <vector>

#include <ember/ember.h>

#include "catch.h"

namespace ember::test {

// A contiguous tensor of `shape` holding `values` (row-major), cast to `dtype`.
inline Tensor values(const std::vector<double>& values, const Shape& shape, DType dtype = DType::Float32) {
  Tensor t = empty(shape, DType::Float64);
  EMBER_CHECK(static_cast<int64_t>(values.size()) == t.numel(), ValueError, "values: ", values.size(),
              " values for shape ", shape_str(shape));
  for (size_t i = 0; i < values.size(); ++i) t.data<double>()[i] = values[i];
  return dtype == DType::Float64 ? t : t.to(dtype);
}

// The elements of `t` in row-major order, as doubles (any layout, any dtype).
inline std::vector<double> to_vector(const Tensor& t) {
  Tensor c = t.detach().to(DType::Float64, /*copy=*/true);
  const double* p = c.data<double>();
  return std::vector<double>(p, p + c.numel());
}

// Elementwise comparison with a relative tolerance.
inline void require_values(const Tensor& t, const std::vector<double>& expected, double eps = 1e-6) {
  const std::vector<double> got = to_vector(t);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(got[i] == Approx(expected[i]).epsilon(eps).margin(eps));
  }
}

// Runs fn and requires it to throw E (or a subclass: Error also catches
// TypeError, ValueError, ...) with `text` in its message.
template <class E, class F>
void require_throws(F&& fn, const std::string& text) {
  bool thrown = false;
  try {
    fn();
  } catch (const E& e) {
    thrown = true;
    INFO("message: " << e.what());
    REQUIRE(std::string(e.what()).find(text) != std::string::npos);
  }
  INFO("expected an exception containing: " << text);
  REQUIRE(thrown);
}

}  // namespace ember::test
