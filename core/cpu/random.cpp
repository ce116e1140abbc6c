#include <ember/core/cpu/random.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include <ember/core/cpu/fast_math.h>
#include <ember/core/cpu/parallel.h>

namespace ember::cpu {

namespace {

constexpr int64_t kGrainBlocks = 4096;

// [0, 1) with 24 bits (one word) or 53 bits (two words).
inline double unit24(uint32_t w) { return static_cast<double>(w >> 8) * (1.0 / 16777216.0); }
inline double unit53(uint32_t hi, uint32_t lo) {
  const uint64_t x = ((static_cast<uint64_t>(hi) << 32) | lo) >> 11;
  return static_cast<double>(x) * (1.0 / 9007199254740992.0);
}
inline double unit32(uint32_t w) { return static_cast<double>(w) * (1.0 / 4294967296.0); }

// Counter blocks are drawn a batch at a time into a buffer, then the batch's
// elements are made in a plain loop (no per-block branches), which the
// compiler can unroll or vectorize.
constexpr int64_t kBlocksPerBatch = 64;
constexpr int kPairsPerBatch = 2 * kBlocksPerBatch;  // normal float32: two pairs per block

// Calls batch(j0, blocks, words) for counter blocks [0, nblocks) in batches
// of at most kBlocksPerBatch, words holding the batch's 4 * blocks words in
// order. Batches run in parallel.
template <class F>
void for_each_batch(int64_t nblocks, const PhiloxStream& s, F batch) {
  parallel_for(0, nblocks, kGrainBlocks, [&](int64_t b, int64_t e) {
    uint32_t words[4 * kBlocksPerBatch];
    for (int64_t j0 = b; j0 < e; j0 += kBlocksPerBatch) {
      const int64_t blocks = std::min(e - j0, kBlocksPerBatch);
      for (int64_t j = 0; j < blocks; ++j) {
        const auto w = s.block(static_cast<uint64_t>(j0 + j));
        std::memcpy(words + 4 * j, w.data(), sizeof w);
      }
      batch(j0, blocks, static_cast<const uint32_t*>(words));
    }
  });
}

// Calls f(i, w) for every element i < n, where w points at the element's
// `words` words inside its counter block.
template <class F>
void for_each_element(int64_t n, int words, const PhiloxStream& s, F f) {
  const int per_block = 4 / words;
  for_each_batch(static_cast<int64_t>(blocks_for(n, words)), s, [&](int64_t j0, int64_t blocks, const uint32_t* w) {
    const int64_t first = j0 * per_block;
    const int64_t count = std::min<int64_t>(blocks * per_block, n - first);
    for (int64_t t = 0; t < count; ++t) f(first + t, w + t * words);
  });
}

// v rounded to the floating element type T (half types through float).
template <class T>
inline T store_float(double v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}

template <class F>
void by_float_dtype(const Tensor& out, const char* op, F f) {
  dispatch(out.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool> || std::is_integral_v<T>) {
      throw Error(str(op, ": expected a floating point tensor, got ", dtype_name(out.dtype())));
    } else {
      f(tag);
    }
  });
}

// sin and cos of 2 pi u for u in [0, 1), without libm: u is v = 4u quarter
// turns, q = round(v) of them exactly and the rest, v - q in [-1/2, 1/2] (also
// exact), as an angle in [-pi/4, pi/4]; a polynomial there, then a rotation
// by q quarter turns. Over all 2^24 values of u the error is under 1.1e-7
// (libm's sinf of float(2 pi) * u, used before, was off by up to 4.1e-7).
// Branch-free, so the loop vectorizes.
inline void sincos_turns(float u, float& sine, float& cosine) {
  const float v = 4.0f * u;
  const float q = std::floor(v + 0.5f);
  const float x = 1.57079632679489662f * (v - q);
  const float x2 = x * x;
  const float s = x + x * x2 * (-1.6666654611e-1f + x2 * (8.3321608736e-3f + x2 * -1.9515295891e-4f));
  const float c = 1.0f - 0.5f * x2 +
                  x2 * x2 * (4.166664568298827e-2f + x2 * (-1.388731625493765e-3f + x2 * 2.443315711809948e-5f));
  const int32_t k = static_cast<int32_t>(q);  // sin(x + k pi/2), cos(x + k pi/2)
  const float s_rot = (k & 1) ? c : s, c_rot = (k & 1) ? s : c;
  sine = (k & 2) ? -s_rot : s_rot;
  cosine = ((k + 1) & 2) ? -c_rot : c_rot;
}

// normal_ for float32 and the half types: the stream layout of normal() (two
// pairs per counter block), drawn a batch of blocks at a time: the words
// first, then Box-Muller in a loop the compiler vectorizes (fast::log,
// sincos_turns), where libm's scalar logf, cosf and sinf took most of the time.
template <class T>
void normal_single(T* p, int64_t n, double mean, double std, const PhiloxStream& s) {
  const int64_t nblocks = static_cast<int64_t>(blocks_for(n + (n & 1), 1));
  for_each_batch(nblocks, s, [&](int64_t j0, int64_t blocks, const uint32_t* words) {
    float z[2 * kPairsPerBatch];
    const int pairs = static_cast<int>(2 * blocks);  // pair k: words 2k (u1) and 2k + 1 (u2)
    for (int k = 0; k < pairs; ++k) {
      const float u1 = static_cast<float>(unit24(words[2 * k])), u2 = static_cast<float>(unit24(words[2 * k + 1]));
      const float r = std::sqrt(-2.0f * fast::log(1.0f - u1));  // 1 - u1 is in (0, 1]
      float sine, cosine;
      sincos_turns(u2, sine, cosine);
      z[2 * k] = r * cosine;
      z[2 * k + 1] = r * sine;
    }
    const int64_t first = 4 * j0;  // pair 2 * j0's first element
    const int64_t count = std::min<int64_t>(2 * pairs, n - first);
    for (int64_t t = 0; t < count; ++t) p[first + t] = store_float<T>(std::fma(std, static_cast<double>(z[t]), mean));
  });
}

}  // namespace

void uniform(Tensor& out, double from, double to, const PhiloxStream& s) {
  by_float_dtype(out, "uniform_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    const int words = uniform_words(out.dtype());
    const double range = to - from;
    for_each_element(out.numel(), words, s, [&](int64_t i, const uint32_t* w) {
      const double u = words == 2 ? unit53(w[0], w[1]) : unit24(w[0]);
      // One rounding (std::fma), as the CUDA kernel: the bits for a seed must not
      // depend on whether the compiler contracts from + range * u.
      T v = store_float<T>(std::fma(range, u, from));
      // Rounding to T may land on `to`; keep the interval half-open.
      if (range > 0 && static_cast<double>(static_cast<float>(v)) >= to && !std::is_same_v<T, double>) {
        v = store_float<T>(from);
      }
      p[i] = v;
    });
  });
}

void normal(Tensor& out, double mean, double std, const PhiloxStream& s) {
  by_float_dtype(out, "normal_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    const int64_t n = out.numel();
    if constexpr (!std::is_same_v<T, double>) {
      normal_single(p, n, mean, std, s);
    } else {
      // Box-Muller on pairs (2k, 2k+1): pair k takes the 53-bit uniforms of
      // counter block k and gives r cos(theta) to element 2k, r sin(theta) to 2k + 1.
      const int64_t nblocks = static_cast<int64_t>(blocks_for(n + (n & 1), 2));
      parallel_for(0, nblocks, kGrainBlocks, [&](int64_t b, int64_t e) {
        for (int64_t j = b; j < e; ++j) {
          const auto w = s.block(static_cast<uint64_t>(j));
          const int64_t i = 2 * j;
          const double u1 = unit53(w[0], w[1]), u2 = unit53(w[2], w[3]);
          const double r = std::sqrt(-2.0 * std::log(1.0 - u1));  // 1 - u1 is in (0, 1]
          const double theta = 2 * M_PI * u2;
          p[i] = std::fma(std, r * std::cos(theta), mean);
          if (i + 1 < n) p[i + 1] = std::fma(std, r * std::sin(theta), mean);
        }
      });
    }
  });
}

void randint(Tensor& out, int64_t low, uint64_t range, const PhiloxStream& s) {
  dispatch(out.dtype(), "randint", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    const int words = range == 0 ? 2 : randint_words(range);
    for_each_element(out.numel(), words, s, [&](int64_t i, const uint32_t* w) {
      const uint64_t x = words == 2 ? (static_cast<uint64_t>(w[0]) << 32) | w[1] : w[0];
      const uint64_t v = static_cast<uint64_t>(low) + (range == 0 ? x : x % range);
      const auto sv = static_cast<int64_t>(v);
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) p[i] = T(static_cast<float>(sv));
      else p[i] = static_cast<T>(sv);
    });
  });
}

void bernoulli(Tensor& out, const Tensor& prob, const PhiloxStream& s) {
  const double* pr = prob.data<double>();
  dispatch(out.dtype(), "bernoulli", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    for_each_element(out.numel(), 1, s, [&](int64_t i, const uint32_t* w) {
      p[i] = static_cast<T>(unit32(w[0]) < pr[i] ? 1.0f : 0.0f);
    });
  });
}

void bernoulli(Tensor& out, double prob, const PhiloxStream& s) {
  dispatch(out.dtype(), "bernoulli_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    for_each_element(out.numel(), 1, s, [&](int64_t i, const uint32_t* w) {
      p[i] = static_cast<T>(unit32(w[0]) < prob ? 1.0f : 0.0f);
    });
  });
}

void exponential(Tensor& out, double lambd, const PhiloxStream& s) {
  by_float_dtype(out, "exponential_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    const int words = uniform_words(out.dtype());
    for_each_element(out.numel(), words, s, [&](int64_t i, const uint32_t* w) {
      const double u = words == 2 ? unit53(w[0], w[1]) : unit24(w[0]);
      p[i] = store_float<T>(-std::log1p(-u) / lambd);
    });
  });
}

void randperm(Tensor& out, const PhiloxStream& s) {
  const int64_t n = out.numel();
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  // Step k swaps position n-1-k with a position drawn from [0, n-1-k].
  for (int64_t k = 0; k + 1 < n; ++k) {
    const int64_t i = n - 1 - k;
    const auto w = s.block(static_cast<uint64_t>(k / 2));
    const int q = static_cast<int>(k % 2) * 2;
    const uint64_t x = (static_cast<uint64_t>(w[q]) << 32) | w[q + 1];
    std::swap(perm[i], perm[x % static_cast<uint64_t>(i + 1)]);
  }
  dispatch(out.dtype(), "randperm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) p[i] = T(static_cast<float>(perm[i]));
      else p[i] = static_cast<T>(perm[i]);
    }
  });
}

void multinomial(Tensor& out, const Tensor& probs, bool replacement, const PhiloxStream& s) {
  const int64_t rows = probs.size(0), cats = probs.size(1), k = out.size(1);
  const double* pr = probs.data<double>();
  int64_t* o = out.data<int64_t>();
  parallel_for(0, rows, 1, [&](int64_t rb, int64_t re) {
    std::vector<double> cdf(static_cast<size_t>(cats));
    std::vector<std::pair<double, int64_t>> keys(static_cast<size_t>(cats));
    for (int64_t r = rb; r < re; ++r) {
      const double* row = pr + r * cats;
      if (replacement) {
        // Sample s of row r takes the two words of element r * k + s.
        std::partial_sum(row, row + cats, cdf.begin());
        const double total = cdf.back();
        for (int64_t j = 0; j < k; ++j) {
          const uint64_t e = static_cast<uint64_t>(r * k + j);
          const auto w = s.block(e / 2);
          const int q = static_cast<int>(e % 2) * 2;
          const double u = unit53(w[q], w[q + 1]) * total;
          int64_t c = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
          while (c > 0 && (c >= cats || row[c] == 0)) --c;  // never pick a zero-probability category
          o[r * k + j] = c;
        }
      } else {
        // Exponential races: category c finishes at E_c / p_c; the k first win.
        for (int64_t c = 0; c < cats; ++c) {
          const uint64_t e = static_cast<uint64_t>(r * cats + c);
          const auto w = s.block(e / 2);
          const int q = static_cast<int>(e % 2) * 2;
          const double t = -std::log1p(-unit53(w[q], w[q + 1]));
          keys[c] = {row[c] > 0 ? t / row[c] : INFINITY, c};
        }
        std::partial_sort(keys.begin(), keys.begin() + k, keys.end());
        for (int64_t j = 0; j < k; ++j) o[r * k + j] = keys[j].second;
      }
    }
  });
}

}  // namespace ember::cpu
