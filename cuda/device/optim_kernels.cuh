// The multi-tensor optimizer kernels (cuda/optim.cu launches them) and the
// host code that cuts every parameter into chunks of kChunk elements, each
// described by its pointers, its length and its parameter's per-step scalars:
// one block of kOptimThreads threads per chunk applies the same per-element
// update as core/cpu/optim.cpp, in the same order of operations. In a header
// so that tests/cpp/test_optim_emulation.cpp runs the same source on the CPU
// (tests/cpp/cuda_emulation.h) against the CPU kernels.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <ember/core/ops/optim.h>
#include <ember/core/tensor.h>

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

constexpr int64_t kChunk = 65536;
constexpr int kOptimThreads = 512;

// wd * p rounded on its own, as the CPU computes it. Contracted into an FMA,
// g + wd * p differs from the CPU's where the two nearly cancel, and RMSprop
// divides that difference by an eps-sized denominator (1e-7 apart in float64).
__device__ __forceinline__ float product_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double product_rn(double a, double b) { return __dmul_rn(a, b); }

template <class T>
__device__ __forceinline__ T effective_grad(T g, T p, T sign, T wd) {
  const T d = sign * g;
  return wd != T(0) ? d + product_rn(wd, p) : d;
}

template <class T>
struct SgdChunk {
  T* p;
  const T* g;
  T* buf;
  int64_t n;
  int init;  // the momentum buffer starts as this step's update
};

template <class T>
struct SgdArgs {
  T lr, wd, momentum, keep, sign;
  bool nesterov;
};

template <class T>
__global__ void sgd_kernel(const SgdChunk<T>* chunks, SgdArgs<T> s) {
  const SgdChunk<T> c = chunks[blockIdx.x];
  for (int64_t k = threadIdx.x; k < c.n; k += blockDim.x) {
    T d = effective_grad(c.g[k], c.p[k], s.sign, s.wd);
    if (c.buf) {
      const T m = c.init ? d : s.momentum * c.buf[k] + s.keep * d;
      c.buf[k] = m;
      d = s.nesterov ? d + s.momentum * m : m;
    }
    c.p[k] -= s.lr * d;
  }
}

template <class T>
struct AdamChunk {
  T* p;
  const T* g;
  T* m;
  T* v;
  T* vmax;
  int64_t n;
  T step_size, inv_bc2_sqrt;  // the parameter's own bias corrections
};

template <class T>
struct AdamArgs {
  T sign, l2, shrink, w1, b2, w2, eps;
};

template <class T>
__global__ void adam_kernel(const AdamChunk<T>* chunks, AdamArgs<T> s) {
  const AdamChunk<T> c = chunks[blockIdx.x];
  for (int64_t k = threadIdx.x; k < c.n; k += blockDim.x) {
    const T pk = c.p[k] * s.shrink;
    const T grad = effective_grad(c.g[k], pk, s.sign, s.l2);
    const T mk = c.m[k] + s.w1 * (grad - c.m[k]);
    const T vk = s.b2 * c.v[k] + s.w2 * grad * grad;
    c.m[k] = mk;
    c.v[k] = vk;
    T second = vk;
    if (c.vmax) {
      second = c.vmax[k] > vk ? c.vmax[k] : vk;
      c.vmax[k] = second;
    }
    const T denom = sqrt(second) * c.inv_bc2_sqrt + s.eps;
    c.p[k] = pk - c.step_size * (mk / denom);
  }
}

template <class T>
struct RmspropChunk {
  T* p;
  const T* g;
  T* sq;
  T* ga;   // null unless centered
  T* buf;  // null unless momentum > 0
  int64_t n;
};

template <class T>
struct RmspropArgs {
  T sign, wd, alpha, w, eps, lr, momentum;
};

template <class T>
__global__ void rmsprop_kernel(const RmspropChunk<T>* chunks, RmspropArgs<T> s) {
  const RmspropChunk<T> c = chunks[blockIdx.x];
  for (int64_t k = threadIdx.x; k < c.n; k += blockDim.x) {
    const T grad = effective_grad(c.g[k], c.p[k], s.sign, s.wd);
    const T avg_sq = s.alpha * c.sq[k] + s.w * grad * grad;
    c.sq[k] = avg_sq;
    T var = avg_sq;
    if (c.ga) {
      const T a = c.ga[k] + s.w * (grad - c.ga[k]);
      c.ga[k] = a;
      var = avg_sq - a * a;
    }
    const T step = grad / (sqrt(var) + s.eps);
    if (c.buf) {
      const T mk = s.momentum * c.buf[k] + step;
      c.buf[k] = mk;
      c.p[k] -= s.lr * mk;
    } else {
      c.p[k] -= s.lr * step;
    }
  }
}

template <class T>
struct AdagradChunk {
  T* p;
  const T* g;
  T* sum;
  int64_t n;
  T clr;  // lr decayed by the parameter's own step count
};

template <class T>
struct AdagradArgs {
  T sign, wd, eps;
};

template <class T>
__global__ void adagrad_kernel(const AdagradChunk<T>* chunks, AdagradArgs<T> s) {
  const AdagradChunk<T> c = chunks[blockIdx.x];
  for (int64_t k = threadIdx.x; k < c.n; k += blockDim.x) {
    const T grad = effective_grad(c.g[k], c.p[k], s.sign, s.wd);
    const T acc = c.sum[k] + grad * grad;
    c.sum[k] = acc;
    c.p[k] -= c.clr * (grad / (sqrt(acc) + s.eps));
  }
}

template <class T>
T* ptr(const Tensor& t) {
  return t.defined() ? static_cast<T*>(t.data_ptr()) : nullptr;
}

// ---- the chunk lists and per-step scalars of one dtype on one device

template <class T>
std::vector<SgdChunk<T>> sgd_chunks(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                                    const std::vector<Tensor>& momentum_buffers, const std::vector<bool>& init_buffer,
                                    const SgdOptions& o, DType dtype, int index) {
  std::vector<SgdChunk<T>> chunks;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].dtype() != dtype || params[i].device().index != index) continue;
    T* p = ptr<T>(params[i]);
    const T* g = ptr<T>(grads[i]);
    T* buf = o.momentum != 0 ? ptr<T>(momentum_buffers[i]) : nullptr;
    const int init = buf && init_buffer[i] ? 1 : 0;
    for (int64_t b = 0; b < params[i].numel(); b += kChunk) {
      const int64_t n = std::min(kChunk, params[i].numel() - b);
      chunks.push_back({p + b, g + b, buf ? buf + b : nullptr, n, init});
    }
  }
  return chunks;
}

template <class T>
SgdArgs<T> sgd_args(const SgdOptions& o) {
  return {T(o.lr), T(o.weight_decay), T(o.momentum), T(1 - o.dampening), o.maximize ? T(-1) : T(1), o.nesterov};
}

template <class T>
std::vector<AdamChunk<T>> adam_chunks(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                                      const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                                      const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& step,
                                      const AdamOptions& o, DType dtype, int index) {
  std::vector<AdamChunk<T>> chunks;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].dtype() != dtype || params[i].device().index != index) continue;
    T* p = ptr<T>(params[i]);
    const T* g = ptr<T>(grads[i]);
    T* m = ptr<T>(exp_avgs[i]);
    T* v = ptr<T>(exp_avg_sqs[i]);
    T* vmax = o.amsgrad ? ptr<T>(max_exp_avg_sqs[i]) : nullptr;
    const double bc1 = 1 - std::pow(o.beta1, step[i]), bc2 = 1 - std::pow(o.beta2, step[i]);
    const T step_size = T(o.lr / bc1), inv_bc2_sqrt = T(1 / std::sqrt(bc2));
    for (int64_t b = 0; b < params[i].numel(); b += kChunk) {
      const int64_t n = std::min(kChunk, params[i].numel() - b);
      chunks.push_back({p + b, g + b, m + b, v + b, vmax ? vmax + b : nullptr, n, step_size, inv_bc2_sqrt});
    }
  }
  return chunks;
}

template <class T>
AdamArgs<T> adam_args(const AdamOptions& o) {
  const bool decoupled = o.decoupled_weight_decay;
  return {o.maximize ? T(-1) : T(1), decoupled ? T(0) : T(o.weight_decay),
          decoupled ? T(1 - o.lr * o.weight_decay) : T(1), T(1 - o.beta1), T(o.beta2), T(1 - o.beta2), T(o.eps)};
}

template <class T>
std::vector<RmspropChunk<T>> rmsprop_chunks(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                                            const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
                                            const std::vector<Tensor>& momentum_buffers, const RmspropOptions& o,
                                            DType dtype, int index) {
  std::vector<RmspropChunk<T>> chunks;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].dtype() != dtype || params[i].device().index != index) continue;
    T* p = ptr<T>(params[i]);
    const T* g = ptr<T>(grads[i]);
    T* sq = ptr<T>(square_avgs[i]);
    T* ga = o.centered ? ptr<T>(grad_avgs[i]) : nullptr;
    T* buf = o.momentum > 0 ? ptr<T>(momentum_buffers[i]) : nullptr;
    for (int64_t b = 0; b < params[i].numel(); b += kChunk) {
      const int64_t n = std::min(kChunk, params[i].numel() - b);
      chunks.push_back({p + b, g + b, sq + b, ga ? ga + b : nullptr, buf ? buf + b : nullptr, n});
    }
  }
  return chunks;
}

template <class T>
RmspropArgs<T> rmsprop_args(const RmspropOptions& o) {
  return {o.maximize ? T(-1) : T(1), T(o.weight_decay), T(o.alpha), T(1 - o.alpha), T(o.eps), T(o.lr), T(o.momentum)};
}

template <class T>
std::vector<AdagradChunk<T>> adagrad_chunks(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                                            const std::vector<Tensor>& state_sums, const std::vector<double>& step,
                                            const AdagradOptions& o, DType dtype, int index) {
  std::vector<AdagradChunk<T>> chunks;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].dtype() != dtype || params[i].device().index != index) continue;
    T* p = ptr<T>(params[i]);
    const T* g = ptr<T>(grads[i]);
    T* sum = ptr<T>(state_sums[i]);
    const T clr = T(o.lr / (1 + (step[i] - 1) * o.lr_decay));
    for (int64_t b = 0; b < params[i].numel(); b += kChunk) {
      const int64_t n = std::min(kChunk, params[i].numel() - b);
      chunks.push_back({p + b, g + b, sum + b, n, clr});
    }
  }
  return chunks;
}

template <class T>
AdagradArgs<T> adagrad_args(const AdagradOptions& o) {
  return {o.maximize ? T(-1) : T(1), T(o.weight_decay), T(o.eps)};
}

}  // namespace
}  // namespace ember::cuda
