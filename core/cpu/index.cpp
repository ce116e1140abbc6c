// CPU kernels of the index family: data-dependent addressing over strided
// views (see core/cpu/strided_loop.h).
#include <ember/core/cpu/index.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>

#include <ember/core/cpu/element_bytes.h>
#include <ember/core/cpu/parallel.h>
#include <ember/core/cpu/strided_loop.h>
#include <ember/core/error.h>
#include <ember/core/int_math.h>

namespace ember::cpu {

namespace {

// Offset (in elements) that the indices add at one position.
struct IndexOffsets {
  std::vector<const int64_t*> data;
  std::vector<int64_t> strides;
  std::vector<int64_t> sizes;

  // The offset index k's value v adds (negative values count from the end).
  int64_t of(size_t k, int64_t v) const { return (v < 0 ? v + sizes[k] : v) * strides[k]; }

  int64_t at(const int64_t* offs) const {  // offs[k] is index k's element offset
    int64_t o = 0;
    for (size_t k = 0; k < data.size(); ++k) o += of(k, data[k][offs[k]]);
    return o;
  }
};

// The element offset of index value v in a dim of n elements `stride` apart,
// for reads that check as they go: a value outside [0, n) ([-n, n) when
// negatives wrap) clears `ok` and reads element 0 instead.
inline int64_t checked_offset(int64_t v, int64_t n, int64_t stride, bool negatives_wrap, bool& ok) {
  if (negatives_wrap && v < 0) v += n;
  const bool in = static_cast<uint64_t>(v) < static_cast<uint64_t>(n);
  ok &= in;
  return in ? v * stride : 0;
}

IndexOffsets index_offsets(const std::vector<Tensor>& indices, const std::vector<int64_t>& index_strides,
                           const std::vector<int64_t>& sizes) {
  IndexOffsets io;
  for (const Tensor& t : indices) io.data.push_back(t.data<int64_t>());
  io.strides = index_strides;
  io.sizes = sizes;
  return io;
}

// The strides of a, b and every index, as strided_loop takes them.
std::vector<Strides> loop_strides(const Tensor& a, const Tensor& b, const std::vector<Tensor>& indices) {
  std::vector<Strides> s{a.strides(), b.strides()};
  for (const Tensor& t : indices) s.push_back(t.strides());
  return s;
}

}  // namespace

bool index_gather(Tensor& out, const Tensor& src, const std::vector<Tensor>& indices,
                  const std::vector<int64_t>& index_strides, const std::vector<int64_t>& sizes, bool negatives_wrap) {
  const IndexOffsets io = index_offsets(indices, index_strides, sizes);
  const size_t nk = indices.size();
  std::atomic<bool> all_in_range{true};
  dispatch_size(out.element_size(), [&](auto tag) {
    using B = decltype(tag);
    B* o = static_cast<B*>(out.data_ptr());
    const B* s = static_cast<const B*>(src.data_ptr());
    // Each output element is written once: rows run in parallel.
    strided_rows_parallel(out.shape(), loop_strides(out, src, indices), kElementwiseGrain,
                          [&](const int64_t* offs, int64_t n, const int64_t* step) {
      bool ok = true;
      // The offset all indices add at loop offsets `at` (at[k] is index k's).
      auto offset_at = [&](const int64_t* at) {
        int64_t off = 0;
        for (size_t k = 0; k < nk; ++k) off += checked_offset(io.data[k][at[k]], sizes[k], index_strides[k],
                                                              negatives_wrap, ok);
        return off;
      };
      bool fixed = true;  // the indices are constant along the row (index_select, x[idx] on leading dims)
      for (size_t k = 0; k < nk; ++k) fixed = fixed && step[2 + k] == 0;
      if (fixed) {
        B* orow = o + offs[0];
        const B* srow = s + offs[1] + offset_at(offs + 2);
        if (step[0] == 1 && step[1] == 1) {
          std::memcpy(orow, srow, n * sizeof(B));
        } else if (step[0] == 1 && step[1] == -1) {  // flip along the last dim: a reversed row, vectorizes
          for (int64_t i = 0; i < n; ++i) orow[i] = srow[-i];
        } else {
          for (int64_t i = 0; i < n; ++i) orow[i * step[0]] = srow[i * step[1]];
        }
      } else if (nk == 1) {  // gather, take_along_dim, x[idx] on the last dim: one index, no vectors
        B* orow = o + offs[0];
        const B* srow = s + offs[1];
        const int64_t* irow = io.data[0] + offs[2];
        const int64_t so = step[0], ss = step[1], si = step[2], size = sizes[0], stride = index_strides[0];
        if (so == 1 && si == 1 && ss == 0 && !negatives_wrap) {
          // Gather along a contiguous last dim: each block of indices is
          // checked in one vector pass, then read without per-element tests.
          constexpr int64_t kBlock = 256;
          for (int64_t b = 0; b < n; b += kBlock) {
            const int64_t e = std::min(n, b + kBlock);
            // Too large, or negative (the sign bit), or-ed as integers: this
            // form vectorized best of those measured.
            uint64_t bad = 0;
            for (int64_t i = b; i < e; ++i)
              bad |= static_cast<uint64_t>(irow[i] >= size) | (static_cast<uint64_t>(irow[i]) >> 63);
            if (bad) {
              for (int64_t i = b; i < e; ++i) orow[i] = srow[checked_offset(irow[i], size, stride, false, ok)];
            } else {
              for (int64_t i = b; i < e; ++i) orow[i] = srow[irow[i] * stride];
            }
          }
        } else {
          for (int64_t i = 0; i < n; ++i)
            orow[i * so] = srow[i * ss + checked_offset(irow[i * si], size, stride, negatives_wrap, ok)];
        }
      } else {
        std::vector<int64_t> cur(offs, offs + 2 + nk);
        for (int64_t i = 0; i < n; ++i) {
          o[cur[0]] = s[cur[1] + offset_at(cur.data() + 2)];
          for (size_t k = 0; k < cur.size(); ++k) cur[k] += step[k];
        }
      }
      if (!ok) all_in_range.store(false, std::memory_order_relaxed);
    });
  });
  return all_in_range.load();
}

void index_select_blocks(Tensor& out, const Tensor& x, int64_t dim, const Tensor& index) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  const int64_t n = x.size(dim), k = index.numel();
  const int64_t* idx = index.data<int64_t>();
  dispatch_size(out.element_size(), [&](auto tag) {
    using B = decltype(tag);
    B* const o = static_cast<B*>(out.data_ptr());
    const B* const s = static_cast<const B*>(x.data_ptr());
    parallel_for(0, outer * k, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(inner, 1)),
                 [&](int64_t b, int64_t e) {
      // Block j copies x's block (j / k, idx[j % k]), counted without divisions.
      for (int64_t j = b, outer_at = b / k, i = b % k; j < e; ++j) {
        const B* from = s + (outer_at * n + idx[i]) * inner;
        B* to = o + j * inner;
        if (inner <= 16) {  // short blocks: a call to memcpy costs more than the copy
          for (int64_t t = 0; t < inner; ++t) to[t] = from[t];
        } else {
          std::memcpy(to, from, inner * sizeof(B));
        }
        if (++i == k) {
          i = 0;
          ++outer_at;
        }
      }
    });
  });
}

namespace {
// Calls put(dst element, value) for every element of values, at the element
// of dst its indices name: one index (scatter, index_add, embedding's
// backward, x[idx] on one dim) in a tight row loop, several in the general walk.
template <class T, class Put>
void scatter_each(T* d, const T* v, const Tensor& dst, const Tensor& values, const std::vector<Tensor>& indices,
                  const IndexOffsets& io, const Put& put) {
  if (indices.size() == 1) {
    strided_rows(values.shape(), loop_strides(dst, values, indices),
                 [&](const int64_t* offs, int64_t n, const int64_t* step) {
      T* drow = d + offs[0];
      const T* vrow = v + offs[1];
      const int64_t* irow = io.data[0] + offs[2];
      const int64_t sd = step[0], sv = step[1], si = step[2];
      if (si == 0 && sd == 1 && (sv == 1 || sv == 0)) {
        // One index for a contiguous row (index_add, x[idx] += v, embedding's
        // backward), values contiguous or one broadcast value: vectorizes.
        T* d = drow + io.of(0, irow[0]);
        if (sv == 1) {
          for (int64_t i = 0; i < n; ++i) put(d[i], vrow[i]);
        } else {
          const T v0 = vrow[0];
          for (int64_t i = 0; i < n; ++i) put(d[i], v0);
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) put(drow[i * sd + io.of(0, irow[i * si])], vrow[i * sv]);
    });
    return;
  }
  strided_loop(values.shape(), loop_strides(dst, values, indices),
               [&](const int64_t* offs) { put(d[offs[0] + io.at(offs + 2)], v[offs[1]]); });
}
}  // namespace

void index_scatter(Tensor& dst, const Tensor& values, const std::vector<Tensor>& indices,
                   const std::vector<int64_t>& index_strides, const std::vector<int64_t>& sizes,
                   bool accumulate) {
  const IndexOffsets io = index_offsets(indices, index_strides, sizes);
  if (!accumulate) {
    dispatch_size(dst.element_size(), [&](auto tag) {
      using B = decltype(tag);
      scatter_each(static_cast<B*>(dst.data_ptr()), static_cast<const B*>(values.data_ptr()), dst, values, indices,
                   io, [](B& slot, const B& x) { slot = x; });
    });
    return;
  }
  dispatch(dst.dtype(), "index_put_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    scatter_each(dst.data<T>(), values.data<T>(), dst, values, indices, io, [](T& slot, T x) {
      if constexpr (std::is_same_v<T, bool>) slot = slot || x;
      else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
        slot = T(static_cast<float>(slot) + static_cast<float>(x));
      else slot = int_math::wrapping_add(slot, x);  // integers wrap around, as in PyTorch
    });
  });
}

void check_index_range(const Tensor& index, int64_t size, int64_t dim, const char* op, bool allow_negative,
                       RangeError kind) {
  const int64_t low = allow_negative ? -size : 0;
  const auto [lo, hi] = min_max(index);  // one vectorized pass; the offender is looked for only on failure
  if (lo >= low && hi < size) return;
  const int64_t* p = index.data<int64_t>();
  strided_loop(index.shape(), {index.strides()}, [&](const int64_t* offs) {
    const int64_t v = p[offs[0]];
    if (v >= low && v < size) return;
    const std::string msg = str(op, ": index ", v, " is out of bounds for dimension ", dim, " with size ", size);
    if (kind == RangeError::Index) throw IndexError(msg);
    throw Error(msg);
  });
}

std::pair<int64_t, int64_t> min_max(const Tensor& index) {
  const int64_t* p = index.data<int64_t>();
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  strided_rows(index.shape(), {index.strides()}, [&](const int64_t* offs, int64_t n, const int64_t* step) {
    const int64_t* row = p + offs[0];
    if (step[0] == 1) {
      for (int64_t i = 0; i < n; ++i) {
        lo = std::min(lo, row[i]);
        hi = std::max(hi, row[i]);
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        lo = std::min(lo, row[i * step[0]]);
        hi = std::max(hi, row[i * step[0]]);
      }
    }
  });
  return {lo, hi};
}

namespace {
template <class T>
inline bool is_nonzero(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return static_cast<float>(v) != 0.0f;
  else return v != T(0);
}

template <class F>
void for_each_nonzero(const Tensor& x, F&& f) {
  dispatch(x.dtype(), "nonzero", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = x.data<T>();
    strided_loop(x.shape(), {x.strides()}, [&](const int64_t* offs) {
      if (is_nonzero(p[offs[0]])) f();
      else f.skip();
    });
  });
}
}  // namespace

int64_t count_nonzero(const Tensor& x) {
  if (x.is_contiguous()) {  // one branch-free pass the compiler vectorizes
    return dispatch(x.dtype(), "nonzero", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* p = x.data<T>();
      int64_t n = 0;
      for (int64_t i = 0, e = x.numel(); i < e; ++i) n += is_nonzero(p[i]);
      return n;
    });
  }
  struct Count {
    int64_t n = 0;
    void operator()() { ++n; }
    void skip() {}
  } c;
  for_each_nonzero(x, c);
  return c.n;
}

namespace {

// Two-pass compaction over [0, n) on the threads: count(b, e) is how many
// items [b, e) yields; once alloc(total) has made room, write(b, e, first,
// last) writes them to positions [first, last) (earlier chunks' come before).
template <class Count, class Alloc, class Write>
void compact(int64_t n, const Count& count, const Alloc& alloc, const Write& write) {
  const int64_t chunks = std::clamp<int64_t>(n / kElementwiseGrain, 1, get_num_threads());
  std::vector<int64_t> first(static_cast<size_t>(chunks) + 1, 0);
  parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) first[c + 1] = count(n * c / chunks, n * (c + 1) / chunks);
  });
  for (int64_t c = 0; c < chunks; ++c) first[c + 1] += first[c];
  alloc(first[chunks]);
  parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) write(n * c / chunks, n * (c + 1) / chunks, first[c], first[c + 1]);
  });
}

template <class T>
int64_t count_in(const T* p, int64_t b, int64_t e) {
  int64_t n = 0;
  for (int64_t i = b; i < e; ++i) n += is_nonzero(p[i]);  // branch-free: vectorizes
  return n;
}

}  // namespace

Tensor nonzero(const Tensor& x) {
  const int64_t nd = x.dim();
  Tensor out;
  if (x.numel() == 0) return empty({0, nd}, DType::Int64, x.device());
  if (!x.is_contiguous() || nd == 0) {
    out = empty({count_nonzero(x), nd}, DType::Int64, x.device());
    // Walks x in row-major order keeping its coordinates alongside.
    struct Writer {
      const Shape* shape;
      std::vector<int64_t> coord;
      int64_t* o;
      void advance() {
        for (int64_t d = static_cast<int64_t>(coord.size()) - 1; d >= 0; --d) {
          if (++coord[d] < (*shape)[d]) return;
          coord[d] = 0;
        }
      }
      void operator()() {
        for (int64_t c : coord) *o++ = c;
        advance();
      }
      void skip() { advance(); }
    } w{&x.shape(), std::vector<int64_t>(nd, 0), out.data<int64_t>()};
    for_each_nonzero(x, w);
    return out;
  }
  dispatch(x.dtype(), "nonzero", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = x.data<T>();
    const int64_t inner = x.size(nd - 1);
    compact(
        x.numel(), [&](int64_t b, int64_t e) { return count_in(p, b, e); },
        [&](int64_t total) { out = empty({total, nd}, DType::Int64, x.device()); },
        [&](int64_t b, int64_t e, int64_t first, int64_t) {
          // The coordinates of element b; then the last one steps along each row
          // and the outer ones advance once per row.
          std::vector<int64_t> outer(static_cast<size_t>(nd - 1));
          int64_t rest = b / inner;
          for (int64_t d = nd - 2; d >= 0; --d) {
            outer[d] = rest % x.size(d);
            rest /= x.size(d);
          }
          int64_t* o = out.data<int64_t>() + first * nd;
          int64_t j = b % inner;
          for (int64_t i = b; i < e; ++i) {
            if (is_nonzero(p[i])) {
              for (int64_t c : outer) *o++ = c;
              *o++ = j;
            }
            if (++j < inner) continue;
            j = 0;
            for (int64_t d = nd - 2; d >= 0; --d) {
              if (++outer[d] < x.size(d)) break;
              outer[d] = 0;
            }
          }
        });
  });
  return out;
}

Tensor masked_rows(const Tensor& x, const Tensor& mask) {
  const int64_t rows = mask.numel();
  const int64_t bytes = rows == 0 ? 0 : x.numel() / rows * static_cast<int64_t>(x.element_size());
  // Read as bytes: a bool tensor viewed from other data may hold values other than 0 and 1.
  const uint8_t* m = static_cast<const uint8_t*>(mask.data_ptr());
  const char* src = static_cast<const char*>(x.data_ptr());
  Shape shape(x.shape().begin() + mask.dim() - 1, x.shape().end());
  Tensor out;
  compact(
      rows, [&](int64_t b, int64_t e) { return count_in(m, b, e); },
      [&](int64_t total) {
        shape[0] = total;
        out = empty(shape, x.dtype(), x.device());
      },
      [&](int64_t b, int64_t e, int64_t first, int64_t last) {
        char* dst = static_cast<char*>(out.data_ptr()) + first * bytes;
        if (bytes == static_cast<int64_t>(x.element_size())) {
          dispatch_size(x.element_size(), [&](auto word) {
            // One element per row: a store per element, the position advancing
            // where the mask is true (no branch to mispredict). The store at
            // `end` would belong to the next chunk: the loop stops there, when
            // every element left in this chunk is unselected.
            using W = decltype(word);
            const W* s = reinterpret_cast<const W*>(src);
            W* d = reinterpret_cast<W*>(dst);
            W* const end = d + (last - first);
            for (int64_t i = b; i < e && d < end; ++i) {
              *d = s[i];
              d += m[i] != 0;
            }
          });
          return;
        }
        for (int64_t i = b; i < e; ++i) {
          if (!m[i]) continue;
          std::memcpy(dst, src + i * bytes, static_cast<size_t>(bytes));
          dst += bytes;
        }
      });
  return out;
}

}  // namespace ember::cpu
