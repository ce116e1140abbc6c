// The shape and index families through the C++ API: views, cat, gather and
// Python-style subscripts with TensorIndex.
#include "catch.h"

#include <ember/ember.h>

using namespace ember;

namespace {
Tensor iota(const Shape& shape) {
  return arange(0, numel_of(shape), 1, DType::Float32).view(shape);
}
double at(const Tensor& t, std::vector<int64_t> idx) {
  std::vector<TensorIndex> items;
  for (int64_t i : idx) items.push_back(TensorIndex::Int(i));
  return getitem(t, items).item().to_double();
}
}  // namespace

TEST_CASE("slice and select are views of the same storage", "[shape]") {
  Tensor x = iota({3, 4});
  Tensor v = x.slice(1, 1, std::nullopt, 2).select(0, 2);  // x[2, 1::2]
  REQUIRE(v.shape() == Shape{2});
  REQUIRE(v.data_ptr() == static_cast<float*>(x.data_ptr()) + 9);
  v.fill_(-1.0);
  REQUIRE(at(x, {2, 3}) == -1.0);
  REQUIRE(x.version() == v.version());
}

TEST_CASE("cat promotes and checks shapes", "[shape]") {
  Tensor a = iota({2, 2});
  Tensor b = ones({2, 1}, DType::Float64);
  Tensor c = cat({a, b}, -1);
  REQUIRE(c.shape() == Shape{2, 3});
  REQUIRE(c.dtype() == DType::Float64);
  REQUIRE(at(c, {1, 2}) == 1.0);
  REQUIRE_THROWS_AS(cat({a, ones({3, 3})}, 1), Error);
}

TEST_CASE("getitem mixes basic and advanced items", "[index]") {
  Tensor x = iota({2, 3, 4});
  Tensor idx = arange(0, 2, 1);  // int64 [0, 1]
  Tensor r = getitem(x, {TensorIndex::Int(1), TensorIndex::Slice(std::nullopt, std::nullopt),
                         TensorIndex::Of(idx), TensorIndex::NewAxis()});
  REQUIRE(r.shape() == Shape{3, 2, 1});
  REQUIRE(at(r, {2, 1, 0}) == 12 + 8 + 1);
  setitem(x, {TensorIndex::Dots(), TensorIndex::Of(idx)}, scalar_tensor(7.0));
  REQUIRE(at(x, {1, 2, 1}) == 7.0);
  REQUIRE(at(x, {1, 2, 2}) == 22.0);
}

TEST_CASE("out-of-range indices raise IndexError (gather: a plain Error, as PyTorch)", "[index]") {
  Tensor x = iota({3, 4});
  REQUIRE_THROWS_AS(gather(x, 1, full({1, 1}, 4, DType::Int64)), Error);
  bool index_error = false;
  try {
    gather(x, 1, full({1, 1}, 4, DType::Int64));
  } catch (const IndexError&) {
    index_error = true;
  } catch (const Error&) {
  }
  REQUIRE_FALSE(index_error);
  REQUIRE_THROWS_AS(index_select(x, 0, full({1}, -1, DType::Int64)), IndexError);
  REQUIRE_THROWS_AS(index(x, {full({1}, 3, DType::Int64)}), IndexError);
  REQUIRE_THROWS_AS(getitem(x, {TensorIndex::Int(-4)}), IndexError);
}
