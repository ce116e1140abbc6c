// Fused dropout on the CPU: one pass draws each element's keep bit from the
// Philox stream and writes the output and the bool mask; its backward is one
// pass of grad * (mask ? scale : 0). Layout and formulas: core/cpu/nn_misc.h.
#include <ember/core/cpu/nn_misc.h>

#include <algorithm>
#include <type_traits>

#include <ember/core/cpu/loops.h>
#include <ember/core/cpu/parallel.h>
#include <ember/core/error.h>
#include <ember/core/tensor_iterator.h>

namespace ember::cpu {

namespace {

// Counter blocks drawn together: 16 independent Philox evaluations in
// lockstep. The 32-bit words live in 64-bit lanes so that the compiler turns
// each round's 32 x 32 -> 64-bit products into vector multiplies (about 4x
// faster than 32-bit lanes, and several times faster than PhiloxStream's one
// block at a time; dropout's time is all in the draw).
constexpr int kBatch = 16;
constexpr int kBatchElements = kBatch * 4;  // one 32-bit word per element
// Batches per parallel chunk (64 elements each).
constexpr int64_t kGrainBatches = 512;

// words[4 * b + q] = word q of counter block `counter + b` under `seed`:
// PhiloxStream{seed, counter}.block(b)[q] (core/generator.h), 16 at a time.
void philox_batch(uint64_t seed, uint64_t counter, uint32_t words[kBatchElements]) {
  constexpr uint64_t kLow = 0xFFFFFFFFull;
  uint64_t c0[kBatch], c1[kBatch], c2[kBatch], c3[kBatch];
  for (int b = 0; b < kBatch; ++b) {
    const uint64_t c = counter + static_cast<uint64_t>(b);
    c0[b] = c & kLow;
    c1[b] = c >> 32;
    c2[b] = 0;
    c3[b] = 0;
  }
  uint64_t k0 = seed & kLow, k1 = seed >> 32;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 = (k0 + 0x9E3779B9ull) & kLow;
      k1 = (k1 + 0xBB67AE85ull) & kLow;
    }
    for (int b = 0; b < kBatch; ++b) {
      const uint64_t p0 = 0xD2511F53ull * (c0[b] & kLow);
      const uint64_t p1 = 0xCD9E8D57ull * (c2[b] & kLow);
      const uint64_t n0 = (p1 >> 32) ^ c1[b] ^ k0, n1 = p1 & kLow;
      const uint64_t n2 = (p0 >> 32) ^ c3[b] ^ k1, n3 = p0 & kLow;
      c0[b] = n0;
      c1[b] = n1;
      c2[b] = n2;
      c3[b] = n3;
    }
  }
  for (int b = 0; b < kBatch; ++b) {
    words[4 * b] = static_cast<uint32_t>(c0[b]);
    words[4 * b + 1] = static_cast<uint32_t>(c1[b]);
    words[4 * b + 2] = static_cast<uint32_t>(c2[b]);
    words[4 * b + 3] = static_cast<uint32_t>(c3[b]);
  }
}

// Calls f(TypeTag<T>{}) for the four floating dtypes; the half types are
// computed in float per element (storage-only types on the CPU).
template <class F>
void dispatch_dropout(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Float32: return f(TypeTag<float>{});
    case DType::Float64: return f(TypeTag<double>{});
    case DType::Float16: return f(TypeTag<Half>{});
    case DType::BFloat16: return f(TypeTag<BFloat16>{});
    default: break;
  }
  throw Error(str(op, ": expected a floating point tensor, got ", dtype_name(t)));
}

template <class T>
using ComputeType = std::conditional_t<std::is_same_v<T, double>, double, float>;

// keep ? scale : 0, as a product the loops vectorize (exact: scale is finite).
template <class C>
inline C kept_factor(bool keep, C scale) {
  return static_cast<C>(keep) * scale;
}

}  // namespace

void native_dropout(Tensor& out, Tensor& mask, const Tensor& input, uint64_t threshold, double scale,
                    const PhiloxStream& s) {
  dispatch_dropout(input.dtype(), "native_dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* x = input.data<T>();
    T* y = out.data<T>();
    bool* m = mask.data<bool>();
    const int64_t n = input.numel();
    const C kept_scale = static_cast<C>(scale);
    // w < threshold in 32-bit arithmetic, which the loop vectorizes: a
    // threshold of 2^32 (p == 0) keeps every word.
    const bool keep_all = threshold > 0xFFFFFFFFull;
    const auto bound = static_cast<uint32_t>(keep_all ? 0 : threshold);
    parallel_for(0, (n + kBatchElements - 1) / kBatchElements, kGrainBatches, [&](int64_t b, int64_t e) {
      uint32_t words[kBatchElements];
      for (int64_t batch = b; batch < e; ++batch) {
        // Blocks past the draw's last one may be evaluated here; their words go unused.
        philox_batch(s.seed, s.offset + static_cast<uint64_t>(batch) * kBatch, words);
        const int64_t first = batch * kBatchElements;
        const int count = static_cast<int>(std::min<int64_t>(kBatchElements, n - first));
        for (int k = 0; k < count; ++k) {
          const bool keep = (words[k] < bound) | keep_all;
          y[first + k] = T(static_cast<C>(x[first + k]) * kept_factor(keep, kept_scale));
          m[first + k] = keep;
        }
      }
    });
  });
}

void native_dropout_backward(Tensor& grad_input, const Tensor& grad, const Tensor& mask, double scale) {
  const TensorIterator iter({grad_input, grad, mask});
  dispatch_dropout(grad.dtype(), "native_dropout_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C kept_scale = static_cast<C>(scale);
    map<T, T, bool>(iter, [kept_scale](T g, bool keep) { return T(static_cast<C>(g) * kept_factor(keep, kept_scale)); });
  });
}

}  // namespace ember::cpu
