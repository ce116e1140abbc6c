// cross_entropy on class indices, fused with log_softmax, on the GPU: one
// block per position, its threads striding over the classes (coalesced for
// the usual [N, C] input, where inner == 1). The forward keeps logsumexp per
// position so the backward needs one pass: softmax = exp(x - lse).
#include <ember/cuda/loss.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/block_reduce.cuh>
#include <ember/cuda/device/float_access.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

constexpr int kThreads = 256;

template <class T, class A>
__global__ void ce_forward_kernel(A* loss, A* wt, A* lse, const T* x, const int64_t* target, const A* weight,
                                  int64_t ignore_index, int64_t classes, int64_t inner) {
  __shared__ A shared[kThreads / kWarpSize];
  const int64_t p = blockIdx.x, o = p / inner, i = p % inner;
  const T* xp = x + o * classes * inner + i;
  A m = -INFINITY;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) m = fmax(m, static_cast<A>(load(xp, c * inner)));
  m = block_max(m, shared);
  A s = 0;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) s += exp(static_cast<A>(load(xp, c * inner)) - m);
  s = block_sum(s, shared);
  if (threadIdx.x == 0) {
    const A l = m + log(s);
    const int64_t t = target[p];
    const A w = t == ignore_index ? A(0) : (weight ? weight[t] : A(1));
    lse[p] = l;
    wt[p] = w;
    loss[p] = w == A(0) ? A(0) : w * (l - static_cast<A>(load(xp, t * inner)));
  }
}

template <class T, class A>
__global__ void ce_backward_kernel(A* gx, const A* gl, const A* wt, const A* lse, const T* x, const int64_t* target,
                                   int64_t ignore_index, int64_t classes, int64_t inner) {
  const int64_t p = blockIdx.x, o = p / inner, i = p % inner;
  const int64_t base = o * classes * inner + i;
  const int64_t t = target[p];
  const A scale = gl[p] * wt[p], l = lse[p];
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
    const int64_t k = base + c * inner;
    A v = scale == A(0) ? A(0) : scale * exp(static_cast<A>(load(x, k)) - l);
    if (c == t && t != ignore_index) v -= scale;
    gx[k] = v;
  }
}

template <class T>
void forward(Tensor& loss, Tensor& wt, Tensor& lse, const Tensor& x, const Tensor& target, const Tensor& weight,
             int64_t ignore_index, int64_t positions, int64_t classes, int64_t inner) {
  using A = typename Acc<T>::type;
  const int index = x.device().index;
  DeviceGuard guard(index);
  ce_forward_kernel<T, A><<<static_cast<unsigned>(positions), kThreads, 0, current_cuda_stream(index)>>>(
      static_cast<A*>(loss.data_ptr()), static_cast<A*>(wt.data_ptr()), static_cast<A*>(lse.data_ptr()),
      static_cast<const T*>(x.data_ptr()), static_cast<const int64_t*>(target.data_ptr()),
      weight.defined() ? static_cast<const A*>(weight.data_ptr()) : nullptr, ignore_index, classes, inner);
  EMBER_CUDA_KERNEL_CHECK();
}

template <class T>
void backward(Tensor& gx, const Tensor& gl, const Tensor& wt, const Tensor& lse, const Tensor& x,
              const Tensor& target, int64_t ignore_index, int64_t positions, int64_t classes, int64_t inner) {
  using A = typename Acc<T>::type;
  const int index = x.device().index;
  DeviceGuard guard(index);
  ce_backward_kernel<T, A><<<static_cast<unsigned>(positions), kThreads, 0, current_cuda_stream(index)>>>(
      static_cast<A*>(gx.data_ptr()), static_cast<const A*>(gl.data_ptr()), static_cast<const A*>(wt.data_ptr()),
      static_cast<const A*>(lse.data_ptr()), static_cast<const T*>(x.data_ptr()),
      static_cast<const int64_t*>(target.data_ptr()), ignore_index, classes, inner);
  EMBER_CUDA_KERNEL_CHECK();
}

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

unsigned grid_for(int64_t total) {
  const int64_t b = (total + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 8 ? b : 65535 * 8);
}

int64_t checked_positions(int64_t outer, int64_t inner) {
  const int64_t positions = outer * inner;
  EMBER_CHECK(positions <= 0x7fffffff, Error, "cross_entropy: ", positions, " positions exceed the CUDA grid limit");
  return positions;
}

[[noreturn]] void unsupported(DType d) {
  throw NotImplementedError(str("cross_entropy: not implemented for ", dtype_name(d), " on CUDA"));
}

}  // namespace

void nll_forward(Tensor& loss, Tensor& wt, const Tensor& x, const Tensor& target, const Tensor& weight,
                 int64_t ignore_index, int64_t outer, int64_t classes, int64_t inner) {
  const int64_t n = outer * inner;
  if (n == 0) return;
  const int index = x.device().index;
  DeviceGuard guard(index);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    using A = typename Acc<T>::type;
    nll_forward_kernel<T, A><<<grid_for(n), kThreads, 0, current_cuda_stream(index)>>>(
        static_cast<A*>(loss.data_ptr()), static_cast<A*>(wt.data_ptr()), static_cast<const T*>(x.data_ptr()),
        static_cast<const int64_t*>(target.data_ptr()),
        weight.defined() ? static_cast<const A*>(weight.data_ptr()) : nullptr, ignore_index, classes, inner, n);
    EMBER_CUDA_KERNEL_CHECK();
  };
  switch (x.dtype()) {
    case DType::Float32: return run(float{});
    case DType::Float64: return run(double{});
    case DType::Float16: return run(__half{});
    case DType::BFloat16: return run(__nv_bfloat16{});
    default: throw NotImplementedError(str("nll_loss: not implemented for ", dtype_name(x.dtype()), " on CUDA"));
  }
}

void nll_backward(Tensor& gx, const Tensor& gl, const Tensor& wt, const Tensor& target, int64_t ignore_index,
                  int64_t outer, int64_t classes, int64_t inner) {
  const int index = gx.device().index;
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  EMBER_CUDA_CHECK(cudaMemsetAsync(gx.data_ptr(), 0, gx.numel() * itemsize(gx.dtype()), stream));
  const int64_t n = outer * inner;
  if (n == 0) return;
  auto run = [&](auto tag) {
    using A = decltype(tag);
    nll_backward_kernel<A><<<grid_for(n), kThreads, 0, stream>>>(
        static_cast<A*>(gx.data_ptr()), static_cast<const A*>(gl.data_ptr()), static_cast<const A*>(wt.data_ptr()),
        static_cast<const int64_t*>(target.data_ptr()), ignore_index, classes, inner, n);
    EMBER_CUDA_KERNEL_CHECK();
  };
  if (gx.dtype() == DType::Float64) return run(double{});
  run(float{});
}

void cross_entropy_forward(Tensor& loss, Tensor& wt, Tensor& lse, const Tensor& x, const Tensor& target,
                           const Tensor& weight, int64_t ignore_index, int64_t outer, int64_t classes, int64_t inner) {
  const int64_t n = checked_positions(outer, inner);
  if (n == 0) return;
  switch (x.dtype()) {
    case DType::Float32: return forward<float>(loss, wt, lse, x, target, weight, ignore_index, n, classes, inner);
    case DType::Float64: return forward<double>(loss, wt, lse, x, target, weight, ignore_index, n, classes, inner);
    case DType::Float16: return forward<__half>(loss, wt, lse, x, target, weight, ignore_index, n, classes, inner);
    case DType::BFloat16:
      return forward<__nv_bfloat16>(loss, wt, lse, x, target, weight, ignore_index, n, classes, inner);
    default: unsupported(x.dtype());
  }
}

void cross_entropy_backward(Tensor& gx, const Tensor& gl, const Tensor& wt, const Tensor& lse, const Tensor& x,
                            const Tensor& target, int64_t ignore_index, int64_t outer, int64_t classes,
                            int64_t inner) {
  const int64_t n = checked_positions(outer, inner);
  if (n == 0) return;
  switch (x.dtype()) {
    case DType::Float32: return backward<float>(gx, gl, wt, lse, x, target, ignore_index, n, classes, inner);
    case DType::Float64: return backward<double>(gx, gl, wt, lse, x, target, ignore_index, n, classes, inner);
    case DType::Float16: return backward<__half>(gx, gl, wt, lse, x, target, ignore_index, n, classes, inner);
    case DType::BFloat16:
      return backward<__nv_bfloat16>(gx, gl, wt, lse, x, target, ignore_index, n, classes, inner);
    default: unsupported(x.dtype());
  }
}

}  // namespace ember::cuda
