// The tensor core: dtype promotion, shapes and strides, views, scalar
// tensors, copies and conversions, and the version counter.
#include <cmath>
#include <limits>

#include <ember/core/scalar_fits.h>

#include "util.h"

using namespace ember;
using test::require_throws;
using test::require_values;
using test::values;

TEST_CASE("promote_types follows PyTorch's table", "[tensor][dtype]") {
  using D = DType;
  REQUIRE(promote_types(D::Bool, D::Int64) == D::Int64);
  REQUIRE(promote_types(D::UInt8, D::Int8) == D::Int32);  // int16 in PyTorch; ember has none
  REQUIRE(promote_types(D::Int8, D::Int32) == D::Int32);
  REQUIRE(promote_types(D::Int64, D::Float16) == D::Float16);
  REQUIRE(promote_types(D::Float16, D::BFloat16) == D::Float32);
  REQUIRE(promote_types(D::Int32, D::Float32) == D::Float32);
  REQUIRE(promote_types(D::Float32, D::Float64) == D::Float64);
  // The table is symmetric.
  for (int a = 0; a < kNumDTypes; ++a) {
    for (int b = 0; b < kNumDTypes; ++b) {
      REQUIRE(promote_types(static_cast<D>(a), static_cast<D>(b)) == promote_types(static_cast<D>(b), static_cast<D>(a)));
    }
  }
}

TEST_CASE("result_type ranks dimensioned tensors, 0-d tensors and wrapped numbers", "[tensor][dtype]") {
  const Tensor f32 = zeros({2}, DType::Float32);
  const Tensor i64 = zeros({2}, DType::Int64);
  // A 0-d float64 tensor does not raise a float32 tensor...
  REQUIRE(result_type(f32, zeros({}, DType::Float64)) == DType::Float32);
  // ...but does raise an integer tensor, being of a higher category.
  REQUIRE(result_type(i64, zeros({}, DType::Float64)) == DType::Float64);
  // A Python-like float promotes integers to the default float type.
  REQUIRE(result_type(i64, scalar_tensor(1.5)) == DType::Float32);
  REQUIRE(result_type(i64, scalar_tensor(2)) == DType::Int64);
  REQUIRE(result_type(f32, zeros({2}, DType::Float64)) == DType::Float64);
  REQUIRE(result_type(zeros({2}, DType::Bool), scalar_tensor(true)) == DType::Bool);
}

TEST_CASE("contiguous strides, numel and dtype sizes", "[tensor][shape]") {
  Tensor t = zeros({2, 3, 4});
  REQUIRE(t.strides() == Strides{12, 4, 1});
  REQUIRE(t.numel() == 24);
  REQUIRE(t.dim() == 3);
  REQUIRE(t.is_contiguous());
  REQUIRE(t.element_size() == 4);
  REQUIRE(zeros({2}, DType::Float16).element_size() == 2);
  REQUIRE(zeros({}).numel() == 1);
  REQUIRE(zeros({0, 3}).numel() == 0);
  REQUIRE(t.size(-1) == 4);
  require_throws<IndexError>([&] { t.size(3); }, "dimension out of range");
  require_throws<ValueError>([] { empty({2, -1}); }, "empty: negative dimension");
}

TEST_CASE("views alias storage and have the right geometry", "[tensor][view]") {
  Tensor x = arange(0, 6).to(DType::Float32).view({2, 3});
  Tensor tr = x.transpose(0, 1);
  REQUIRE(tr.shape() == Shape{3, 2});
  REQUIRE(tr.strides() == Strides{1, 3});
  REQUIRE_FALSE(tr.is_contiguous());
  REQUIRE(tr.storage().is_same(x.storage()));
  require_values(tr, {0, 3, 1, 4, 2, 5});

  Tensor ex = values({1, 2, 3}, {3}).expand({2, 3});
  REQUIRE(ex.strides() == Strides{0, 1});
  require_values(ex, {1, 2, 3, 1, 2, 3});

  Tensor p = zeros({2, 3, 4}).permute({2, 0, 1});
  REQUIRE(p.shape() == Shape{4, 2, 3});
  REQUIRE(p.strides() == Strides{1, 12, 4});

  Tensor u = x.unsqueeze(1);
  REQUIRE(u.shape() == Shape{2, 1, 3});
  REQUIRE(u.squeeze().shape() == Shape{2, 3});

  // view() refuses strides it cannot express; reshape() copies instead.
  require_throws<Error>([&] { tr.view({6}); }, "view: size is not compatible");
  Tensor r = tr.reshape({6});
  REQUIRE_FALSE(r.storage().is_same(x.storage()));
  require_values(r, {0, 3, 1, 4, 2, 5});
  REQUIRE(x.reshape({3, 2}).storage().is_same(x.storage()));
  REQUIRE(x.view({-1}).shape() == Shape{6});
  require_throws<Error>([&] { x.view({4, -1}); }, "is invalid for input of size 6");
}

TEST_CASE("broadcast_shapes", "[tensor][shape]") {
  REQUIRE(broadcast_shapes({3, 1}, {4}, "op") == Shape{3, 4});
  REQUIRE(broadcast_shapes({2, 1, 4}, {3, 1}, "op") == Shape{2, 3, 4});
  REQUIRE(broadcast_shapes({}, {2, 3}, "op") == Shape{2, 3});
  REQUIRE(broadcast_shapes({0}, {1}, "op") == Shape{0});
  require_throws<Error>([] { broadcast_shapes({2, 3}, {4}, "myop"); }, "myop: shapes [2, 3] and [4]");
}

TEST_CASE("scalar_tensor makes wrapped 0-d numbers", "[tensor][scalar]") {
  Tensor d = scalar_tensor(2.5);
  REQUIRE(d.dim() == 0);
  REQUIRE(d.dtype() == DType::Float64);
  REQUIRE(d.impl()->wrapped_number);
  REQUIRE(d.item().to_double() == 2.5);
  REQUIRE(scalar_tensor(3).dtype() == DType::Int64);
  REQUIRE(scalar_tensor(true).dtype() == DType::Bool);
  Tensor h = scalar_tensor(1.5, DType::Float16);
  REQUIRE(h.dtype() == DType::Float16);
  REQUIRE(h.item().to_double() == 1.5);
  // x + 1 keeps x's dtype because the 1 is a wrapped number.
  REQUIRE((zeros({2}, DType::Int32).add(scalar_tensor(1))).dtype() == DType::Int32);
}

TEST_CASE("to(dtype), clone, contiguous and copy_", "[tensor][copy]") {
  Tensor x = values({-1.5, 0.25, 2.75}, {3});
  REQUIRE(x.to(DType::Float32).is_same(x));  // no copy when nothing changes
  Tensor c = x.to(DType::Float32, /*copy=*/true);
  REQUIRE_FALSE(c.storage().is_same(x.storage()));
  require_values(x.to(DType::Float64), {-1.5, 0.25, 2.75});
  require_values(x.to(DType::Int32), {-1, 0, 2});  // truncation toward zero
  require_values(x.to(DType::Bool), {1, 1, 1});
  require_values(x.to(DType::Float16).to(DType::Float32), {-1.5, 0.25, 2.75});  // exact in half
  require_values(x.to(DType::BFloat16), {-1.5, 0.25, 2.75});

  Tensor t = arange(0, 6).view({2, 3}).t();
  Tensor cc = t.contiguous();
  REQUIRE(cc.is_contiguous());
  REQUIRE(cc.strides() == Strides{2, 1});
  require_values(cc, {0, 3, 1, 4, 2, 5});
  Tensor already = zeros({2, 2});
  REQUIRE(already.contiguous().is_same(already));

  Tensor dst = zeros({2, 3}, DType::Float64);
  dst.copy_(values({1, 2, 3}, {3}));  // broadcast and cast
  require_values(dst, {1, 2, 3, 1, 2, 3});
  require_throws<Error>([&] { dst.copy_(zeros({4})); }, "copy_");

  Tensor cl = x.clone();
  cl.fill_(7);
  require_values(x, {-1.5, 0.25, 2.75});
  require_values(cl, {7, 7, 7});
}

TEST_CASE("in-place writes bump the version shared by all views", "[tensor][version]") {
  Tensor x = zeros({2, 3});
  Tensor v = x.view({6});
  const uint32_t v0 = x.version();
  x.fill_(1);
  REQUIRE(x.version() == v0 + 1);
  v.add_(ones({6}));
  REQUIRE(x.version() == v0 + 2);  // the view shares the counter
  REQUIRE(v.version() == x.version());
  x.mul_(scalar_tensor(2.0));
  REQUIRE(x.version() == v0 + 3);
  require_values(v, {4, 4, 4, 4, 4, 4});
  // Out-of-place ops leave the version alone.
  Tensor y = x.add(x);
  REQUIRE(x.version() == v0 + 3);
  // A fresh tensor has its own counter.
  REQUIRE(y.version() == 0);
}

TEST_CASE("fills refuse numbers outside an integer dtype's range", "[tensor][scalar]") {
  using D = DType;
  REQUIRE(scalar_fits(Scalar(int64_t{255}), D::UInt8));
  REQUIRE(scalar_fits(Scalar(int64_t{-255}), D::UInt8));  // two's complement, as PyTorch allows
  REQUIRE_FALSE(scalar_fits(Scalar(int64_t{256}), D::UInt8));
  REQUIRE_FALSE(scalar_fits(Scalar(int64_t{-256}), D::UInt8));
  REQUIRE_FALSE(scalar_fits(Scalar(-1.0), D::UInt8));  // a float takes no wrap
  REQUIRE(scalar_fits(Scalar(255.9), D::UInt8));        // truncated first
  REQUIRE(scalar_fits(Scalar(int64_t{-128}), D::Int8));
  REQUIRE_FALSE(scalar_fits(Scalar(int64_t{128}), D::Int8));
  REQUIRE_FALSE(scalar_fits(Scalar(2147483648.0), D::Int32));
  REQUIRE(scalar_fits(Scalar(-2147483648.0), D::Int32));
  REQUIRE(scalar_fits(Scalar(std::numeric_limits<int64_t>::max()), D::Int64));
  REQUIRE_FALSE(scalar_fits(Scalar(9223372036854775808.0), D::Int64));  // 2^63
  REQUIRE(scalar_fits(Scalar(-9223372036854775808.0), D::Int64));
  REQUIRE_FALSE(scalar_fits(Scalar(std::nan("")), D::Int64));
  REQUIRE_FALSE(scalar_fits(Scalar(std::numeric_limits<double>::infinity()), D::Int32));
  REQUIRE(scalar_fits(Scalar(1e300), D::Float16));  // rounds to inf, as PyTorch's fills do
  REQUIRE(scalar_fits(Scalar(std::nan("")), D::Bool));
  require_throws<Error>([] { full({2}, Scalar(int64_t{300}), DType::UInt8); },
                 "full: value 300 cannot be converted to type uint8 without overflow");
  Tensor t = zeros({2}, DType::Int8);
  require_throws<Error>([&] { t.fill_(Scalar(200.0)); }, "fill_: value 200 cannot be converted to type int8");
  require_values(full({2}, Scalar(int64_t{-1}), DType::UInt8), {255, 255});
}
