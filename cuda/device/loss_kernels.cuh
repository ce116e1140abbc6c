// The kernels of cross_entropy on class indices (fused with log_softmax: one
// block of kLossThreads threads per position, its threads striding over the
// classes) and of nll_loss (one thread per position); cuda/loss.cu launches
// them. Device code only, in a header so that
// tests/cpp/test_row_kernels_emulation.cpp runs the same source on the CPU
// (tests/cpp/cuda_emulation.h).
#pragma once
#include <cstdint>

#include <ember/cuda/device/block_reduce.cuh>
#include <ember/cuda/device/float_access.cuh>

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

constexpr int kLossThreads = 256;

// Per position p = (o, i) of x [outer, classes, inner]: lse[p], the target's
// weight wt[p] (0 for ignore_index) and loss[p] = wt * (lse - x_t).
template <class T, class A>
__global__ void ce_forward_kernel(A* loss, A* wt, A* lse, const T* x, const int64_t* target, const A* weight,
                                  int64_t ignore_index, int64_t classes, int64_t inner) {
  __shared__ A shared[kLossThreads / kWarpSize];
  const int64_t p = blockIdx.x, o = p / inner, i = p % inner;
  const T* xp = x + o * classes * inner + i;
  A m = -INFINITY;  // NaN-propagating max
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) m = NanMaxOp{}(m, static_cast<A>(load(xp, c * inner)));
  m = block_reduce(m, NanMaxOp{}, shared);
  A s = 0;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) s += exp(static_cast<A>(load(xp, c * inner)) - m);
  s = block_sum(s, shared);
  if (threadIdx.x == 0) {
    // A NaN, a +inf or all -inf: no shift makes the sum finite; lse is then
    // m itself, as in the CPU kernel (a +inf logit gives an inf loss, not NaN).
    const A l = m != m || ::isinf(m) ? m : m + log(s);
    const int64_t t = target[p];
    const A w = t == ignore_index ? A(0) : (weight ? weight[t] : A(1));
    lse[p] = l;
    wt[p] = w;
    loss[p] = w == A(0) ? A(0) : w * (l - static_cast<A>(load(xp, t * inner)));
  }
}

// gx = gl * wt * (softmax(x) - one_hot(t)) from the saved lse, computed in A
// and stored as G: A, or x's 16-bit type itself (the gradient autograd needs,
// rounded once, without a float32 array as large as the logits in between).
template <class T, class A, class G = A>
__global__ void ce_backward_kernel(G* gx, const A* gl, const A* wt, const A* lse, const T* x, const int64_t* target,
                                   int64_t ignore_index, int64_t classes, int64_t inner) {
  const int64_t p = blockIdx.x, o = p / inner, i = p % inner;
  const int64_t base = o * classes * inner + i;
  const int64_t t = target[p];
  const A scale = gl[p] * wt[p], l = lse[p];
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
    const int64_t k = base + c * inner;
    A v = scale == A(0) ? A(0) : scale * exp(static_cast<A>(load(x, k)) - l);
    if (c == t && t != ignore_index) v -= scale;
    store(gx, k, v);
  }
}

// nll_loss: loss[p] = -wt * x_t, one thread per position (grid-stride).
template <class T, class A>
__global__ void nll_forward_kernel(A* loss, A* wt, const T* x, const int64_t* target, const A* weight,
                                   int64_t ignore_index, int64_t classes, int64_t inner, int64_t positions) {
  for (int64_t p = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; p < positions;
       p += int64_t{gridDim.x} * blockDim.x) {
    const int64_t t = target[p];
    const A w = t == ignore_index ? A(0) : (weight ? weight[t] : A(1));
    wt[p] = w;
    loss[p] = w == A(0) ? A(0) : -w * static_cast<A>(load(x, (p / inner) * classes * inner + t * inner + p % inner));
  }
}

template <class A>
__global__ void nll_backward_kernel(A* gx, const A* gl, const A* wt, const int64_t* target, int64_t ignore_index,
                                    int64_t classes, int64_t inner, int64_t positions) {
  for (int64_t p = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; p < positions;
       p += int64_t{gridDim.x} * blockDim.x) {
    const int64_t t = target[p];
    if (t != ignore_index) gx[(p / inner) * classes * inner + t * inner + p % inner] = -gl[p] * wt[p];
  }
}

}  // namespace
}  // namespace ember::cuda
