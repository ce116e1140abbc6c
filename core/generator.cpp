#include <ember/core/generator.h>

#include <cstring>
#include <map>
#include <random>

#include <ember/core/error.h>
#include <ember/core/tensor.h>

namespace ember {

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) { k[0] += kW0; k[1] += kW1; }
    const uint64_t p0 = static_cast<uint64_t>(kM0) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(kM1) * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
  }
  return c;
}

Generator::Generator(Device device) : impl_(std::make_shared<GeneratorImpl>()) { impl_->device = device; }

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->seed = seed;
  impl_->offset = 0;
}

uint64_t Generator::seed() {
  std::random_device rd;
  const uint64_t s = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  manual_seed(s);
  return s;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->seed;
}

uint64_t Generator::offset() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->offset;
}

PhiloxStream Generator::reserve(uint64_t blocks) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  PhiloxStream s{impl_->seed, impl_->offset};
  impl_->offset += blocks;
  return s;
}

Tensor Generator::get_state() const {
  Tensor t = empty({16}, DType::UInt8);
  uint64_t words[2];
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    words[0] = impl_->seed;
    words[1] = impl_->offset;
  }
  uint8_t* p = t.data<uint8_t>();
  for (int w = 0; w < 2; ++w) {
    for (int b = 0; b < 8; ++b) p[w * 8 + b] = static_cast<uint8_t>(words[w] >> (8 * b));
  }
  return t;
}

void Generator::set_state(const Tensor& state) {
  EMBER_CHECK(state.defined() && state.dtype() == DType::UInt8, TypeError,
              "set_state: expected a uint8 tensor (from get_state()), got ",
              state.defined() ? dtype_name(state.dtype()) : "an undefined tensor");
  EMBER_CHECK(state.numel() == 16, Error, "set_state: expected a state of 16 bytes (seed and offset), got ",
              state.numel(), " bytes");
  Tensor c = state.device().is_cpu() ? state.contiguous() : state.cpu().contiguous();
  const uint8_t* p = c.data<uint8_t>();
  uint64_t words[2] = {0, 0};
  for (int w = 0; w < 2; ++w) {
    for (int b = 0; b < 8; ++b) words[w] |= static_cast<uint64_t>(p[w * 8 + b]) << (8 * b);
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->seed = words[0];
  impl_->offset = words[1];
}

namespace {
std::mutex g_defaults_mutex;
// The seed of the last manual_seed(), for default generators created later.
uint64_t g_global_seed = kDefaultSeed;
// Keyed by (type, index); the map's nodes never move, so references stay valid.
std::map<std::pair<int, int>, Generator>& defaults() {
  static auto* m = new std::map<std::pair<int, int>, Generator>();
  return *m;
}
}  // namespace

Generator& default_generator(Device device) {
  std::lock_guard<std::mutex> lock(g_defaults_mutex);
  const auto key = std::make_pair(static_cast<int>(device.type), device.index);
  auto it = defaults().find(key);
  if (it == defaults().end()) {
    it = defaults().emplace(key, Generator(device)).first;
    it->second.manual_seed(g_global_seed);
  }
  return it->second;
}

Generator& manual_seed(uint64_t seed) {
  Generator& cpu = default_generator(kCPU);
  cpu.manual_seed(seed);
  std::lock_guard<std::mutex> lock(g_defaults_mutex);
  g_global_seed = seed;
  for (auto& kv : defaults()) kv.second.manual_seed(seed);
  return cpu;
}

}  // namespace ember
