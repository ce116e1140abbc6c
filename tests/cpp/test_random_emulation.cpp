// The GPU's Philox stream and random fill kernels
// (cuda/device/random_kernels.cuh) run on the CPU through
// tests/cpp/cuda_emulation.h against the CPU generator: the same counter
// blocks for any seed and offset (64-bit counters crossing 2^32), the
// per-element layout (one and two words per element, any launch shape), and
// normal_ (Box-Muller pairs, odd lengths) against cpu::normal; uniform_,
// randint / random_, bernoulli and exponential_ (the per-element formulas) in
// every dtype, bit for bit against the CPU kernels.
#include <ember/core/cpu/random.h>
#include <ember/core/generator.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"

#include "cuda_emulation.h"

#include <ember/cuda/device/random_kernels.cuh>

namespace {

using namespace emu_test;
namespace kc = ember::cuda;

// out (contiguous, any dtype) filled by per_element_kernel with Op<T> built by
// make(TypeTag<T>), T the device element type of out's dtype.
template <class Make>
void emulated_fill(Tensor& out, int words, const ember::PhiloxStream& s, Make make) {
  kc::dispatch_device(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto op = make(tag);
    launch(5, 64, 0, [&] {  // fewer threads than counter blocks: grid-stride
      kc::per_element_kernel<T>(static_cast<T*>(out.data_ptr()), out.numel(), words, s.seed, s.offset, op);
    });
  });
}

// The same bytes (every element of both written). float64 may differ in
// the last bit: the CPU kernels are built with -march=native and contract
// from + span * u into an FMA (so does nvcc), the emulation does not.
void require_same_bits(const Tensor& got, const Tensor& want, const char* what) {
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(got.numel() == want.numel());
  if (got.dtype() == DType::Float64) {
    require_close(values_of(got), values_of(want), 5e-16, 4e-15, what);  // an ulp of |from|, |to| <= 5
    return;
  }
  const auto* g = static_cast<const unsigned char*>(got.data_ptr());
  const auto* w = static_cast<const unsigned char*>(want.data_ptr());
  const size_t size = got.element_size();
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (std::memcmp(g + i * size, w + i * size, size) != 0) {
      INFO(what << " " << ember::dtype_name(got.dtype()) << " element " << i << ": got " << values_of(got)[i]
                << ", want " << values_of(want)[i]);
      REQUIRE(false);
    }
  }
}

// Garbage that differs between the two outputs, so an element neither writes cannot match.
Tensor filled(int64_t n, DType dtype, double v) {
  return tensor_of(std::vector<double>(static_cast<size_t>(n), v), {n}, dtype);
}

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
  // 300001: many of the CPU's batches and parallel chunks, and an odd end. The
  // emulated kernel calls libm's logf and sincosf: this also checks the CPU's
  // own log and sincos (core/cpu/random.cpp) against them.
  for (int64_t n : {1, 2, 7, 1000, 1001, 300001}) {
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

TEST_CASE("uniform, randint, bernoulli, exponential kernels (host emulation) match the CPU bit for bit", "[emulation]") {
  const ember::PhiloxStream s{987654321, 0xfffffff0ull};  // the counter's low word wraps mid-fill
  // float16 / bfloat16 store through float, as the CPU does: rounding the
  // double straight to 16 bits would differ in about one element in 20,000.
  auto big = [](DType d) -> int64_t { return d == DType::Float16 || d == DType::BFloat16 ? 100000 : 1001; };
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    const int words = ember::cpu::uniform_words(d);
    for (auto [from, to] : {std::pair{-3.7, 5.1}, std::pair{0.0, 1.0}}) {
      INFO("uniform [" << from << ", " << to << ")");
      Tensor want = filled(big(d), d, 7), got = filled(big(d), d, 9);
      ember::cpu::uniform(want, from, to, s);
      emulated_fill(got, words, s, [&](auto tag) {
        return kc::UniformOp<typename decltype(tag)::type>{from, to, to - from, words};
      });
      require_same_bits(got, want, "uniform");
    }
    Tensor want = filled(big(d), d, 7), got = filled(big(d), d, 9);
    ember::cpu::exponential(want, 1.5, s);
    emulated_fill(got, words, s, [&](auto tag) { return kc::ExponentialOp<typename decltype(tag)::type>{1.5, words}; });
    require_same_bits(got, want, "exponential");
  }
  struct RandintCase { DType dtype; int64_t low; uint64_t range; };
  const RandintCase randint_cases[] = {
      {DType::Int64, -5, 10},          {DType::Int64, -(int64_t{1} << 40), uint64_t{1} << 41},  // two words
      {DType::Int64, 0, 0},            // random_() over all 64 bits
      {DType::Int32, -1000, 2000},     {DType::UInt8, 0, 256}, {DType::Int8, -128, 256},
      {DType::Float16, -50, 100},      {DType::BFloat16, 0, 70000}, {DType::Float32, -(1 << 30), 1u << 31},
      {DType::Float64, 3, 1000000007}, {DType::Bool, 0, 2}};
  for (const RandintCase& c : randint_cases) {
    INFO("randint low " << c.low << " range " << c.range);
    const int words = c.range == 0 ? 2 : ember::cpu::randint_words(c.range);  // as cuda/random.cu picks them
    Tensor want = filled(1001, c.dtype, 1), got = filled(1001, c.dtype, 0);
    ember::cpu::randint(want, c.low, c.range, s);
    emulated_fill(got, words, s, [&](auto tag) { return kc::RandintOp<typename decltype(tag)::type>{c.low, c.range, words}; });
    require_same_bits(got, want, "randint");
  }
  const Tensor prob = tensor_of(normal_values(1001, 1.0, 5), {1001}, DType::Float64).sigmoid().contiguous();
  for (DType d : {DType::Float32, DType::Bool, DType::Float16, DType::Int64}) {
    {
      Tensor want = filled(1001, d, 1), got = filled(1001, d, 0);
      ember::cpu::bernoulli(want, 0.3, s);
      emulated_fill(got, 1, s, [&](auto tag) { return kc::BernoulliScalarOp<typename decltype(tag)::type>{0.3}; });
      require_same_bits(got, want, "bernoulli(p)");
    }
    Tensor want = filled(1001, d, 1), got = filled(1001, d, 0);
    ember::cpu::bernoulli(want, prob, s);
    emulated_fill(got, 1, s, [&](auto tag) {
      return kc::BernoulliTensorOp<typename decltype(tag)::type>{static_cast<const double*>(prob.data_ptr())};
    });
    require_same_bits(got, want, "bernoulli(tensor)");
  }
}
