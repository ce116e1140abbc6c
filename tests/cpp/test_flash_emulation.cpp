// The fused attention kernels (cuda/device/flash_attention.cuh) run on the CPU
// through tests/cpp/cuda_emulation.h, in bfloat16 and float16, against a
// float64 reference: forward
// output and logsumexp, and the three gradients, for causal and non-causal
// attention, L == S, L > S, L < S, lengths that are not multiples of the
// 64-row tiles, and head sizes padded to 32, 64 and 128. This checks the
// kernels' tiling, masking, padding and synchronisation where no GPU is
// available; the GPU itself is tested by tests/python/test_cuda_attention.py.
#include "catch.h"
#include "cuda_emulation.h"

// The 16-bit element types: bfloat16 and float16 rounded to nearest even, as
// types of their own (an emulated __nv_bfloat16 / __half would give the
// kernels the mangled names of the library's real launch stubs), and the
// loads and stores of cuda/device/float_access.cuh for them.
struct Bf16 { uint16_t bits; };
struct F16 { uint16_t bits; };
inline float to_float(Bf16 h) { return __bfloat162float(__nv_bfloat16{h.bits}); }
inline float to_float(F16 h) { return __half2float(__half{h.bits}); }
template <class T> T from_float(float f);
template <> inline Bf16 from_float<Bf16>(float f) { return {__float2bfloat16_rn(f).x}; }
template <> inline F16 from_float<F16>(float f) { return {__float2half_rn(f).x}; }
namespace ember::cuda {
inline float load(const Bf16* p, int64_t i) { return to_float(p[i]); }
inline void store(Bf16* p, int64_t i, float v) { p[i] = from_float<Bf16>(v); }
inline float load(const F16* p, int64_t i) { return to_float(p[i]); }
inline void store(F16* p, int64_t i, float v) { p[i] = from_float<F16>(v); }
inline float load(const float* p, int64_t i) { return p[i]; }
}  // namespace ember::cuda

#include <ember/cuda/device/flash_attention.cuh>

#include <algorithm>
#include <random>

namespace {

using namespace ember::cuda::flash;

struct Errors {
  double out = 0, lse = 0, dq = 0, dk = 0, dv = 0;        // max abs error
  double out_max = 0, dq_max = 0, dk_max = 0, dv_max = 0;  // max abs reference value
};

template <class T, int D>
Errors run_case(int64_t N, int64_t L, int64_t S, int E, bool causal, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  auto make = [&](int64_t n) {
    std::vector<T> v(static_cast<size_t>(n));
    for (auto& x : v) x = from_float<T>(normal(rng));
    return v;
  };
  auto q = make(N * L * E), k = make(N * S * E), v = make(N * S * E), go = make(N * L * E);
  const double scale = 1.3 / std::sqrt(static_cast<double>(E));
  // Outputs start as NaN: an element the kernels never write fails the comparison.
  std::vector<T> out(N * L * E, from_float<T>(NAN)), gk(N * S * E, from_float<T>(NAN)), gv(N * S * E, from_float<T>(NAN));
  std::vector<float> lse(N * L, NAN), delta(N * L, NAN), gq(N * L * E, 0.f);  // gq: zero-filled by the caller
  const int64_t q_tiles = (L + kBlockM - 1) / kBlockM, kv_tiles = (S + kBlockN - 1) / kBlockN;
  launch(static_cast<unsigned>(N * q_tiles), kThreads, forward_smem_bytes(D, 2), [&] {
    flash_forward_kernel<T, D>(out.data(), lse.data(), q.data(), k.data(), v.data(), L, S, E,
                                  static_cast<float>(scale) * kLog2e, causal, q_tiles);
  });
  launch(static_cast<unsigned>((N * L + 7) / 8), 256, 0,
         [&] { flash_delta_kernel<T>(delta.data(), go.data(), out.data(), N * L, E); });
  launch(static_cast<unsigned>(N * kv_tiles), kThreads, backward_smem_bytes(D, 2), [&] {
    flash_backward_kernel<T, D>(gq.data(), gk.data(), gv.data(), q.data(), k.data(), v.data(), go.data(),
                                   lse.data(), delta.data(), L, S, E, static_cast<float>(scale),
                                   static_cast<float>(scale) * kLog2e, causal, kv_tiles);
  });

  // float64 reference on the same 16-bit inputs.
  auto f = [](const std::vector<T>& a, int64_t i) { return static_cast<double>(to_float(a[i])); };
  Errors err;
  std::vector<double> rq(N * L * E, 0.0), rk(N * S * E, 0.0), rv(N * S * E, 0.0);
  for (int64_t n = 0; n < N; ++n) {
    std::vector<double> P(L * S), dS(L * S);
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> s(S);
      double m = -INFINITY;
      for (int64_t j = 0; j < S; ++j) {
        double a = 0;
        for (int e = 0; e < E; ++e) a += f(q, (n * L + i) * E + e) * f(k, (n * S + j) * E + e);
        s[j] = causal && j > i ? -INFINITY : a * scale;
        m = std::max(m, s[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < S; ++j) sum += std::exp(s[j] - m);
      err.lse = std::max(err.lse, std::fabs(m + std::log(sum) - lse[n * L + i]));
      for (int64_t j = 0; j < S; ++j) P[i * S + j] = std::exp(s[j] - m) / sum;
      double d = 0;  // rowsum(dO * O)
      for (int e = 0; e < E; ++e) {
        double o = 0;
        for (int64_t j = 0; j < S; ++j) o += P[i * S + j] * f(v, (n * S + j) * E + e);
        err.out = std::max(err.out, std::fabs(o - f(out, (n * L + i) * E + e)));
        err.out_max = std::max(err.out_max, std::fabs(o));
        d += o * f(go, (n * L + i) * E + e);
      }
      for (int64_t j = 0; j < S; ++j) {
        double dp = 0;
        for (int e = 0; e < E; ++e) dp += f(go, (n * L + i) * E + e) * f(v, (n * S + j) * E + e);
        dS[i * S + j] = P[i * S + j] * (dp - d);
      }
    }
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < S; ++j)
        for (int e = 0; e < E; ++e) {
          rq[(n * L + i) * E + e] += scale * dS[i * S + j] * f(k, (n * S + j) * E + e);
          rk[(n * S + j) * E + e] += scale * dS[i * S + j] * f(q, (n * L + i) * E + e);
          rv[(n * S + j) * E + e] += P[i * S + j] * f(go, (n * L + i) * E + e);
        }
  }
  for (size_t i = 0; i < rq.size(); ++i) {
    err.dq = std::max(err.dq, std::fabs(rq[i] - gq[i]));
    err.dq_max = std::max(err.dq_max, std::fabs(rq[i]));
  }
  for (size_t i = 0; i < rk.size(); ++i) {
    err.dk = std::max(err.dk, std::fabs(rk[i] - to_float(gk[i])));
    err.dk_max = std::max(err.dk_max, std::fabs(rk[i]));
    err.dv = std::max(err.dv, std::fabs(rv[i] - to_float(gv[i])));
    err.dv_max = std::max(err.dv_max, std::fabs(rv[i]));
  }
  return err;
}

// Tolerances relative to the largest reference value: P and dS are rounded to
// the 16-bit type before their products (as FlashAttention-2), so the error
// scales with the type's precision (bfloat16 8 bits, float16 11).
// float16's errors here stay below 1e-3 absolute (about 0.1% of the largest
// value); its bounds are tight enough that rounding the kernels' stores to
// bfloat16's precision fails them.
struct Tolerance { double out, grad, atol; };
constexpr Tolerance kBf16Tol{0.02, 0.03, 1e-3};
constexpr Tolerance kF16Tol{0.002, 0.003, 2e-4};

template <class T>
void check(int64_t N, int64_t L, int64_t S, int E, bool causal, Tolerance tol) {
  INFO("N " << N << " L " << L << " S " << S << " E " << E << " causal " << causal
            << (std::is_same_v<T, F16> ? " float16" : " bfloat16"));
  const unsigned seed = static_cast<unsigned>(N * 1000 + L * 10 + S + E);
  const Errors e = E <= 32   ? run_case<T, 32>(N, L, S, E, causal, seed)
                   : E <= 64 ? run_case<T, 64>(N, L, S, E, causal, seed)
                             : run_case<T, 128>(N, L, S, E, causal, seed);
  INFO("errors: out " << e.out << " lse " << e.lse << " dq " << e.dq << " dk " << e.dk << " dv " << e.dv);
  REQUIRE(e.out <= tol.out * e.out_max + tol.atol);  // NaN (an unwritten element) fails too
  REQUIRE(e.lse <= 1e-3);
  REQUIRE(e.dq <= tol.grad * e.dq_max + tol.atol);
  REQUIRE(e.dk <= tol.grad * e.dk_max + tol.atol);
  REQUIRE(e.dv <= tol.grad * e.dv_max + tol.atol);
}

}  // namespace

TEST_CASE("flash attention kernels (host emulation): tiles, tails, causal L != S, head sizes", "[flash_emulation]") {
  auto check_bf16 = [](int64_t N, int64_t L, int64_t S, int E, bool causal) { check<Bf16>(N, L, S, E, causal, kBf16Tol); };
  check_bf16(2, 64, 64, 64, true);
  check_bf16(1, 130, 70, 40, true);   // L > S, tails in both, E padded to 64
  check_bf16(1, 70, 130, 16, true);   // L < S: key tiles no query attends, E padded to 32
  check_bf16(1, 100, 100, 32, false);
  check_bf16(1, 37, 150, 128, false);
  check_bf16(1, 150, 37, 72, true);   // E padded to 128
  check_bf16(1, 1, 1, 8, true);
  check_bf16(3, 70, 50, 24, true);    // several heads with tails: per-head offsets use L and S, not the tiles
  check_bf16(2, 45, 90, 64, false);
}

TEST_CASE("flash attention kernels in float16 (host emulation)", "[flash_emulation]") {
  auto check_f16 = [](int64_t N, int64_t L, int64_t S, int E, bool causal) { check<F16>(N, L, S, E, causal, kF16Tol); };
  check_f16(2, 64, 64, 64, true);
  check_f16(2, 64, 64, 64, false);
  check_f16(1, 130, 70, 40, true);   // L > S, tails in both, E padded to 64
  check_f16(1, 70, 130, 16, false);  // L < S, E padded to 32
  check_f16(1, 150, 37, 72, true);   // E padded to 128
  check_f16(3, 45, 90, 24, true);    // several heads with tails
}
