// The GPU's Philox stream and random fill kernels
// (cuda/device/random_kernels.cuh) run on the CPU through
// tests/cpp/cuda_emulation.h against the CPU generator: the same counter
// blocks for any seed and offset (64-bit counters crossing 2^32), the
// per-element layout (one and two words per element, any launch shape), and
// normal_ (Box-Muller pairs, odd lengths) against cpu::normal.
#include <ember/core/cpu/random.h>
#include <ember/core/generator.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"

#include "cuda_emulation.h"

#include <ember/cuda/device/random_kernels.cuh>

namespace {

using namespace emu_test;
namespace kc = ember::cuda;

}  // namespace

TEST_CASE("Philox block and per-element layout (host emulation) match the CPU stream", "[emulation]") {
  for (uint64_t seed : {uint64_t{0}, uint64_t{42}, uint64_t{0x123456789abcdefull}}) {
    for (uint64_t offset : {uint64_t{0}, uint64_t{7}, uint64_t{0xfffffffeull}}) {  // the counter's low word wraps
      const ember::PhiloxStream s{seed, offset};
      for (uint64_t j = 0; j < 6; ++j) {
        const auto want = s.block(j);
        const kc::Words got = kc::philox_block(seed, offset, j);
        for (int q = 0; q < 4; ++q) REQUIRE(got.w[q] == want[q]);
      }
      // Element i's words through per_element_kernel: word w = block(w / 4)[w % 4].
      for (int words : {1, 2}) {
        const int64_t n = 1001;
        std::vector<uint64_t> out(n, 0);
        launch(2, 64, 0, [&] {  // fewer threads than blocks: grid-stride
          kc::per_element_kernel<uint64_t>(out.data(), n, words, seed, offset, [=](int64_t, const uint32_t* w) {
            return words == 2 ? (uint64_t{w[0]} << 32 | w[1]) : uint64_t{w[0]};
          });
        });
        for (int64_t i = 0; i < n; ++i) {
          const uint64_t w0 = static_cast<uint64_t>(i) * words;
          const uint64_t a = s.block(w0 / 4)[w0 % 4];
          const uint64_t want = words == 2 ? (a << 32 | s.block((w0 + 1) / 4)[(w0 + 1) % 4]) : a;
          if (out[i] != want) {
            INFO("element " << i << " words " << words);
            REQUIRE(out[i] == want);
          }
        }
      }
    }
  }
}

TEST_CASE("normal kernel (host emulation) against cpu::normal", "[emulation]") {
  for (int64_t n : {1, 2, 7, 1000, 1001}) {
    const ember::PhiloxStream s{1234, 99};
    {
      INFO("float32 n " << n);
      Tensor want = nan_tensor({n}, DType::Float32), got = nan_tensor({n}, DType::Float32);
      ember::cpu::normal(want, 0.5, 2.0, s);
      launch(3, 64, 0, [&] { kc::normal_kernel<float>(static_cast<float*>(got.data_ptr()), n, 1, s.seed, s.offset, 0.5, 2.0); });
      require_close(values_of(got), values_of(want), 1e-5, 1e-5, "normal float32");  // device logf/sinf ulps
    }
    {
      INFO("float64 n " << n);
      Tensor want = nan_tensor({n}, DType::Float64), got = nan_tensor({n}, DType::Float64);
      ember::cpu::normal(want, -1.0, 0.5, s);
      launch(3, 64, 0, [&] { kc::normal_kernel<double>(static_cast<double*>(got.data_ptr()), n, 2, s.seed, s.offset, -1.0, 0.5); });
      require_close(values_of(got), values_of(want), 1e-12, 1e-12, "normal float64");
    }
  }
}
