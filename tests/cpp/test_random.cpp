// The random family from C++: Philox known answers, generator state, and
// reproducible draws independent of layout.
#include <ember/ember.h>

#include "catch.h"

using namespace ember;

TEST_CASE("philox4x32-10 matches Random123's known answers", "[random]") {
  const auto a = philox4x32({0, 0, 0, 0}, {0, 0});
  CHECK(a[0] == 0x6627e8d5u);
  CHECK(a[3] == 0x9b00dbd8u);
  const auto b = philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u});
  CHECK(b[0] == 0xd16cfe09u);
  CHECK(b[3] == 0x24126ea1u);
}

TEST_CASE("a generator's state is its seed and offset", "[random]") {
  Generator g;
  g.manual_seed(9);
  CHECK(g.initial_seed() == 9);
  CHECK(g.offset() == 0);
  rand({10}, DType::Float32, kCPU, g);  // 10 words -> 3 blocks
  CHECK(g.offset() == 3);
  Tensor state = g.get_state();
  Tensor x = randn({5}, DType::Float64, kCPU, g);
  g.set_state(state);
  Tensor y = randn({5}, DType::Float64, kCPU, g);
  for (int i = 0; i < 5; ++i) CHECK(x.data<double>()[i] == y.data<double>()[i]);
}

TEST_CASE("random draws are reproducible and in range", "[random]") {
  Generator g;
  g.manual_seed(1);
  Tensor a = randint(-2, 3, {1000}, DType::Int64, kCPU, g);
  g.manual_seed(1);
  Tensor b = randint(-2, 3, {1000}, DType::Int64, kCPU, g);
  for (int i = 0; i < 1000; ++i) {
    CHECK(a.data<int64_t>()[i] == b.data<int64_t>()[i]);
    CHECK(a.data<int64_t>()[i] >= -2);
    CHECK(a.data<int64_t>()[i] < 3);
  }
  CHECK_THROWS_AS(randint(3, 3, {2}), Error);
  Tensor leaf = ones({2});
  leaf.requires_grad_(true);
  CHECK_THROWS_AS(leaf.uniform_(), Error);
}

TEST_CASE("manual_seed reaches default generators created later", "[random]") {
  manual_seed(77);
  CHECK(default_generator(kCPU).initial_seed() == 77);
  CHECK(default_generator(Device(DeviceType::CUDA, 5)).initial_seed() == 77);  // state only, no GPU needed
  manual_seed(78);
  CHECK(default_generator(Device(DeviceType::CUDA, 5)).initial_seed() == 78);
}
