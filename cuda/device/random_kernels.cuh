// The Philox4x32-10 stream and the random fill kernels (cuda/random.cu
// launches them with its per-op formulas): one thread per 128-bit counter
// block fills the elements whose words lie in it (core/cpu/random.h gives the
// layout), so results do not depend on the launch shape. Device code only,
// in a header so that tests/cpp/test_random_emulation.cpp runs the same
// source on the CPU (tests/cpp/cuda_emulation.h) against the CPU's streams.
#pragma once
#include <cstdint>
#include <type_traits>

#include <ember/cuda/device/dtypes.cuh>

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

struct Words {
  uint32_t w[4];
};

// Block j of the stream: philox4x32({lo(offset + j), hi(offset + j), 0, 0}, {lo(seed), hi(seed)}).
__device__ inline Words philox_block(uint64_t seed, uint64_t offset, uint64_t j) {
  const uint64_t ctr = offset + j;
  uint32_t c0 = static_cast<uint32_t>(ctr), c1 = static_cast<uint32_t>(ctr >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    const uint64_t p0 = static_cast<uint64_t>(kM0) * c0;
    const uint64_t p1 = static_cast<uint64_t>(kM1) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n1 = static_cast<uint32_t>(p1);
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    const uint32_t n3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
  }
  return Words{{c0, c1, c2, c3}};
}

__device__ inline double unit24(uint32_t w) { return static_cast<double>(w >> 8) * (1.0 / 16777216.0); }
__device__ inline double unit53(uint32_t hi, uint32_t lo) {
  const uint64_t x = ((static_cast<uint64_t>(hi) << 32) | lo) >> 11;
  return static_cast<double>(x) * (1.0 / 9007199254740992.0);
}
__device__ inline double unit32(uint32_t w) { return static_cast<double>(w) * (1.0 / 4294967296.0); }

// out[i] = f(i, words of element i) for every i < n; `words` (1 or 2) per element.
template <class T, class F>
__global__ void per_element_kernel(T* out, int64_t n, int words, uint64_t seed, uint64_t offset, F f) {
  const int per_block = 4 / words;
  const int64_t nblocks = (n * words + 3) / 4;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < nblocks;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Words w = philox_block(seed, offset, static_cast<uint64_t>(j));
    for (int q = 0; q < per_block; ++q) {
      const int64_t i = j * per_block + q;
      if (i < n) out[i] = f(i, w.w + q * words);
    }
  }
}

// from + span * u rounded once, as the CPU kernels compute it (std::fma in
// core/cpu/random.cpp): written out on both sides so that the bits for a seed
// do not depend on whether a compiler contracts the expression (nvcc does by
// default; a host compiler only with FMA units and -ffp-contract=fast).
__device__ inline double fused_mul_add(double span, double u, double from) { return ::fma(span, u, from); }

// A double result stored as T the way the CPU stores it (core/cpu/random.cpp):
// the half types through float, as PyTorch computes them.
template <class T>
__device__ inline T store_float(double v) {
  if constexpr (std::is_same_v<T, double>) return v;
  else return convert<T>(static_cast<float>(v));
}

// ---- per-element formulas (f of per_element_kernel), as the CPU's

// uniform_: from + (to - from) * u, u of 24 bits (53 for float64, words == 2).
template <class T>
struct UniformOp {
  double from, to, span;  // span = to - from
  int words;
  __device__ T operator()(int64_t, const uint32_t* w) const {
    const double u = words == 2 ? unit53(w[0], w[1]) : unit24(w[0]);
    T v = store_float<T>(fused_mul_add(span, u, from));
    // Rounding to T may land on `to`; keep the interval half-open.
    if constexpr (!std::is_same_v<T, double>) {
      if (span > 0 && static_cast<double>(static_cast<float>(widen(v))) >= to) v = store_float<T>(from);
    }
    return v;
  }
};

// randint / random_: low + x % range over 32 or 64 bits (range 0: all 2^64).
template <class T>
struct RandintOp {
  int64_t low;
  uint64_t range;
  int words;
  __device__ T operator()(int64_t, const uint32_t* w) const {
    const uint64_t x = words == 2 ? (static_cast<uint64_t>(w[0]) << 32) | w[1] : w[0];
    const uint64_t v = static_cast<uint64_t>(low) + (range == 0 ? x : x % range);
    return convert<T>(static_cast<int64_t>(v));
  }
};

// bernoulli: 1 where w * 2^-32 < p (p per element, or one p).
template <class T>
struct BernoulliTensorOp {
  const double* prob;
  __device__ T operator()(int64_t i, const uint32_t* w) const { return convert<T>(unit32(w[0]) < prob[i] ? 1.0f : 0.0f); }
};
template <class T>
struct BernoulliScalarOp {
  double prob;
  __device__ T operator()(int64_t, const uint32_t* w) const { return convert<T>(unit32(w[0]) < prob ? 1.0f : 0.0f); }
};

// exponential_: -log1p(-u) / lambd.
template <class T>
struct ExponentialOp {
  double lambd;
  int words;
  __device__ T operator()(int64_t, const uint32_t* w) const {
    const double u = words == 2 ? unit53(w[0], w[1]) : unit24(w[0]);
    return store_float<T>(-::log1p(-u) / lambd);
  }
};

// Box-Muller on pairs (2k, 2k+1): pair k takes words [2k * words, 2(k+1) * words).
template <class T>
__global__ void normal_kernel(T* out, int64_t n, int words, uint64_t seed, uint64_t offset, double mean,
                              double std) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int pairs_per_block = words == 1 ? 2 : 1;
  const int64_t nblocks = ((n + (n & 1)) * words + 3) / 4;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < nblocks;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Words w = philox_block(seed, offset, static_cast<uint64_t>(j));
    for (int q = 0; q < pairs_per_block; ++q) {
      const int64_t i = 2 * (j * pairs_per_block + q);
      if (i >= n) break;
      const uint32_t* pw = w.w + q * 2 * words;
      const C u1 = static_cast<C>(words == 2 ? unit53(pw[0], pw[1]) : unit24(pw[0]));
      const C u2 = static_cast<C>(words == 2 ? unit53(pw[2], pw[3]) : unit24(pw[1]));
      C r, sn, cs;
      if constexpr (std::is_same_v<C, double>) {
        r = ::sqrt(-2.0 * ::log(1.0 - u1));
        ::sincos(6.283185307179586 * u2, &sn, &cs);
      } else {
        r = sqrtf(-2.0f * logf(1.0f - u1));
        sincosf(6.2831853f * u2, &sn, &cs);
      }
      out[i] = store_float<T>(fused_mul_add(std, static_cast<double>(r * cs), mean));
      if (i + 1 < n) out[i + 1] = store_float<T>(fused_mul_add(std, static_cast<double>(r * sn), mean));
    }
  }
}

}  // namespace
}  // namespace ember::cuda
