// Sorting rows on the GPU (kernels and the scheme in
// cuda/device/sort_kernels.cuh): rows up to kBitonicMaxRow elements sort in
// one block's shared memory; longer rows go through two stable CUB radix
// sorts over a batch of whole rows (by key, then by row), with their scratch
// buffers from the caching allocator. Every launch is on the current stream
// and checked.
#include <ember/cuda/sort.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/cuda_api.h>
#include <ember/cuda/device/sort_kernels.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

// Grid-stride loops cover the rest; this many blocks fill any current GPU.
unsigned grid_for(int64_t work, int64_t per_block) {
  const int64_t b = (work + per_block - 1) / per_block;
  return static_cast<unsigned>(b < 65535 * 8 ? (b > 0 ? b : 1) : 65535 * 8);
}

template <class T>
void bitonic_rows(Tensor& values, Tensor& indices, const Tensor& x, int64_t rows, int64_t n, bool descending,
                  cudaStream_t stream) {
  const int len = bitonic_length(n);
  bitonic_sort_kernel<T><<<grid_for(rows, 1), bitonic_threads(len), bitonic_shared_bytes<T>(len), stream>>>(
      x.data<T>(), values.data<T>(), indices.data<int64_t>(), rows, static_cast<int>(n), len, descending);
  EMBER_CUDA_KERNEL_CHECK();
}

// CUB's radix sort of (key, position) pairs; both passes of radix_rows use it.
size_t radix_scratch_bytes(int items, int end_bit) {
  size_t bytes = 0;
  EMBER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const uint64_t*>(nullptr),
                                                   static_cast<uint64_t*>(nullptr),
                                                   static_cast<const int32_t*>(nullptr),
                                                   static_cast<int32_t*>(nullptr), items, 0, end_bit));
  return bytes;
}

template <class T>
void radix_rows(Tensor& values, Tensor& indices, const Tensor& x, int64_t rows, int64_t n, bool descending,
                cudaStream_t stream) {
  EMBER_CHECK(n <= INT_MAX, NotImplementedError, "sort: rows of more than 2^31 - 1 elements are not supported on CUDA (",
              n, " elements)");
  // Batches of whole rows: positions are int32 and the scratch stays bounded.
  const int64_t max_items = int64_t{1} << 28;
  const int64_t batch_rows = std::max<int64_t>(1, std::min(rows, max_items / n));
  const int64_t batch_items = batch_rows * n;  // <= max(n, 2^28) < 2^31
  const int index = x.device().index;
  const size_t items_bytes = static_cast<size_t>(batch_items);
  std::shared_ptr<void> keys_a = allocate(items_bytes * sizeof(uint64_t), index);
  std::shared_ptr<void> keys_b = allocate(items_bytes * sizeof(uint64_t), index);
  std::shared_ptr<void> pos_a = allocate(items_bytes * sizeof(int32_t), index);
  std::shared_ptr<void> pos_b = allocate(items_bytes * sizeof(int32_t), index);
  auto* ka = static_cast<uint64_t*>(keys_a.get());
  auto* kb = static_cast<uint64_t*>(keys_b.get());
  auto* pa = static_cast<int32_t*>(pos_a.get());
  auto* pb = static_cast<int32_t*>(pos_b.get());
  const int key_bits = static_cast<int>(sizeof(SortKey<T>) * 8);
  int row_bits = 1;
  while ((int64_t{1} << row_bits) < batch_rows) ++row_bits;
  const size_t scratch_bytes = std::max(radix_scratch_bytes(static_cast<int>(batch_items), key_bits),
                                        radix_scratch_bytes(static_cast<int>(batch_items), row_bits));
  std::shared_ptr<void> scratch = allocate(std::max<size_t>(scratch_bytes, 1), index);

  for (int64_t r0 = 0; r0 < rows; r0 += batch_rows) {
    const int64_t br = std::min(batch_rows, rows - r0);
    const int items = static_cast<int>(br * n);
    const T* xb = x.data<T>() + r0 * n;
    const unsigned grid = grid_for(items, kSortThreads);
    sort_keys_kernel<T><<<grid, kSortThreads, 0, stream>>>(xb, ka, pa, items, descending);
    EMBER_CUDA_KERNEL_CHECK();
    size_t bytes = scratch_bytes;
    EMBER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.get(), bytes, ka, kb, pa, pb, items, 0, key_bits, stream));
    const int32_t* sorted = pb;
    if (br > 1) {  // stable by row: each row's elements together, still in key order
      row_keys_kernel<<<grid, kSortThreads, 0, stream>>>(pb, ka, items, n);
      EMBER_CUDA_KERNEL_CHECK();
      bytes = scratch_bytes;
      EMBER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.get(), bytes, ka, kb, pb, pa, items, 0, row_bits, stream));
      sorted = pa;
    }
    gather_sorted_kernel<T><<<grid, kSortThreads, 0, stream>>>(xb, sorted, values.data<T>() + r0 * n,
                                                               indices.data<int64_t>() + r0 * n, items, n);
    EMBER_CUDA_KERNEL_CHECK();
  }
}

}  // namespace

void sort(Tensor& values, Tensor& indices, const Tensor& x, int64_t rows, int64_t n, bool descending) {
  if (rows == 0 || n == 0) return;
  DeviceGuard guard(x.device().index);
  const cudaStream_t stream = current_cuda_stream();
  dispatch_device(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n <= kBitonicMaxRow) bitonic_rows<T>(values, indices, x, rows, n, descending, stream);
    else radix_rows<T>(values, indices, x, rows, n, descending, stream);
  });
}

}  // namespace ember::cuda
