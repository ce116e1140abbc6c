// The index family's scan kernels (cuda/index.cu launches them): the min and
// max of an int64 index tensor (range checks: per-block partials, then one
// block over the partials), and nonzero's two passes over tiles of
// kTile elements (count per tile; after a prefix sum of the counts, write the
// coordinates of each nonzero element at its rank). Device code only, in a
// header so that tests/cpp/test_index_scan_emulation.cpp runs the same source
// on the CPU (tests/cpp/cuda_emulation.h).
#pragma once
#include <cstdint>

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

constexpr int kScanThreads = 256;    // threads per block of every kernel here
constexpr int kCoordsMaxDims = 16;   // dimensions nonzero handles

// ---- min/max ------------------------------------------------------------------------------------

constexpr int kMinMaxBlocks = 1024;

// lo_out[b] / hi_out[b]: min of lo_in and max of hi_in over block b's share
// of the n elements (a first pass reads one tensor as both).
__global__ void min_max_kernel(const int64_t* lo_in, const int64_t* hi_in, int64_t n, int64_t* lo_out,
                               int64_t* hi_out) {
  __shared__ int64_t lo[kScanThreads];
  __shared__ int64_t hi[kScanThreads];
  int64_t a = INT64_MAX, b = INT64_MIN;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    a = lo_in[i] < a ? lo_in[i] : a;
    b = hi_in[i] > b ? hi_in[i] : b;
  }
  lo[threadIdx.x] = a;
  hi[threadIdx.x] = b;
  __syncthreads();
  for (int s = kScanThreads / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) {
      lo[threadIdx.x] = lo[threadIdx.x + s] < lo[threadIdx.x] ? lo[threadIdx.x + s] : lo[threadIdx.x];
      hi[threadIdx.x] = hi[threadIdx.x + s] > hi[threadIdx.x] ? hi[threadIdx.x + s] : hi[threadIdx.x];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    lo_out[blockIdx.x] = lo[0];
    hi_out[blockIdx.x] = hi[0];
  }
}

// ---- nonzero ------------------------------------------------------------------------------------

constexpr int kScanItems = 16;                       // consecutive elements per thread
constexpr int64_t kTile = int64_t{kScanThreads} * kScanItems;  // elements per block

__device__ inline int count_items(const uint8_t* flags, int64_t first, int64_t n) {
  int c = 0;
  for (int j = 0; j < kScanItems; ++j) c += (first + j < n && flags[first + j] != 0) ? 1 : 0;
  return c;
}

// counts[b] = nonzero flags in tile b.
__global__ void count_tiles_kernel(const uint8_t* flags, int64_t n, int64_t* counts) {
  __shared__ int partial[kScanThreads];
  partial[threadIdx.x] = count_items(flags, static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x * kScanItems, n);
  __syncthreads();
  for (int s = kScanThreads / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) counts[blockIdx.x] = partial[0];
}

struct Coords {
  int ndim;
  int64_t shape[kCoordsMaxDims];
};

// Writes the coordinates of every nonzero element of tile b at rows
// ends[b] - counts[b] + (its rank within the tile).
__global__ void write_nonzero_kernel(const uint8_t* flags, int64_t n, const int64_t* counts, const int64_t* ends,
                                     Coords g, int64_t* out) {
  __shared__ int scan[kScanThreads];
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x * kScanItems;
  const int mine = count_items(flags, first, n);
  scan[threadIdx.x] = mine;
  __syncthreads();
  for (int s = 1; s < kScanThreads; s <<= 1) {  // inclusive scan over the block's threads
    const int add = static_cast<int>(threadIdx.x) >= s ? scan[threadIdx.x - s] : 0;
    __syncthreads();
    scan[threadIdx.x] += add;
    __syncthreads();
  }
  int64_t row = ends[blockIdx.x] - counts[blockIdx.x] + scan[threadIdx.x] - mine;
  for (int j = 0; j < kScanItems; ++j) {
    const int64_t i = first + j;
    if (i >= n || flags[i] == 0) continue;
    int64_t rest = i;
    for (int d = g.ndim - 1; d >= 0; --d) {
      out[row * g.ndim + d] = rest % g.shape[d];
      rest /= g.shape[d];
    }
    ++row;
  }
}

}  // namespace
}  // namespace ember::cuda
