// sort / topk kernels. Every element becomes an unsigned "order key" whose
// integer order is PyTorch's element order (NaN above +inf, -0.0 equal to
// 0.0; descending flips the key's bits), paired with its position in the row.
// Ordering (key, position) pairs sorts stably in both directions, and pairs
// of a 32-bit key pack into one uint64 (key << 32 | position), ordered by
// plain integer compares (std::sort) or, in long rows, by a radix sort of the
// key half. Output values are read back
// from the input at the sorted positions, so they are the input's exact bits
// (NaN payloads, the sign of zero).
//
// topk keeps the best k pairs of a row in a max-heap while it scans the row
// when k is small next to n (most elements cost one compare against the
// heap's worst), and otherwise (or when too many elements enter the heap)
// partitions all pairs with nth_element and sorts the first k. Rows run in
// parallel.
#include <ember/core/cpu/sort.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <ember/core/cpu/parallel.h>
#include <ember/core/dtype.h>

namespace ember::cpu {

namespace {

// The unsigned key type of T: 32 bits for types up to 4 bytes, else 64.
template <class T>
using KeyOf = std::conditional_t<sizeof(T) <= 4, uint32_t, uint64_t>;

template <class T>
KeyOf<T> order_key(T v) {
  using K = KeyOf<T>;
  if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) {
    return static_cast<K>(v);
  } else if constexpr (std::is_integral_v<T>) {
    // Two's complement with the sign bit flipped orders as unsigned.
    using S = std::make_signed_t<K>;
    return static_cast<K>(static_cast<S>(v)) ^ (K{1} << (sizeof(K) * 8 - 1));
  } else {
    constexpr K sign = K{1} << (sizeof(K) * 8 - 1);
    if (v != v) return ~K{0};  // every NaN above +inf
    if (v == T(0)) v = T(0);   // -0.0 ties with 0.0
    K bits;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits & sign) ? ~bits : (bits | sign);  // negatives reversed, below the positives
  }
}

// The integer whose sort_key(v, flip) is `key` (sort_key's inverse).
template <class T>
T from_sort_key(uint64_t key, bool flip) {
  using K = KeyOf<T>;
  K k = static_cast<K>(key);
  if (flip) k = ~k;
  if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) {
    return static_cast<T>(k);
  } else {
    return static_cast<T>(static_cast<std::make_signed_t<K>>(k ^ (K{1} << (sizeof(K) * 8 - 1))));
  }
}

// A (key, position) pair ordered by key, then position.
struct WidePair {
  uint64_t key;
  int64_t pos;
  bool operator<(const WidePair& o) const { return key < o.key || (key == o.key && pos < o.pos); }
};

// How a row's pairs are made and read back: packed into one uint64 for
// 32-bit keys in rows of up to 2^32 elements, else WidePair.
template <class T>
uint64_t sort_key(T v, bool flip) {
  const uint64_t key = order_key(v);
  return flip ? static_cast<KeyOf<T>>(~key) : key;
}

template <class T, bool Packed>
struct Pairs {
  using Entry = std::conditional_t<Packed, uint64_t, WidePair>;
  static Entry make(T v, int64_t i, bool flip) {
    const uint64_t key = sort_key(v, flip);
    if constexpr (Packed) return (key << 32) | static_cast<uint64_t>(i);
    else return WidePair{key, i};
  }
  static int64_t pos(const Entry& e) {
    if constexpr (Packed) return static_cast<int64_t>(e & 0xffffffffu);
    else return e.pos;
  }
};

// Rows of at least this many packed pairs sort by radix (std::sort below).
constexpr int64_t kRadixRow = int64_t{1} << 12;

// A buffer of uint64 left uninitialized: a vector's resize would first zero
// what the sort then overwrites.
class Scratch {
 public:
  uint64_t* get(int64_t n) {
    if (n > size_) {
      data_.reset(new uint64_t[static_cast<size_t>(n)]);
      size_ = n;
    }
    return data_.get();
  }

 private:
  std::unique_ptr<uint64_t[]> data_;
  int64_t size_ = 0;
};

// Sorts n packed (key << 32 | position) pairs made in position order: a
// stable LSD radix sort on the key half, one 8-bit digit per pass, skipping
// digits every key shares (labels below 2^16 take two passes); one pass
// counts all four digits. Stability keeps equal keys in position order, so
// the result is std::sort's. Returns where the sorted pairs are: `entries`
// or the scratch buffer.
const uint64_t* sort_packed(uint64_t* entries, int64_t n, Scratch& scratch) {
  if (n < kRadixRow) {
    std::sort(entries, entries + n);
    return entries;
  }
  uint64_t any = 0, all = ~uint64_t{0};
  std::vector<std::array<size_t, 256>> start(4, std::array<size_t, 256>{});
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t e = entries[i];
    any |= e;
    all &= e;
    for (int d = 0; d < 4; ++d) ++start[d][(e >> (32 + 8 * d)) & 0xff];
  }
  uint64_t* from = entries;
  uint64_t* to = scratch.get(n);
  for (int d = 0; d < 4; ++d) {
    const int shift = 32 + 8 * d;
    if ((((any ^ all) >> shift) & 0xff) == 0) continue;
    size_t sum = 0;
    for (size_t& c : start[d]) sum += std::exchange(c, sum);
    for (int64_t i = 0; i < n; ++i) to[start[d][(from[i] >> shift) & 0xff]++] = from[i];
    std::swap(from, to);
  }
  return from;
}

// Writes a row's first `count` sorted entries as values and indices.
template <class T, class P>
void write_row(const typename P::Entry* entries, int64_t count, const T* in, T* vals, int64_t* idx) {
  for (int64_t j = 0; j < count; ++j) {
    const int64_t i = P::pos(entries[j]);
    idx[j] = i;
    vals[j] = in[i];
  }
}

// Rows per parallel chunk: enough elements to be worth a thread.
int64_t row_grain(int64_t n) { return std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1)); }

// A row of 64-bit keys (int64, float64) that spans less than 2^32 (e.g.
// int64 labels) sorts as packed pairs of (key - the row's least key,
// position), twice as fast as WidePairs; false when the row does not fit.
// Integer values are decoded from their keys, not read back from the row at
// random positions.
template <class T>
bool sort_narrow_row(const T* p, int64_t n, bool descending, Scratch& buf, Scratch& scratch, T* vals, int64_t* idx) {
  if (n > (int64_t{1} << 32)) return false;
  uint64_t lo = ~uint64_t{0}, hi = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t key = sort_key(p[i], descending);
    lo = std::min(lo, key);
    hi = std::max(hi, key);
  }
  if (hi - lo > 0xffffffffu) return false;
  uint64_t* entries = buf.get(n);
  for (int64_t i = 0; i < n; ++i) entries[i] = ((sort_key(p[i], descending) - lo) << 32) | static_cast<uint64_t>(i);
  const uint64_t* sorted = sort_packed(entries, n, scratch);
  for (int64_t j = 0; j < n; ++j) {
    const uint64_t e = sorted[j];
    idx[j] = static_cast<int64_t>(e & 0xffffffffu);
    if constexpr (std::is_integral_v<T>) vals[j] = from_sort_key<T>((e >> 32) + lo, descending);
    else vals[j] = p[idx[j]];  // floats keep their exact bits (NaN payloads, -0.0)
  }
  return true;
}

template <class T, bool Packed>
void sort_rows(T* vals, int64_t* idx, const T* in, int64_t rows, int64_t n, bool descending) {
  using P = Pairs<T, Packed>;
  parallel_for(0, rows, row_grain(n), [&](int64_t begin, int64_t end) {
    std::vector<typename P::Entry> entries;  // sized on first use: narrow rows never need it
    Scratch narrow, scratch;
    for (int64_t r = begin; r < end; ++r) {
      const T* p = in + r * n;
      if constexpr (!Packed) {
        if (sort_narrow_row(p, n, descending, narrow, scratch, vals + r * n, idx + r * n)) continue;
      }
      entries.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) entries[static_cast<size_t>(i)] = P::make(p[i], i, descending);
      const typename P::Entry* sorted = entries.data();
      if constexpr (Packed) sorted = sort_packed(entries.data(), n, scratch);
      else std::sort(entries.begin(), entries.end());
      write_row<T, P>(sorted, n, p, vals + r * n, idx + r * n);
    }
  });
}

// The best k entries of a row, in order, from one scan that keeps the best k
// so far in a max-heap (its front is the worst kept): most elements cost one
// compare. Gives up (false) once more than `budget` elements have entered the
// heap, each paying log(k) (a row in ascending order, for the largest k).
template <class P, class T>
bool heap_select(std::vector<typename P::Entry>& heap, const T* p, int64_t n, int64_t k, bool flip, int64_t budget) {
  heap.resize(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) heap[static_cast<size_t>(i)] = P::make(p[i], i, flip);
  std::make_heap(heap.begin(), heap.end());
  int64_t entered = 0;
  for (int64_t i = k; i < n; ++i) {
    const typename P::Entry e = P::make(p[i], i, flip);
    if (e < heap.front()) {
      if (++entered > budget) return false;
      std::pop_heap(heap.begin(), heap.end());
      heap.back() = e;
      std::push_heap(heap.begin(), heap.end());
    }
  }
  std::sort_heap(heap.begin(), heap.end());
  return true;
}

// The best k entries of a row, in order: nth_element over all n, then a sort of the first k.
template <class P, class T>
void partition_select(std::vector<typename P::Entry>& all, const T* p, int64_t n, int64_t k, bool flip) {
  all.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) all[static_cast<size_t>(i)] = P::make(p[i], i, flip);
  if (k < n) std::nth_element(all.begin(), all.begin() + k, all.end());
  std::sort(all.begin(), all.begin() + k);
}

template <class T, bool Packed>
void topk_rows(T* vals, int64_t* idx, const T* in, int64_t rows, int64_t n, int64_t k, bool largest) {
  using P = Pairs<T, Packed>;
  // For k far below n few elements enter the heap (about k * log(n / k) of a random row).
  const bool try_heap = k * 16 <= n;
  const int64_t budget = n / 4;
  parallel_for(0, rows, row_grain(n), [&](int64_t begin, int64_t end) {
    std::vector<typename P::Entry> entries;
    for (int64_t r = begin; r < end; ++r) {
      const T* p = in + r * n;
      if (!(try_heap && heap_select<P>(entries, p, n, k, largest, budget))) {
        partition_select<P>(entries, p, n, k, largest);
      }
      write_row<T, P>(entries.data(), k, p, vals + r * k, idx + r * k);
    }
  });
}

// Calls f(TypeTag<T>{}, std::bool_constant<Packed>{}) for x's dtype and the row length.
template <class F>
void dispatch_rows(DType dtype, int64_t n, const char* op, F&& f) {
  dispatch_math(dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (sizeof(KeyOf<T>) == 4 && n <= (int64_t{1} << 32)) f(tag, std::true_type{});
    else f(tag, std::false_type{});
  });
}

}  // namespace

void sort(Tensor& values, Tensor& indices, const Tensor& x, int64_t rows, int64_t n, bool descending) {
  if (rows == 0 || n == 0) return;
  dispatch_rows(x.dtype(), n, "sort", [&](auto tag, auto packed) {
    using T = typename decltype(tag)::type;
    sort_rows<T, decltype(packed)::value>(values.data<T>(), indices.data<int64_t>(), x.data<T>(), rows, n, descending);
  });
}

void topk(Tensor& values, Tensor& indices, const Tensor& x, int64_t rows, int64_t n, int64_t k, bool largest) {
  if (rows == 0 || k == 0) return;
  dispatch_rows(x.dtype(), n, "topk", [&](auto tag, auto packed) {
    using T = typename decltype(tag)::type;
    topk_rows<T, decltype(packed)::value>(values.data<T>(), indices.data<int64_t>(), x.data<T>(), rows, n, k, largest);
  });
}

}  // namespace ember::cpu
