#include <ember/core/cpu/copy.h>

#include <algorithm>
#include <cstring>

#include <ember/core/cpu/element_bytes.h>
#include <ember/core/cpu/loops.h>
#include <ember/core/cpu/parallel.h>

namespace ember::cpu {

namespace {
// Contiguous copies up to this many bytes run on one thread (measured: a
// 360 KB copy took longer when split in two).
constexpr int64_t kParallelCopyBytes = int64_t{1} << 20;

// Half types convert through float; everything else casts directly.
template <class D, class S>
inline D convert(S v) {
  if constexpr (std::is_same_v<D, bool>) {
    if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) return static_cast<float>(v) != 0.0f;
    else return v != S(0);
  } else if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
    return static_cast<D>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
    return D(static_cast<float>(v));
  } else {
    return static_cast<D>(v);
  }
}

// dst (contiguous) = src, where src's second-to-last dim is the contiguous
// one (x.t(), x.transpose(-2, -1), NCHW -> NHWC permutes): each [R, C]
// matrix is copied in 32 x 32 tiles (in parallel), instead of striding
// through src for every element. Leading dims take src's strides as they are.
template <class B>
void transposed_copy(B* dst, const B* src, const Shape& shape, const Strides& strides) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  const int64_t R = shape[nd - 2], C = shape[nd - 1], sc = strides[nd - 1];
  const int64_t batches = R * C == 0 ? 0 : numel_of(shape) / (R * C);
  constexpr int64_t kTile = 32;
  const int64_t row_tiles = (R + kTile - 1) / kTile;
  parallel_for(0, batches * row_tiles, std::max<int64_t>(1, kElementwiseGrain / (kTile * std::max<int64_t>(C, 1))),
               [&](int64_t b, int64_t e) {
    for (int64_t job = b; job < e; ++job) {
      const int64_t batch = job / row_tiles, r0 = job % row_tiles * kTile, r1 = std::min(R, r0 + kTile);
      int64_t base = 0;  // src offset of this batch's matrix
      for (int64_t d = nd - 3, rest = batch; d >= 0; --d) {
        base += rest % shape[d] * strides[d];
        rest /= shape[d];
      }
      B* out = dst + batch * R * C;
      const B* in = src + base;
      for (int64_t c0 = 0; c0 < C; c0 += kTile) {
        const int64_t c1 = std::min(C, c0 + kTile);
        if (r1 - r0 == kTile && c1 - c0 == kTile) {
          // A full tile in 8 x 8 blocks through a local block: eight contiguous
          // reads of src's columns, eight contiguous writes of dst's rows (the
          // compiler shuffles in registers), so no more than eight lines of
          // each side are live, whatever power of two the strides are.
          for (int64_t bc = 0; bc < kTile; bc += 8) {
            for (int64_t br = 0; br < kTile; br += 8) {
              B block[8][8];
              for (int c = 0; c < 8; ++c) {
                const B* col = in + r0 + br + (c0 + bc + c) * sc;
                for (int r = 0; r < 8; ++r) block[r][c] = col[r];
              }
              for (int r = 0; r < 8; ++r) {
                B* o = out + (r0 + br + r) * C + c0 + bc;
                for (int c = 0; c < 8; ++c) o[c] = block[r][c];
              }
            }
          }
          continue;
        }
        for (int64_t c = c0; c < c1; ++c) {
          for (int64_t r = r0; r < r1; ++r) out[r * C + c] = in[r + c * sc];
        }
      }
    }
  });
}

bool transposed_layout(const Tensor& dst, const Tensor& src) {
  const int64_t nd = src.dim();
  return nd >= 2 && dst.dtype() == src.dtype() && dst.is_contiguous() && dst.shape() == src.shape() &&
         src.stride(nd - 2) == 1 && src.stride(nd - 1) > 1 && src.size(nd - 2) > 1 && dst.numel() >= 4096;
}

// dst (contiguous) = src whose last dim is a broadcast (stride 0, k >= 2
// elements) of a contiguous block: x.unsqueeze(-1).expand(..., k), as
// repeat_interleave with an int count makes. Each source element is written
// k times in a row (k = 2, 3, 4 unrolled); the iterator's per-row cost
// dominated short rows, and it was slower at every k measured up to 256.
template <class B, int K>
void repeat_each(B* dst, const B* src, int64_t n, int64_t k) {
  const int64_t reps = K > 0 ? K : k;  // K: a count known at compile time
  parallel_for(0, n, std::max<int64_t>(1, kElementwiseGrain / reps), [dst, src, reps](int64_t b, int64_t e) {
    B* const o = dst;  // locals: stores through o cannot change them
    const B* const s = src;
    for (int64_t i = b; i < e; ++i) {
      const B v = s[i];
      for (int64_t j = 0; j < reps; ++j) o[i * reps + j] = v;
    }
  });
}

bool repeated_layout(const Tensor& dst, const Tensor& src) {
  const int64_t nd = src.dim();
  if (nd < 2 || dst.dtype() != src.dtype() || !dst.is_contiguous() || dst.shape() != src.shape()) return false;
  const int64_t k = src.size(nd - 1);
  if (src.stride(nd - 1) != 0 || k < 2 || dst.numel() < 4096) return false;
  int64_t expected = 1;  // the leading dims: one contiguous block
  for (int64_t d = nd - 2; d >= 0; --d) {
    if (src.size(d) != 1 && src.stride(d) != expected) return false;
    expected *= src.size(d);
  }
  return true;
}

}  // namespace

bool copy_layout(Tensor& dst, const Tensor& src) {
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() && dst.shape() == src.shape()) {
    // Large copies are split across threads: one core does not reach the
    // memory bandwidth that two (or more) do.
    auto* out = static_cast<char*>(dst.data_ptr());
    const auto* in = static_cast<const char*>(src.data_ptr());
    parallel_for(0, dst.numel() * dst.element_size(), kParallelCopyBytes, [out, in](int64_t b, int64_t e) {
      std::memcpy(out + b, in + b, e - b);
    });
    return true;
  }
  if (transposed_layout(dst, src)) {
    dispatch_size(dst.element_size(), [&](auto tag) {
      using B = decltype(tag);
      transposed_copy(static_cast<B*>(dst.data_ptr()), static_cast<const B*>(src.data_ptr()), src.shape(),
                      src.strides());
    });
    return true;
  }
  if (repeated_layout(dst, src)) {
    dispatch_size(dst.element_size(), [&](auto tag) {
      using B = decltype(tag);
      const int64_t k = src.size(src.dim() - 1), n = dst.numel() / k;
      auto* out = static_cast<B*>(dst.data_ptr());
      const auto* in = static_cast<const B*>(src.data_ptr());
      if (k == 2) return repeat_each<B, 2>(out, in, n, k);
      if (k == 3) return repeat_each<B, 3>(out, in, n, k);
      if (k == 4) return repeat_each<B, 4>(out, in, n, k);
      return repeat_each<B, 0>(out, in, n, k);
    });
    return true;
  }
  return false;
}

void copy(Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0 || copy_layout(dst, src)) return;
  dispatch(dst.dtype(), "copy_", [&](auto dtag) {
    using D = typename decltype(dtag)::type;
    dispatch(src.dtype(), "copy_", [&](auto stag) {
      using S = typename decltype(stag)::type;
      if (dst.numel() == 1) {  // scalars (casts of Python numbers): skip the iterator
        *dst.data<D>() = convert<D>(*src.data<S>());
        return;
      }
      map<D, S>(TensorIterator({dst, src}), [](S v) { return convert<D>(v); });
    });
  });
}

}  // namespace ember::cpu
