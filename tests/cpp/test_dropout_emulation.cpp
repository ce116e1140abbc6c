// The fused dropout kernel (cuda/device/dropout_kernels.cuh) runs on the CPU
// through tests/cpp/cuda_emulation.h, launched as cuda/nn_misc.cu launches it
// (grid-stride over fewer threads than counter blocks, the vector path when
// the pointers allow it), against cpu::native_dropout bit for bit: the output
// and the mask, in float32 / float64 / float16 / bfloat16, for sizes that are
// and are not multiples of the 4-element vector, Philox offsets whose low word
// wraps, p = 0, 1 and in between, buffers starting off the vector alignment,
// and in place (out == in). The mask is also bernoulli_'s with 1 - p, and the
// backward's per-element formula (dropout_value, which cuda/nn_misc.cu's
// backward functor calls) matches cpu::native_dropout_backward.
#include <cstdint>
#include <cstring>
#include <vector>

#include <ember/core/cpu/nn_misc.h>
#include <ember/core/generator.h>
#include <ember/core/ops/factory.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"

#include "cuda_emulation.h"

#include <ember/cuda/device/dropout_kernels.cuh>

namespace {

using namespace emu_test;
namespace kc = ember::cuda;

// A bool tensor whose bytes are `junk` (neither 0 nor 1), so an element the
// kernel does not write cannot match.
Tensor junk_mask(int64_t n, unsigned char junk) {
  Tensor m = ember::empty({n}, DType::Bool);
  if (n > 0) std::memset(m.data_ptr(), junk, static_cast<size_t>(n));
  return m;
}

void require_same_bytes(const void* got, const void* want, int64_t n, size_t size, const char* what) {
  const auto* g = static_cast<const unsigned char*>(got);
  const auto* w = static_cast<const unsigned char*>(want);
  for (int64_t i = 0; i < n; ++i) {
    if (std::memcmp(g + i * size, w + i * size, size) != 0) {
      INFO(what << " differs at element " << i << " of " << n);
      REQUIRE(false);
    }
  }
}

// Runs the emulated kernel on raw pointers (in and out may be equal), with
// the vector path decided as cuda/nn_misc.cu decides it.
template <class T>
void emulated_dropout(const T* in, T* out, bool* mask, int64_t n, double p, const ember::PhiloxStream& s,
                      bool allow_vector) {
  const bool vectorized = allow_vector && kc::dropout_vector_aligned<T>(in, out, mask);
  launch(3, 32, 0, [&] {  // 96 threads: fewer than the counter blocks of the larger sizes
    kc::native_dropout_kernel<T>(in, out, mask, n, ember::cpu::dropout_threshold(p),
                                 static_cast<kc::DropoutCompute<T>>(p < 1 ? 1 / (1 - p) : 0.0), s.seed, s.offset,
                                 vectorized);
  });
}

void dropout_case(DType dtype, int64_t n, double p, const ember::PhiloxStream& s) {
  INFO(ember::dtype_name(dtype) << " n " << n << " p " << p << " seed " << s.seed << " offset " << s.offset);
  const std::vector<double> v = normal_values(static_cast<size_t>(n), 3.0, static_cast<unsigned>(n));
  const Tensor in = tensor_of(v, {n}, dtype);
  Tensor want = nan_tensor({n}, dtype), want_mask = junk_mask(n, 3);
  ember::cpu::native_dropout(want, want_mask, in, ember::cpu::dropout_threshold(p), p < 1 ? 1 / (1 - p) : 0.0, s);
  const size_t size = in.element_size();

  kc::dispatch_device_float(dtype, "dropout test", [&](auto tag) {
    using T = decltype(tag);
    for (bool allow_vector : {true, false}) {
      INFO("vector path allowed " << allow_vector);
      Tensor out = nan_tensor({n}, dtype), mask = junk_mask(n, 2);
      emulated_dropout<T>(static_cast<const T*>(in.data_ptr()), static_cast<T*>(out.data_ptr()),
                          static_cast<bool*>(mask.data_ptr()), n, p, s, allow_vector);
      require_same_bytes(out.data_ptr(), want.data_ptr(), n, size, "output");
      require_same_bytes(mask.data_ptr(), want_mask.data_ptr(), n, 1, "mask");
    }
    {
      INFO("buffers one element past the vector alignment");
      std::vector<double> shifted(1, 0.0);
      shifted.insert(shifted.end(), v.begin(), v.end());
      const Tensor in1 = tensor_of(shifted, {n + 1}, dtype);
      Tensor out1 = nan_tensor({n + 1}, dtype), mask1 = junk_mask(n + 1, 2);
      emulated_dropout<T>(static_cast<const T*>(in1.data_ptr()) + 1, static_cast<T*>(out1.data_ptr()) + 1,
                          static_cast<bool*>(mask1.data_ptr()) + 1, n, p, s, true);
      require_same_bytes(static_cast<const T*>(out1.data_ptr()) + 1, want.data_ptr(), n, size, "output");
      require_same_bytes(static_cast<const bool*>(mask1.data_ptr()) + 1, want_mask.data_ptr(), n, 1, "mask");
    }
    {
      INFO("in place");
      Tensor io = tensor_of(v, {n}, dtype), mask = junk_mask(n, 2);
      T* d = static_cast<T*>(io.data_ptr());
      emulated_dropout<T>(d, d, static_cast<bool*>(mask.data_ptr()), n, p, s, true);
      require_same_bytes(io.data_ptr(), want.data_ptr(), n, size, "output");
      require_same_bytes(mask.data_ptr(), want_mask.data_ptr(), n, 1, "mask");
    }
  });

  // The keep test is bernoulli_'s with probability 1 - p: the same mask.
  std::vector<uint8_t> bern_bytes(static_cast<size_t>(n), 7);
  launch(2, 32, 0, [&] {
    kc::per_element_kernel<uint8_t>(bern_bytes.data(), n, 1, s.seed, s.offset,
                                    kc::BernoulliScalarOp<uint8_t>{1.0 - p});
  });
  require_same_bytes(bern_bytes.data(), want_mask.data_ptr(), n, 1, "mask against bernoulli(1 - p)");
}

}  // namespace

TEST_CASE("fused dropout kernel (host emulation) matches cpu::native_dropout bit for bit", "[emulation][dropout_emulation]") {
  const ember::PhiloxStream streams[] = {{0, 0}, {42, 7}, {0x123456789abcdefull, 0xfffffffeull}};  // low word wraps
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{4}, int64_t{5}, int64_t{7}, int64_t{64}, int64_t{1001},
                      int64_t{4099}}) {
      for (double p : {0.3, 0.5}) dropout_case(d, n, p, streams[n % 3]);
    }
    for (const auto& s : streams) dropout_case(d, 1003, 0.1, s);
    dropout_case(d, 517, 0.0, streams[1]);  // keeps everything, scale 1
    dropout_case(d, 517, 1.0, streams[2]);  // drops everything, scale 0
  }
}

TEST_CASE("dropout threshold is bernoulli's comparison at its edges", "[dropout_emulation]") {
  // w keeps when w * 2^-32 < 1 - p; the threshold is the first w that does not.
  for (double p : {0.0, 1.0, 0.5, 0.3, 0.1, 1e-12, 1 - 1e-12, 0.999999}) {
    const uint64_t t = ember::cpu::dropout_threshold(p);
    INFO("p " << p << " threshold " << t);
    REQUIRE(t <= (uint64_t{1} << 32));
    if (t > 0) REQUIRE(static_cast<double>(t - 1) * (1.0 / 4294967296.0) < 1.0 - p);
    if (t < (uint64_t{1} << 32)) REQUIRE_FALSE(static_cast<double>(t) * (1.0 / 4294967296.0) < 1.0 - p);
  }
}

TEST_CASE("dropout backward formula (host emulation) matches cpu::native_dropout_backward", "[dropout_emulation]") {
  const int64_t n = 1001;
  const std::vector<double> g = normal_values(static_cast<size_t>(n), 2.0, 11);
  Tensor mask = junk_mask(n, 0);
  auto* mb = static_cast<bool*>(mask.data_ptr());
  for (int64_t i = 0; i < n; ++i) mb[i] = (i * 7919) % 3 != 0;
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    for (double scale : {1.0 / 0.7, 2.0, 0.0}) {
      INFO(ember::dtype_name(d) << " scale " << scale);
      const Tensor grad = tensor_of(g, {n}, d);
      Tensor want = nan_tensor({n}, d), got = nan_tensor({n}, d);
      ember::cpu::native_dropout_backward(want, grad, mask, scale);
      kc::dispatch_device_float(d, "dropout test", [&](auto tag) {
        using T = decltype(tag);
        const T* gp = static_cast<const T*>(grad.data_ptr());
        T* out = static_cast<T*>(got.data_ptr());
        const auto s = static_cast<kc::DropoutCompute<T>>(scale);
        for (int64_t i = 0; i < n; ++i) out[i] = kc::dropout_value(gp[i], mb[i], s);
      });
      require_same_bytes(got.data_ptr(), want.data_ptr(), n, grad.element_size(), "grad");
    }
  }
}
