// The sort kernels (cuda/sort.cu launches them) over the rows of a contiguous
// [rows, n] block. Device code only, in a header so that
// tests/cpp/test_sort_emulation.cpp runs the same source on the CPU
// (tests/cpp/cuda_emulation.h) against core/cpu/sort.cpp.
//
// Each element becomes an unsigned key whose integer order is PyTorch's
// element order (sort_key: NaN above +inf, -0.0 equal to 0.0, descending
// flips the bits); (key, position) pairs then order stably in both
// directions. Values are read back from the input at the sorted positions, so
// they keep the input's exact bits.
// - Rows up to kBitonicMaxRow: bitonic_sort_kernel, one block per row, a
//   bitonic network over the (key, position) pairs in shared memory.
// - Longer rows, in batches of whole rows: sort_keys_kernel writes every
//   element's key and position, CUB's device-wide radix sort (stable) orders
//   them by key, a second stable radix sort by row (row_keys_kernel) puts
//   each row's elements back together in key order, and
//   gather_sorted_kernel writes values and indices.
#pragma once
#include <climits>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <ember/cuda/device/dtypes.cuh>

#ifndef EMBER_CUDA_EMULATION
// The block's dynamic shared memory (the emulation defines its own).
#define EMBER_SORT_SHARED_MEMORY(name) extern __shared__ __align__(16) unsigned char name[]
#else
#define EMBER_SORT_SHARED_MEMORY(name) EMBER_FLASH_SHARED_MEMORY(name)
#endif

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

// Rows up to this long sort in one block's shared memory (24 KiB for 8-byte keys).
constexpr int kBitonicMaxRow = 2048;
constexpr int kSortThreads = 256;  // sort_keys_kernel / gather_sorted_kernel

// 32-bit keys for elements of up to 4 bytes (half types through float), else 64.
template <class T>
using SortKey = std::conditional_t<sizeof(T) <= 4, uint32_t, uint64_t>;

template <class T>
__device__ __forceinline__ SortKey<T> sort_key(T v, bool descending) {
  using K = SortKey<T>;
  constexpr K sign = K{1} << (sizeof(K) * 8 - 1);
  K key;
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, uint8_t>) {
    key = static_cast<K>(v);
  } else if constexpr (std::is_integral_v<T>) {
    // Two's complement with the sign bit flipped orders as unsigned.
    key = static_cast<K>(static_cast<std::make_signed_t<K>>(v)) ^ sign;
  } else {
    auto w = widen(v);  // float or double: half types widen exactly
    using W = decltype(w);
    static_assert(sizeof(W) == sizeof(K), "a float key has the width of its float");
    if (w != w) {
      key = ~K{0};  // every NaN above +inf
    } else {
      if (w == W(0)) w = W(0);  // -0.0 ties with 0.0
      K bits;
      memcpy(&bits, &w, sizeof bits);
      key = (bits & sign) ? static_cast<K>(~bits) : static_cast<K>(bits | sign);
    }
  }
  return descending ? static_cast<K>(~key) : key;
}

// The smallest power of two >= n (n <= kBitonicMaxRow), at least 2.
inline int bitonic_length(int64_t n) {
  int len = 2;
  while (len < n) len <<= 1;
  return len;
}
inline int bitonic_threads(int len) { return len / 2 < 32 ? 32 : (len / 2 > 1024 ? 1024 : len / 2); }
template <class T>
inline size_t bitonic_shared_bytes(int len) {
  return static_cast<size_t>(len) * (sizeof(SortKey<T>) + sizeof(int32_t));
}

// One block per row (grid-strides over the rows): n <= len elements,
// len = bitonic_length(n), bitonic_shared_bytes<T>(len) bytes of dynamic
// shared memory. Pads past n sort after every element (largest key and
// position), so the first n slots hold the row in order.
template <class T>
__global__ void bitonic_sort_kernel(const T* x, T* values, int64_t* indices, int64_t rows, int n, int len,
                                    bool descending) {
  using K = SortKey<T>;
  EMBER_SORT_SHARED_MEMORY(smem);
  K* keys = reinterpret_cast<K*>(smem);
  int32_t* pos = reinterpret_cast<int32_t*>(keys + len);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* p = x + row * n;
    for (int i = threadIdx.x; i < len; i += blockDim.x) {
      keys[i] = i < n ? sort_key(p[i], descending) : ~K{0};
      pos[i] = i < n ? i : INT_MAX;
    }
    __syncthreads();
    // Merges sorted runs of k / 2 into runs of k, alternately ascending and
    // descending, until one ascending run of len remains.
    for (int k = 2; k <= len; k <<= 1) {
      for (int j = k >> 1; j > 0; j >>= 1) {
        for (int t = threadIdx.x; t < len / 2; t += blockDim.x) {
          const int a = 2 * j * (t / j) + t % j;  // the pair (a, a + j): bit j of a is clear
          const int b = a + j;
          const bool ascending = (a & k) == 0;
          const bool b_first = keys[b] < keys[a] || (keys[b] == keys[a] && pos[b] < pos[a]);
          if (b_first == ascending) {
            const K tk = keys[a];
            keys[a] = keys[b];
            keys[b] = tk;
            const int32_t tp = pos[a];
            pos[a] = pos[b];
            pos[b] = tp;
          }
        }
        __syncthreads();
      }
    }
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      const int32_t s = pos[i];
      values[row * n + i] = p[s];
      indices[row * n + i] = s;
    }
    __syncthreads();  // the next row reuses shared memory
  }
}

// keys[i] = sort_key(x[i]), widened to 64 bits for CUB (which then sorts
// only the key's own bits), and pos[i] = i, for i < total.
template <class T>
__global__ void sort_keys_kernel(const T* x, uint64_t* keys, int32_t* pos, int64_t total, bool descending) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    keys[i] = sort_key(x[i], descending);
    pos[i] = static_cast<int32_t>(i);
  }
}

// After the stable sort by key: each element's row (pos / n) as the key of a
// second stable sort, which gathers the rows back together in key order.
__global__ void row_keys_kernel(const int32_t* pos, uint64_t* keys, int64_t total, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    keys[i] = static_cast<uint64_t>(pos[i] / n);
  }
}

// Once pos holds every row's positions in order: values[i] = x[pos[i]] and
// indices[i] = pos[i]'s position within its row.
template <class T>
__global__ void gather_sorted_kernel(const T* x, const int32_t* pos, T* values, int64_t* indices, int64_t total,
                                     int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t s = pos[i];
    values[i] = x[s];
    indices[i] = s % n;
  }
}

}  // namespace
}  // namespace ember::cuda
