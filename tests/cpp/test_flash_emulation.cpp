// The fused attention kernels (cuda/device/flash_attention.cuh's wmma ones,
// and the mma.sync ones of flash_forward_mma.cuh / flash_backward_mma.cuh)
// run on the CPU
// through tests/cpp/cuda_emulation.h, in bfloat16 and float16, against a
// float64 reference: forward
// output and logsumexp, and the three gradients, for causal and non-causal
// attention, L == S, L > S, L < S, lengths that are not multiples of the
// 64-row tiles, head sizes padded to 32, 64 and 128, and inputs read (outputs
// written) in place in strided layouts (GPT-2's split projection, heads outside
// the batch, strides that do not merge, a head broadcast). This checks the
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
#include <ember/cuda/device/flash_backward_mma.cuh>
#include <ember/cuda/device/flash_forward_mma.cuh>

#include <algorithm>
#include <random>

namespace {

using namespace ember::cuda::flash;

// e = max(e, x), except that a NaN x sticks (std::max(e, NaN) would keep e,
// hiding an element the kernels never wrote or computed from a stray read).
void worst(double& e, double x) {
  if (!std::isnan(e) && !(x <= e)) e = x;
}

struct Errors {
  double out = 0, lse = 0, dq = 0, dk = 0, dv = 0;        // max abs error
  double out_max = 0, dq_max = 0, dk_max = 0, dv_max = 0;  // max abs reference value
};

// Layouts of an input [B, H, rows, E] in its buffer (the kernels' RowStrides
// plus an offset): element (n, i, e) of slice n = b * H + h lives at
// offset + b * batch + h * head + i * row + e.
enum class Layout {
  Contiguous,  // [B, H, rows, E]
  Gpt,         // q, k or v of GPT-2: [B, T, 3C] split at C = H * E, viewed [B, T, H, E], transposed to [B, H, T, E]
  GptGrad,     // the gradient reaching q, k, v's consumer: [B, T, H, E] contiguous, transposed to [B, H, T, E]
  HeadsOuter,  // [H, B, rows, E] transposed to [B, H, rows, E]: the batch stride is below the head stride
  Padded,      // rows padded by 8 elements, heads and batches by 8 and 16: (b, h) cannot merge into one stride
  Broadcast,   // one [B, 1, rows, E] head expanded over H (head stride 0)
};

struct Placement {
  RowStrides strides;
  int64_t offset, size;  // of element (0, 0, 0) and of the whole buffer
};

// `part` is 0, 1, 2 for q, k, v (which third of GPT-2's projection).
Placement place(Layout layout, int part, int64_t B, int64_t H, int64_t rows, int E) {
  const int64_t C = H * E;
  RowStrides s{};
  int64_t offset = 0;
  switch (layout) {
    case Layout::Contiguous: s = {H * rows * E, rows * E, E}; break;
    case Layout::Gpt: s = {rows * 3 * C, E, 3 * C}; offset = part * C; break;
    case Layout::GptGrad: s = {rows * C, E, C}; break;
    case Layout::HeadsOuter: s = {rows * E, B * rows * E, E}; break;
    case Layout::Padded: s = {H * (rows * (E + 8) + 8) + 16, rows * (E + 8) + 8, E + 8}; offset = 8; break;
    case Layout::Broadcast: s = {rows * E, 0, E}; break;
  }
  const int64_t last = offset + (B - 1) * s.batch + (H - 1) * s.head + (rows - 1) * s.row + E;
  return {s, offset, last + (layout == Layout::Padded ? 8 : 0)};
}

struct Layouts {
  Layout q = Layout::Contiguous, k = Layout::Contiguous, v = Layout::Contiguous, go = Layout::Contiguous;
  Layout out = Layout::Contiguous, gk = Layout::Contiguous, gv = Layout::Contiguous;  // outputs
};

// An input or output of the kernels: its buffer (elements outside the operand
// are NaN, so reading one fails the comparison; an output's elements start as
// NaN too, so one never written fails it) and where the operand lies in it.
template <class T>
struct Operand {
  std::vector<T> buffer;
  Placement at;
  const T* data() const { return buffer.data() + at.offset; }
  T* data() { return buffer.data() + at.offset; }
  int64_t index(int64_t n, int64_t H, int64_t i, int e) const {
    return at.offset + (n / H) * at.strides.batch + (n % H) * at.strides.head + i * at.strides.row + e;
  }
  double operator()(int64_t n, int64_t H, int64_t i, int e) const {
    return static_cast<double>(to_float(buffer[static_cast<size_t>(index(n, H, i, e))]));
  }
};

// The two sets of kernels: mma.sync fragments in registers (the backward only
// for head sizes up to 64, as cuda/attention.cu picks), or wmma's.
enum class Kernels { Mma, Wmma };

template <class T, int D>
Errors run_case(int64_t B, int64_t H, int64_t L, int64_t S, int E, bool causal, unsigned seed, Layouts lay,
                Kernels kernels) {
  const int64_t N = B * H;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  auto make = [&](Layout layout, int part, int64_t rows) {
    Operand<T> op{{}, place(layout, part, B, H, rows, E)};
    op.buffer.assign(static_cast<size_t>(op.at.size), from_float<T>(NAN));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < rows; ++i)
        for (int e = 0; e < E; ++e) op.buffer[static_cast<size_t>(op.index(n, H, i, e))] = from_float<T>(normal(rng));
    return op;
  };
  const auto q = make(lay.q, 0, L), k = make(lay.k, 1, S), v = make(lay.v, 2, S), go = make(lay.go, 0, L);
  auto make_output = [&](Layout layout, int part, int64_t rows) {
    Operand<T> op{{}, place(layout, part, B, H, rows, E)};
    op.buffer.assign(static_cast<size_t>(op.at.size), from_float<T>(NAN));
    return op;
  };
  auto out = make_output(lay.out, 0, L), gk = make_output(lay.gk, 1, S), gv = make_output(lay.gv, 2, S);
  const double scale = 1.3 / std::sqrt(static_cast<double>(E));
  std::vector<float> lse(N * L, NAN), delta(N * L, NAN), gq(N * L * E, 0.f);  // gq: zero-filled by the caller
  const int64_t q_tiles = (L + kBlockM - 1) / kBlockM, kv_tiles = (S + kBlockN - 1) / kBlockN;
  const bool mma = kernels == Kernels::Mma;
  launch(static_cast<unsigned>(N * q_tiles), kThreads, mma ? forward_mma_smem_bytes(D, 2) : forward_smem_bytes(D, 2), [&] {
    auto kernel = mma ? flash_forward_mma_kernel<T, D> : flash_forward_kernel<T, D>;
    kernel(out.data(), out.at.strides, lse.data(), q.data(), q.at.strides, k.data(), k.at.strides, v.data(),
           v.at.strides, H, L, S, E, static_cast<float>(scale) * kLog2e, causal, q_tiles);
  });
  launch(static_cast<unsigned>((N * L + 7) / 8), 256, 0, [&] {
    flash_delta_kernel<T>(delta.data(), go.data(), go.at.strides, out.data(), out.at.strides, H, L, N * L, E);
  });
  const bool mma_backward = mma && D <= 64;
  launch(static_cast<unsigned>(N * kv_tiles), kThreads,
         mma_backward ? backward_mma_smem_bytes(D, 2) : backward_smem_bytes(D, 2), [&] {
    auto kernel = flash_backward_kernel<T, D>;
    if constexpr (D <= 64) {
      if (mma_backward) kernel = flash_backward_mma_kernel<T, D>;
    }
    kernel(gq.data(), gk.data(), gk.at.strides, gv.data(), gv.at.strides, q.data(), q.at.strides, k.data(),
           k.at.strides, v.data(), v.at.strides, go.data(), go.at.strides, lse.data(), delta.data(), H, L, S, E,
           static_cast<float>(scale), static_cast<float>(scale) * kLog2e, causal, kv_tiles);
  });

  // float64 reference on the same 16-bit inputs.
  Errors err;
  std::vector<double> rq(N * L * E, 0.0), rk(N * S * E, 0.0), rv(N * S * E, 0.0);
  for (int64_t n = 0; n < N; ++n) {
    std::vector<double> P(L * S), dS(L * S);
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> s(S);
      double m = -INFINITY;
      for (int64_t j = 0; j < S; ++j) {
        double a = 0;
        for (int e = 0; e < E; ++e) a += q(n, H, i, e) * k(n, H, j, e);
        s[j] = causal && j > i ? -INFINITY : a * scale;
        m = std::max(m, s[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < S; ++j) sum += std::exp(s[j] - m);
      worst(err.lse, std::fabs(m + std::log(sum) - lse[n * L + i]));
      for (int64_t j = 0; j < S; ++j) P[i * S + j] = std::exp(s[j] - m) / sum;
      double d = 0;  // rowsum(dO * O)
      for (int e = 0; e < E; ++e) {
        double o = 0;
        for (int64_t j = 0; j < S; ++j) o += P[i * S + j] * v(n, H, j, e);
        worst(err.out, std::fabs(o - out(n, H, i, e)));
        err.out_max = std::max(err.out_max, std::fabs(o));
        d += o * go(n, H, i, e);
      }
      for (int64_t j = 0; j < S; ++j) {
        double dp = 0;
        for (int e = 0; e < E; ++e) dp += go(n, H, i, e) * v(n, H, j, e);
        dS[i * S + j] = P[i * S + j] * (dp - d);
      }
    }
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < S; ++j)
        for (int e = 0; e < E; ++e) {
          rq[(n * L + i) * E + e] += scale * dS[i * S + j] * k(n, H, j, e);
          rk[(n * S + j) * E + e] += scale * dS[i * S + j] * q(n, H, i, e);
          rv[(n * S + j) * E + e] += P[i * S + j] * go(n, H, i, e);
        }
  }
  for (size_t i = 0; i < rq.size(); ++i) {
    worst(err.dq, std::fabs(rq[i] - gq[i]));
    err.dq_max = std::max(err.dq_max, std::fabs(rq[i]));
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < S; ++j)
      for (int e = 0; e < E; ++e) {
        const size_t i = static_cast<size_t>((n * S + j) * E + e);
        worst(err.dk, std::fabs(rk[i] - gk(n, H, j, e)));
        err.dk_max = std::max(err.dk_max, std::fabs(rk[i]));
        worst(err.dv, std::fabs(rv[i] - gv(n, H, j, e)));
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
void check(int64_t B, int64_t H, int64_t L, int64_t S, int E, bool causal, Tolerance tol, Layouts lay = {}) {
  INFO("B " << B << " H " << H << " L " << L << " S " << S << " E " << E << " causal " << causal
            << (std::is_same_v<T, F16> ? " float16" : " bfloat16") << " layouts q " << static_cast<int>(lay.q)
            << " k " << static_cast<int>(lay.k) << " v " << static_cast<int>(lay.v) << " grad_out "
            << static_cast<int>(lay.go) << " out " << static_cast<int>(lay.out) << " gk " << static_cast<int>(lay.gk)
            << " gv " << static_cast<int>(lay.gv));
  const unsigned seed = static_cast<unsigned>(B * H * 1000 + L * 10 + S + E);
  // The mma.sync kernels twice: cp.async copies land at once in the odd blocks, then in the even ones.
  for (auto [kernels, eager_odd] : {std::pair{Kernels::Mma, true}, std::pair{Kernels::Mma, false},
                                    std::pair{Kernels::Wmma, true}}) {
    emu::eager_odd_blocks = eager_odd;
    INFO((kernels == Kernels::Mma ? "mma.sync kernels" : "wmma kernels") << (eager_odd ? "" : ", even blocks eager"));
    const Errors e = E <= 32   ? run_case<T, 32>(B, H, L, S, E, causal, seed, lay, kernels)
                     : E <= 64 ? run_case<T, 64>(B, H, L, S, E, causal, seed, lay, kernels)
                               : run_case<T, 128>(B, H, L, S, E, causal, seed, lay, kernels);
    INFO("errors: out " << e.out << " lse " << e.lse << " dq " << e.dq << " dk " << e.dk << " dv " << e.dv);
    REQUIRE(e.out <= tol.out * e.out_max + tol.atol);  // NaN (an unwritten element) fails too
    REQUIRE(e.lse <= 1e-3);
    REQUIRE(e.dq <= tol.grad * e.dq_max + tol.atol);
    REQUIRE(e.dk <= tol.grad * e.dk_max + tol.atol);
    REQUIRE(e.dv <= tol.grad * e.dv_max + tol.atol);
  }
}

// GPT-2's attention inputs: q, k, v thirds of one projection, grad_out from the transposed output.
// Outputs as the front-end lays them out: in their inputs' memory order ([B, T, H, E] for GPT-2's).
constexpr Layouts kGpt{Layout::Gpt,     Layout::Gpt,     Layout::Gpt,    Layout::GptGrad,
                       Layout::GptGrad, Layout::GptGrad, Layout::GptGrad};
constexpr Layouts kHeadsOuter{Layout::HeadsOuter, Layout::HeadsOuter, Layout::HeadsOuter, Layout::HeadsOuter,
                              Layout::HeadsOuter, Layout::HeadsOuter, Layout::HeadsOuter};
// Outputs with gaps (not what the front-end makes, but addressed the same way).
constexpr Layouts kPadded{Layout::Padded, Layout::Padded, Layout::Padded, Layout::Padded,
                          Layout::Padded, Layout::Padded, Layout::Padded};
constexpr Layouts kMixed{Layout::Gpt,     Layout::Broadcast,  Layout::Padded,    Layout::HeadsOuter,
                         Layout::GptGrad, Layout::HeadsOuter, Layout::Contiguous};

}  // namespace

TEST_CASE("flash attention kernels (host emulation): tiles, tails, causal L != S, head sizes", "[flash_emulation]") {
  auto check_bf16 = [](int64_t N, int64_t L, int64_t S, int E, bool causal) {
    check<Bf16>(1, N, L, S, E, causal, kBf16Tol);
  };
  check_bf16(2, 64, 64, 64, true);
  check_bf16(1, 130, 70, 40, true);   // L > S, tails in both, E padded to 64
  check_bf16(1, 70, 130, 16, true);   // L < S: key tiles no query attends, E padded to 32
  check_bf16(1, 100, 100, 32, false);
  check_bf16(1, 37, 150, 128, false);
  check_bf16(1, 150, 37, 72, true);   // E padded to 128
  check_bf16(1, 1, 1, 8, true);
  check_bf16(3, 70, 50, 24, true);    // several heads with tails: per-head offsets use L and S, not the tiles
  check_bf16(2, 45, 90, 64, false);
  check_bf16(1, 200, 70, 64, false);  // several query tiles per key block: the backward reuses its Q / dO buffers
  check_bf16(1, 200, 130, 64, true);
}

TEST_CASE("flash attention kernels in float16 (host emulation)", "[flash_emulation]") {
  auto check_f16 = [](int64_t N, int64_t L, int64_t S, int E, bool causal) {
    check<F16>(1, N, L, S, E, causal, kF16Tol);
  };
  check_f16(2, 64, 64, 64, true);
  check_f16(2, 64, 64, 64, false);
  check_f16(1, 130, 70, 40, true);   // L > S, tails in both, E padded to 64
  check_f16(1, 70, 130, 16, false);  // L < S, E padded to 32
  check_f16(1, 150, 37, 72, true);   // E padded to 128
  check_f16(3, 45, 90, 24, true);    // several heads with tails
}

TEST_CASE("flash attention kernels read strided inputs in place (host emulation)", "[flash_emulation]") {
  // bfloat16
  check<Bf16>(2, 3, 70, 70, 64, true, kBf16Tol, kGpt);       // GPT-2's layout, tails
  check<Bf16>(2, 2, 130, 70, 40, true, kBf16Tol, kGpt);      // L > S, E padded to 64
  check<Bf16>(3, 2, 50, 90, 32, false, kBf16Tol, kHeadsOuter);
  check<Bf16>(2, 3, 65, 40, 72, true, kBf16Tol, kPadded);    // (batch, head) strides that do not merge
  check<Bf16>(2, 2, 40, 70, 16, false, kBf16Tol, kMixed);    // every operand its own layout, k broadcast over heads
  // float16
  check<F16>(2, 3, 70, 70, 64, true, kF16Tol, kGpt);
  check<F16>(3, 2, 90, 50, 24, true, kF16Tol, kHeadsOuter);
  check<F16>(2, 2, 65, 65, 128, false, kF16Tol, kPadded);
  check<F16>(2, 3, 70, 40, 64, true, kF16Tol, kMixed);
}
