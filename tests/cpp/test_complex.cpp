// Complex tensors through the C++ API: parts views, arithmetic, printing,
// and fft_c2c with its gradient.
#include <algorithm>
#include <cmath>
#include <complex>

#include "catch.h"

#include <ember/ember.h>

using namespace ember;

namespace {
Tensor values(std::initializer_list<double> v, DType dtype) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, DType::Float64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return t.to(dtype);
}

std::complex<double> at(const Tensor& z, int64_t i) {
  const Tensor c = z.to(DType::Complex128).contiguous();
  return static_cast<const std::complex<double>*>(c.data_ptr())[i];
}
}  // namespace

TEST_CASE("complex: parts, arithmetic and promotion", "[complex]") {
  const Tensor re = values({1.0, -2.0}, DType::Float32), im = values({0.5, 3.0}, DType::Float32);
  const Tensor z = complex(re, im);
  CHECK(z.dtype() == DType::Complex64);
  CHECK(view_as_real(z).shape() == Shape{2, 2});
  const Tensor w = mul(z, z);
  CHECK(std::abs(at(w, 1) - std::complex<double>(-2.0, 3.0) * std::complex<double>(-2.0, 3.0)) < 1e-5);
  CHECK(std::abs(abs(z).data<float>()[0] - std::hypot(1.0, 0.5)) < 1e-6);
  CHECK(add(z, values({1.0, 1.0}, DType::Float64)).dtype() == DType::Complex128);
  CHECK(z.str() == "tensor([ 1.+0.5000j, -2.+3.0000j])");  // as torch prints it
  CHECK_THROWS_AS(relu(z), NotImplementedError);
  CHECK_THROWS_AS(imag(re), Error);
}

TEST_CASE("complex: fft_c2c round trip and its gradient", "[complex]") {
  const Tensor z = complex(values({1.0, 2.0, 0.0, -1.0}, DType::Float64), values({0.0, 1.0, 0.5, 0.0}, DType::Float64));
  const Tensor spectrum = fft_c2c(z, {0}, /*forward=*/true, 1.0);
  CHECK(std::abs(at(spectrum, 0) - std::complex<double>(2.0, 1.5)) < 1e-12);  // the sum
  const Tensor back = fft_c2c(spectrum, {0}, /*forward=*/false, 0.25);
  for (int64_t i = 0; i < 4; ++i) CHECK(std::abs(at(back, i) - at(z, i)) < 1e-12);
  // L = Re(sum(F z)) = Re(F^H 1) . z, so dL/dz = F^H 1 = (4, 0, 0, 0).
  Tensor leaf = z.detach().requires_grad_(true);
  sum(real(fft_c2c(leaf, {0}, true, 1.0))).backward();
  CHECK(std::abs(at(leaf.grad(), 0) - std::complex<double>(4.0, 0.0)) < 1e-12);
  CHECK(std::abs(at(leaf.grad(), 2)) < 1e-12);
}
