// Folding reductions (sum, mean, prod, max, min, all, any) over the middle
// axis of a contiguous [outer, reduced, inner] block.
//
// inner == 1 (reducing the last dims, or all of them) is the hot path: each
// row is folded with several independent lanes so the loop vectorizes; when
// there are fewer rows than threads, one row is split across threads.
// inner > 1 accumulates whole rows of `inner` elements (vectorizes over inner).
#include <ember/core/cpu/reduce.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include <ember/core/cpu/parallel.h>
#include <ember/core/cpu/vec_lanes.h>

namespace ember::cpu {

namespace {

// Folds p[0..n) with L independent lanes, then merges them.
template <int L, class Op, class T>
typename Op::Acc fold_lanes(const Op& op, const T* p, int64_t n) {
  using A = typename Op::Acc;
  A lanes[L];
  for (int l = 0; l < L; ++l) lanes[l] = op.init();
  int64_t r = 0;
  for (; r + L <= n; r += L) {
    for (int l = 0; l < L; ++l) lanes[l] = op.step(lanes[l], p[r + l]);
  }
  A acc = op.init();
  for (int l = 0; l < L; ++l) acc = op.merge(acc, lanes[l]);
  for (; r < n; ++r) acc = op.step(acc, p[r]);
  return acc;
}

// Op: Acc, init(), step(Acc, T), merge(Acc, Acc), row(p, n) -> Acc, finish(Acc) -> O.
template <class T, class O, class Op>
void fold(O* out, const T* x, int64_t outer, int64_t reduced, int64_t inner, const Op& op) {
  using A = typename Op::Acc;
  if (inner == 1) {
    const int threads = get_num_threads();
    if (outer < threads && reduced > kElementwiseGrain) {
      // Few long rows (sum of everything): split each row across threads.
      const int64_t chunks = std::min<int64_t>(threads, reduced / (kElementwiseGrain / 2));
      // One element per thread, each its own object: not std::vector<bool>,
      // whose packed bits threads would write through one shared word (all()
      // and any() came back false or true at random).
      std::unique_ptr<A[]> part(new A[chunks]);
      for (int64_t o = 0; o < outer; ++o) {
        const T* row = x + o * reduced;
        parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
          for (int64_t c = b; c < e; ++c) {
            const int64_t r0 = reduced * c / chunks, r1 = reduced * (c + 1) / chunks;
            part[c] = op.row(row + r0, r1 - r0);
          }
        });
        A acc = op.init();
        for (int64_t c = 0; c < chunks; ++c) acc = op.merge(acc, part[c]);
        out[o] = op.finish(acc);
      }
      return;
    }
    parallel_for(0, outer, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(reduced, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t o = b; o < e; ++o) out[o] = op.finish(op.row(x + o * reduced, reduced));
                 });
    return;
  }
  // Columns in chunks with a local accumulator that stays in L1 and that the
  // compiler vectorizes over, while the rows stream through in long runs;
  // (outer, chunk) pairs run in parallel. With few outer blocks the chunks get
  // narrower so every thread has one.
  constexpr int64_t kMaxChunk = 1024;
  const int threads = get_num_threads();
  int64_t chunk = kMaxChunk;
  if (outer < threads) chunk = std::clamp<int64_t>((inner / threads + 15) / 16 * 16, 16, kMaxChunk);
  const int64_t chunks = (inner + chunk - 1) / chunk;
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(reduced * chunk, 1));
  parallel_for(0, outer * chunks, grain, [&](int64_t b, int64_t e) {
    A acc[kMaxChunk];
    for (int64_t job = b; job < e; ++job) {
      const int64_t o = job / chunks, i0 = (job % chunks) * chunk, w = std::min(chunk, inner - i0);
      for (int64_t i = 0; i < w; ++i) acc[i] = op.init();
      const T* col = x + o * reduced * inner + i0;
      for (int64_t r = 0; r < reduced; ++r) {
        const T* row = col + r * inner;
        for (int64_t i = 0; i < w; ++i) acc[i] = op.step(acc[i], row[i]);
      }
      O* dst = out + o * inner + i0;
      for (int64_t i = 0; i < w; ++i) dst[i] = op.finish(acc[i]);
    }
  });
}

template <class T> constexpr bool kFloat = std::is_floating_point_v<T>;

// Sum (and mean, via scale). Floats accumulate in double across blocks; a
// float32 block is summed in 16 float lanes (4 SSE / 2 AVX registers), which
// is where the time goes, then added to the double total. Integers accumulate
// in uint64_t, whose overflow wraps around where int64_t's would be undefined:
// the low bits are PyTorch's and numpy's wrapped int64 sum.
template <class T>
struct SumOp {
  using Acc = std::conditional_t<kFloat<T>, double, uint64_t>;
  double scale = 1.0;
  Acc init() const { return 0; }
  Acc step(Acc a, T v) const { return a + static_cast<Acc>(v); }
  Acc merge(Acc a, Acc b) const { return a + b; }
  Acc row(const T* p, int64_t n) const {
    if constexpr (std::is_same_v<T, float>) {
      constexpr int64_t kBlock = 4096;  // float lanes stay accurate over a block
      double total = 0;
      for (int64_t b = 0; b < n; b += kBlock) {
        const int64_t m = std::min(kBlock, n - b);
        const float* q = p + b;
        float lanes[16] = {};
        int64_t r = 0;
        for (; r + 16 <= m; r += 16) {
          for (int l = 0; l < 16; ++l) lanes[l] += q[r + l];
        }
        float s = 0;
        for (int l = 0; l < 16; ++l) s += lanes[l];
        for (; r < m; ++r) s += q[r];
        total += s;
      }
      return total;
    } else {
      return fold_lanes<16>(*this, p, n);
    }
  }
  T finish(Acc a) const {
    if constexpr (kFloat<T>) return static_cast<T>(scale == 1.0 ? a : a * scale);
    else return static_cast<T>(a);
  }
};

template <class T>
struct ProdOp {
  // Integer products run in uint64_t, so they wrap like PyTorch's int64 instead of overflowing (UB).
  using Acc = std::conditional_t<kFloat<T>, double, uint64_t>;
  Acc init() const { return 1; }
  Acc step(Acc a, T v) const { return a * static_cast<Acc>(v); }
  Acc merge(Acc a, Acc b) const { return a * b; }
  Acc row(const T* p, int64_t n) const { return fold_lanes<8>(*this, p, n); }
  T finish(Acc a) const { return static_cast<T>(a); }
};

// Max/min with NaN propagation: once an accumulator is NaN it stays NaN.
template <class T, bool IsMax>
struct ExtremeOp {
  using Acc = T;
  // The identity: -inf / +inf for floats, the type's limits otherwise.
  Acc init() const {
    if constexpr (kFloat<T>) return IsMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else return IsMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  Acc step(Acc a, T v) const {
    const bool better = IsMax ? v > a : v < a;
    if constexpr (kFloat<T>) return (better || v != v) ? v : a;
    else return better ? v : a;
  }
  Acc merge(Acc a, Acc b) const { return step(a, b); }
  Acc row(const T* p, int64_t n) const {
    if constexpr (kFloat<T>) {
      // In explicit vector lanes with a separate NaN mask: the NaN-propagating
      // step above does not vectorize.
      bool nan = false;
      const T r = lanes::extreme<IsMax>(p, n, nan);
      return nan ? std::numeric_limits<T>::quiet_NaN() : r;
    } else {
      return fold_lanes<16>(*this, p, n);
    }
  }
  T finish(Acc a) const { return a; }
};

template <class T, bool IsAll>
struct LogicalOp {
  using Acc = bool;
  Acc init() const { return IsAll; }
  Acc step(Acc a, T v) const { return IsAll ? (a && v != T(0)) : (a || v != T(0)); }
  Acc merge(Acc a, Acc b) const { return IsAll ? (a && b) : (a || b); }
  Acc row(const T* p, int64_t n) const { return fold_lanes<8>(*this, p, n); }
  bool finish(Acc a) const { return a; }
};

}  // namespace

void reduce(ReduceOp op, Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner) {
  static const char* names[] = {"sum", "mean", "prod", "max", "min", "all", "any"};
  const char* name = names[static_cast<int>(op)];
  dispatch_math(x.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    switch (op) {
      case ReduceOp::All: return fold(out.data<bool>(), in, outer, reduced, inner, LogicalOp<T, true>{});
      case ReduceOp::Any: return fold(out.data<bool>(), in, outer, reduced, inner, LogicalOp<T, false>{});
      case ReduceOp::Max:
      case ReduceOp::Min: {
        if (op == ReduceOp::Max) return fold(out.data<T>(), in, outer, reduced, inner, ExtremeOp<T, true>{});
        return fold(out.data<T>(), in, outer, reduced, inner, ExtremeOp<T, false>{});
      }
      default: break;
    }
    if constexpr (std::is_same_v<T, bool>) {
      throw TypeError(str(name, ": bool inputs are reduced as int64; convert first"));
    } else {
      T* o = out.data<T>();
      if (op == ReduceOp::Prod) return fold(o, in, outer, reduced, inner, ProdOp<T>{});
      SumOp<T> sum;
      if (op == ReduceOp::Mean) sum.scale = 1.0 / static_cast<double>(reduced);
      return fold(o, in, outer, reduced, inner, sum);
    }
  });
}

}  // namespace ember::cpu
