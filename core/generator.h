// Random number generators: a counter-based Philox4x32-10 stream per
// generator, described completely by (seed, offset). Every draw reserves a
// range of 128-bit counter blocks and derives each element's numbers from its
// index, so the result does not depend on threads, and a CUDA kernel given the
// same (seed, offset) can reproduce the same stream.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>

#include <ember/core/device.h>

namespace ember {

class Tensor;

// PyTorch's default seed, so a fresh process starts from a fixed state.
constexpr uint64_t kDefaultSeed = 67280421310721ULL;

// One Philox4x32-10 evaluation: 4 random words for counter `ctr` under `key`.
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key);

// A reserved piece of a generator's stream: block j of it is
// philox4x32({lo(offset + j), hi(offset + j), 0, 0}, {lo(seed), hi(seed)}).
struct PhiloxStream {
  uint64_t seed = 0;
  uint64_t offset = 0;  // first counter block of this draw
  std::array<uint32_t, 4> block(uint64_t j) const {
    const uint64_t c = offset + j;
    return philox4x32({static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0u, 0u},
                      {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
  }
};

struct GeneratorImpl {
  std::mutex mutex;
  uint64_t seed = kDefaultSeed;
  uint64_t offset = 0;  // next unused counter block
  Device device;
};

// A handle: copies share one state, like torch.Generator objects.
class Generator {
 public:
  explicit Generator(Device device = kCPU);
  Device device() const { return impl_->device; }
  // Restarts the stream at `seed`.
  void manual_seed(uint64_t seed);
  // Seeds from std::random_device and returns the seed.
  uint64_t seed();
  uint64_t initial_seed() const;
  uint64_t offset() const;
  // Reserves `blocks` counter blocks and returns the stream covering them.
  PhiloxStream reserve(uint64_t blocks);
  // The state as a uint8 tensor of 16 bytes: seed then offset, little-endian.
  Tensor get_state() const;
  void set_state(const Tensor& state);
  bool is_same(const Generator& o) const { return impl_ == o.impl_; }

 private:
  std::shared_ptr<GeneratorImpl> impl_;
};

// The process-wide generator of a device (one per CUDA ordinal).
Generator& default_generator(Device device = kCPU);
// Seeds every default generator (torch.manual_seed); returns the CPU one.
Generator& manual_seed(uint64_t seed);

}  // namespace ember
