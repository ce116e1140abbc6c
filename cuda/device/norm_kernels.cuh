// The row normalization kernels (layer_norm, rms_norm, group_norm's
// statistics: one block per row; the weight / bias gradients: column sums in
// row chunks) and batch norm's per-channel kernels; cuda/norm.cu launches
// them. Device code only, in a header so that tests/cpp/test_row_kernels_emulation.cpp
// and test_norm_grads_emulation.cpp run the same source on the CPU
// (tests/cpp/cuda_emulation.h).
#pragma once
#include <cstdint>

#include <ember/cuda/device/block_reduce.cuh>
#include <ember/cuda/device/float_access.cuh>

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

// Threads of a row-norm block, a power of two from one warp to 1024: about
// kRowNormValuesPerThread values each (GPT-2's 768 columns: 256 threads of 3
// rather than 1024 of which 256 idle), so that the block's reductions fold
// few warps' partials and more blocks fit on an SM.
constexpr int kRowNormValuesPerThread = 4;
inline int row_norm_threads(int64_t cols) {
  int threads = kWarpSize;
  while (threads * int64_t{kRowNormValuesPerThread} < cols && threads < 1024) threads *= 2;
  return threads;
}

// Pass 1 sums the row for its mean, pass 2 sums the squared deviations (two
// passes over a row that stays in L2/L1 are more accurate than sum and sum of
// squares), pass 3 writes the output. Statistics and w / b in Acc<T>.
template <class T>
__global__ void row_norm_kernel(T* out, typename Acc<T>::type* mean_out, typename Acc<T>::type* rstd_out,
                                const T* x, const typename Acc<T>::type* w, const typename Acc<T>::type* b,
                                int64_t cols, double eps, bool rms) {
  using A = typename Acc<T>::type;
  __shared__ A shared[kMaxWarps];
  const int64_t row = blockIdx.x;
  const T* xr = x + row * cols;
  T* yr = out + row * cols;
  A mu = 0;
  if (!rms) {
    A s = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += load(xr, j);
    mu = block_sum(s, shared) / static_cast<A>(cols);
  }
  A ss = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const A d = load(xr, j) - mu;
    ss += d * d;
  }
  const A var = block_sum(ss, shared) / static_cast<A>(cols);
  const A rs = static_cast<A>(1) / sqrt(var + static_cast<A>(eps));
  if (threadIdx.x == 0) {
    if (mean_out) mean_out[row] = mu;
    rstd_out[row] = rs;
  }
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    A v = (load(xr, j) - mu) * rs;
    if (w) v *= w[j];
    if (b) v += b[j];
    store(yr, j, v);
  }
}

// ---- row norm backward: one block per row for gx.

template <class T>
__global__ void row_norm_backward_kernel(T* gx, const T* g, const T* x, const typename Acc<T>::type* mean,
                                         const typename Acc<T>::type* rstd, const typename Acc<T>::type* w,
                                         int64_t cols) {
  using A = typename Acc<T>::type;
  __shared__ A shared[kMaxWarps];
  const int64_t row = blockIdx.x;
  const T* gr = g + row * cols;
  const T* xr = x + row * cols;
  const A mu = mean ? mean[row] : A(0), rs = rstd[row];
  A s_g = 0, s_gx = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const A gxh = static_cast<A>(load(gr, j)) * (w ? w[j] : A(1));
    s_g += gxh;
    s_gx += gxh * ((load(xr, j) - mu) * rs);
  }
  const A mean_g = mean ? block_sum(s_g, shared) / static_cast<A>(cols) : A(0);
  const A mean_gx = block_sum(s_gx, shared) / static_cast<A>(cols);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const A gxh = static_cast<A>(load(gr, j)) * (w ? w[j] : A(1));
    const A xhat = (load(xr, j) - mu) * rs;
    store(gx + row * cols, j, (gxh - xhat * mean_gx - mean_g) * rs);
  }
}

// ---- row norm weight / bias gradients: gw[j] = sum_r g[r, j] * xhat[r, j],
// gb[j] = sum_r g[r, j], a column sum over all rows (8,192 x 768 for GPT-2).
//
// A 2-D grid: blockIdx.y picks a chunk of chunk_rows rows, blockIdx.x a tile
// of kParamTileCols consecutive columns (grid-striding over the tiles). A
// block is (kParamTileCols, kParamRowLanes) threads: a warp's lanes read 32
// consecutive columns of one row (coalesced loads), the warps take every
// kParamRowLanes-th row of the chunk, and warp 0 folds the warps' sums in
// warp order through shared memory. The block writes row blockIdx.y of
// out_w / out_b [chunks, cols]: gw / gb themselves when there is one chunk,
// else partial buffers that row_norm_param_finish_kernel sums per column in
// chunk order. No atomics: the result is the same on every run.

constexpr int kParamTileCols = kWarpSize;
constexpr int kParamRowLanes = 16;       // warps per block: 512 threads
constexpr int64_t kParamMinChunkRows = 128;  // fewer rows per chunk do not pay for the second pass

struct ParamGradPlan {
  int64_t tiles;       // column tiles of kParamTileCols
  int64_t chunks;      // row chunks (gridDim.y, <= 65535); 1: no second pass
  int64_t chunk_rows;  // rows per chunk (the last may have fewer, never none)
};

// Enough blocks (tiles x chunks) for about four per SM, with chunks of at
// least kParamMinChunkRows rows: GPT-2's 8,192 x 768 on 132 SMs gives 24
// tiles x 22 chunks of 373 rows; fewer than 2 * kParamMinChunkRows rows, or
// thousands of columns, stay in one chunk, written directly.
inline ParamGradPlan param_grad_plan(int64_t rows, int64_t cols, int sm_count) {
  ParamGradPlan p;
  p.tiles = (cols + kParamTileCols - 1) / kParamTileCols;
  const int64_t want_blocks = 4 * static_cast<int64_t>(sm_count > 0 ? sm_count : 1);
  int64_t chunks = (want_blocks + p.tiles - 1) / p.tiles;
  const int64_t by_rows = rows / kParamMinChunkRows;  // chunks of at least kParamMinChunkRows rows
  if (chunks > by_rows) chunks = by_rows;
  if (chunks > 65535) chunks = 65535;
  if (chunks < 1) chunks = 1;
  p.chunk_rows = (rows + chunks - 1) / chunks;
  if (p.chunk_rows < 1) p.chunk_rows = 1;
  p.chunks = (rows + p.chunk_rows - 1) / p.chunk_rows;  // no empty trailing chunk
  if (p.chunks < 1) p.chunks = 1;
  return p;
}

// Launch with block (kParamTileCols, kParamRowLanes), grid (<= tiles, chunks).
// out_w / out_b may be null (that gradient is not wanted); mean is null for RMS.
template <class T>
__global__ void row_norm_param_grads_kernel(typename Acc<T>::type* out_w, typename Acc<T>::type* out_b, const T* g,
                                            const T* x, const typename Acc<T>::type* mean,
                                            const typename Acc<T>::type* rstd, int64_t rows, int64_t cols,
                                            int64_t chunk_rows) {
  using A = typename Acc<T>::type;
  __shared__ A part_w[kParamRowLanes][kParamTileCols];
  __shared__ A part_b[kParamRowLanes][kParamTileCols];
  const int lane = threadIdx.x, lane_row = threadIdx.y;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * chunk_rows;
  const int64_t r1 = r0 + chunk_rows < rows ? r0 + chunk_rows : rows;
  const int64_t tiles = (cols + kParamTileCols - 1) / kParamTileCols;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {  // uniform per block: barriers are safe
    const int64_t j = tile * kParamTileCols + lane;
    A sw = 0, sb = 0;
    if (j < cols) {
      for (int64_t r = r0 + lane_row; r < r1; r += kParamRowLanes) {
        const A gv = load(g, r * cols + j);
        sw += gv * ((load(x, r * cols + j) - (mean ? mean[r] : A(0))) * rstd[r]);
        sb += gv;
      }
    }
    part_w[lane_row][lane] = sw;
    part_b[lane_row][lane] = sb;
    __syncthreads();
    if (lane_row == 0 && j < cols) {
      A tw = part_w[0][lane], tb = part_b[0][lane];
      for (int i = 1; i < kParamRowLanes; ++i) {
        tw += part_w[i][lane];
        tb += part_b[i][lane];
      }
      const int64_t o = static_cast<int64_t>(blockIdx.y) * cols + j;
      if (out_w) out_w[o] = tw;
      if (out_b) out_b[o] = tb;
    }
    __syncthreads();  // the next tile reuses part_w / part_b
  }
}

// gw[j] = sum over c of part_w[c, j] in chunk order (likewise gb), for the
// partial buffers [chunks, cols] of row_norm_param_grads_kernel; one thread
// per column (grid-stride), consecutive threads on consecutive columns.
template <class A>
__global__ void row_norm_param_finish_kernel(A* gw, A* gb, const A* part_w, const A* part_b, int64_t chunks,
                                             int64_t cols) {
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < cols; j += int64_t{gridDim.x} * blockDim.x) {
    if (gw) {
      A s = 0;
      for (int64_t c = 0; c < chunks; ++c) s += part_w[c * cols + j];
      gw[j] = s;
    }
    if (gb) {
      A s = 0;
      for (int64_t c = 0; c < chunks; ++c) s += part_b[c * cols + j];
      gb[j] = s;
    }
  }
}

// ---- batch norm over x [n, c, inner]: per-channel sums over n * inner values
// (ResNet: 128 x 56 x 56 per channel for 64 channels), split across blocks so
// that few channels still fill the GPU, and elementwise passes.

constexpr int kChannelThreads = 512;
constexpr int64_t kChannelMinChunk = 16 * kChannelThreads;  // values per block at least, when split

// Blocks per channel for sums over `count` values per channel: about four
// blocks per SM in all, each summing at least kChannelMinChunk values; 1
// when the channels alone fill the GPU or the channels are short. For
// 128 x 64 x 56 x 56 on 132 SMs: 9 blocks per channel of 44,601 values.
inline int64_t channel_splits(int64_t c, int64_t count, int sm_count) {
  const int64_t want_blocks = 4 * static_cast<int64_t>(sm_count > 0 ? sm_count : 1);
  int64_t splits = c > 0 ? (want_blocks + c - 1) / c : 1;
  const int64_t by_count = count / kChannelMinChunk;
  if (splits > by_count) splits = by_count;
  if (splits > 65535) splits = 65535;
  return splits < 1 ? 1 : splits;
}

// Walks the flat indices k, k + step, k + 2 step, ... of an [n, c, inner]
// tensor keeping k's position in its plane (j = k % inner) and its channel
// (ch = (k / inner) % c) or its sample (i = k / inner / c, when c == 1 for a
// single channel's [n, inner] view) without a 64-bit division per step.
struct ChannelCursor {
  int64_t j, plane;        // k % inner, and (k / inner) reduced modulo `planes`
  int64_t step_j, step_p;  // step % inner, (step / inner) % planes (any, when planes is 0: no wrap)
  int64_t inner, planes;
  __device__ ChannelCursor(int64_t k, int64_t step, int64_t inner_, int64_t planes_)
      : j(k % inner_), plane(planes_ ? (k / inner_) % planes_ : k / inner_), step_j(step % inner_),
        step_p(planes_ ? (step / inner_) % planes_ : step / inner_), inner(inner_), planes(planes_) {}
  __device__ void advance() {
    j += step_j;
    plane += step_p;
    if (j >= inner) {
      j -= inner;
      ++plane;
    }
    if (planes && plane >= planes) plane -= planes;  // step_p < planes: one subtraction is enough
  }
};

enum class ChannelSum {
  kX,                 // a = sum(x)
  kSquaredDeviation,  // a = sum((x - mean)^2)
  kGradient,          // a = sum(g), b = sum(g * (x - mean) * rstd)
};

// Block (ch = blockIdx.x, s = blockIdx.y) sums channel ch's values with flat
// index k = i * inner + j (sample i, position j) in [s * chunk, (s + 1) *
// chunk), its threads on consecutive k (coalesced within a plane), and
// writes the block's sums divided by `divisor` to out_a / out_b [c,
// gridDim.y] at (ch, s): the final values when gridDim.y is 1, else partial
// sums for channel_finish_kernel. Launch with kChannelThreads threads.
template <class T, ChannelSum kWhat>
__global__ void channel_sums_kernel(T* out_a, T* out_b, const T* x, const T* g, const T* mean, const T* rstd,
                                    int64_t n, int64_t c, int64_t inner, int64_t chunk, T divisor) {
  __shared__ T shared[kMaxWarps];
  const int64_t ch = blockIdx.x, count = n * inner;
  const int64_t k0 = static_cast<int64_t>(blockIdx.y) * chunk;
  const int64_t k1 = k0 + chunk < count ? k0 + chunk : count;
  const T m = kWhat == ChannelSum::kX ? T(0) : mean[ch];
  const T r = kWhat == ChannelSum::kGradient ? rstd[ch] : T(1);
  T a = 0, b = 0;
  int64_t k = k0 + threadIdx.x;
  if (k < k1) {
    ChannelCursor at(k, blockDim.x, inner, 0);  // at.plane: the sample i
    for (; k < k1; k += blockDim.x, at.advance()) {
      const int64_t e = (at.plane * c + ch) * inner + at.j;
      if constexpr (kWhat == ChannelSum::kX) {
        a += x[e];
      } else if constexpr (kWhat == ChannelSum::kSquaredDeviation) {
        const T d = x[e] - m;
        a += d * d;
      } else {
        a += g[e];
        b += g[e] * ((x[e] - m) * r);
      }
    }
  }
  a = block_sum(a, shared);
  if constexpr (kWhat == ChannelSum::kGradient) b = block_sum(b, shared);
  if (threadIdx.x == 0) {
    const int64_t o = ch * gridDim.y + blockIdx.y;
    out_a[o] = a / divisor;
    if constexpr (kWhat == ChannelSum::kGradient) out_b[o] = b / divisor;
  }
}

// a[ch] = sum over s of part_a[ch, s] in split order, / divisor (likewise b
// when not null): the second pass of a split channel_sums_kernel. One thread
// per channel (grid-stride).
template <class T>
__global__ void channel_finish_kernel(T* a, T* b, const T* part_a, const T* part_b, int64_t c, int64_t splits,
                                      T divisor) {
  for (int64_t ch = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; ch < c; ch += int64_t{gridDim.x} * blockDim.x) {
    T sa = 0, sb = 0;
    for (int64_t s = 0; s < splits; ++s) {
      sa += part_a[ch * splits + s];
      if (b) sb += part_b[ch * splits + s];
    }
    a[ch] = sa / divisor;
    if (b) b[ch] = sb / divisor;
  }
}

template <class T>
__global__ void channel_affine_kernel(T* out, const T* x, const T* scale, const T* shift, int64_t c, int64_t inner,
                                      int64_t total) {
  const int64_t step = int64_t{gridDim.x} * blockDim.x;
  int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (k >= total) return;
  for (ChannelCursor at(k, step, inner, c); k < total; k += step, at.advance()) {
    out[k] = x[k] * scale[at.plane] + shift[at.plane];
  }
}

template <class T>
__global__ void channel_grad_kernel(T* gx, const T* g, const T* x, const T* mean, const T* rstd, const T* w,
                                    const T* sum_g, const T* sum_gxhat, int64_t c, int64_t inner, int64_t total,
                                    bool batch_stats) {
  const T count = static_cast<T>(total / c);
  const int64_t step = int64_t{gridDim.x} * blockDim.x;
  int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (k >= total) return;
  for (ChannelCursor at(k, step, inner, c); k < total; k += step, at.advance()) {
    const int64_t ch = at.plane;
    const T m = mean[ch], r = rstd[ch], scale = r * (w ? w[ch] : T(1));
    gx[k] = batch_stats ? scale * (g[k] - sum_g[ch] / count - (x[k] - m) * r * (sum_gxhat[ch] / count))
                        : scale * g[k];
  }
}

}  // namespace
}  // namespace ember::cuda
