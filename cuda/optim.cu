// Multi-tensor SGD, Adam/AdamW, RMSprop and Adagrad on the GPU. The host
// cuts every parameter into chunks of kChunk elements and describes each chunk
// (its pointers, its length and its parameter's per-step scalars) in one array
// copied to the device; one block per chunk then applies the same
// per-element update as core/cpu/optim.cpp, in the same order of operations.
// One launch per dtype per step, not one per tensor.
#include <ember/cuda/optim.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include <cuda_runtime.h>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/cuda_api.h>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

constexpr int64_t kChunk = 65536;
constexpr int kThreads = 512;

template <class T>
__device__ __forceinline__ T effective_grad(T g, T p, T sign, T wd) {
  const T d = sign * g;
  return wd != T(0) ? d + wd * p : d;
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

// Copies the chunk list to the device (the host vector may go once
// cudaMemcpyAsync returns: pageable copies are staged first) and launches.
template <class Chunk, class Launch>
void run_chunks(const std::vector<Chunk>& chunks, int index, Launch&& launch) {
  if (chunks.empty()) return;
  EMBER_CHECK(chunks.size() <= 0x7fffffffu, Error, "optimizer step: too many chunks for one launch");
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  const size_t bytes = chunks.size() * sizeof(Chunk);
  std::shared_ptr<void> dev = allocate(bytes, index);
  EMBER_CUDA_CHECK(cudaMemcpyAsync(dev.get(), chunks.data(), bytes, cudaMemcpyHostToDevice, stream));
  launch(static_cast<const Chunk*>(dev.get()), static_cast<unsigned>(chunks.size()), stream);
  EMBER_CUDA_KERNEL_CHECK();
}

template <class T>
void sgd_typed(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
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
  const SgdArgs<T> s{T(o.lr), T(o.weight_decay), T(o.momentum), T(1 - o.dampening), o.maximize ? T(-1) : T(1),
                     o.nesterov};
  run_chunks(chunks, index, [&](const SgdChunk<T>* dev, unsigned blocks, cudaStream_t stream) {
    sgd_kernel<T><<<blocks, kThreads, 0, stream>>>(dev, s);
  });
}

template <class T>
void adam_typed(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& step, const AdamOptions& o,
                DType dtype, int index) {
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
  const bool decoupled = o.decoupled_weight_decay;
  const AdamArgs<T> s{o.maximize ? T(-1) : T(1), decoupled ? T(0) : T(o.weight_decay),
                      decoupled ? T(1 - o.lr * o.weight_decay) : T(1), T(1 - o.beta1), T(o.beta2), T(1 - o.beta2),
                      T(o.eps)};
  run_chunks(chunks, index, [&](const AdamChunk<T>* dev, unsigned blocks, cudaStream_t stream) {
    adam_kernel<T><<<blocks, kThreads, 0, stream>>>(dev, s);
  });
}

template <class T>
void rmsprop_typed(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
                   const std::vector<Tensor>& momentum_buffers, const RmspropOptions& o, DType dtype, int index) {
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
  const RmspropArgs<T> s{o.maximize ? T(-1) : T(1), T(o.weight_decay), T(o.alpha), T(1 - o.alpha),
                         T(o.eps), T(o.lr), T(o.momentum)};
  run_chunks(chunks, index, [&](const RmspropChunk<T>* dev, unsigned blocks, cudaStream_t stream) {
    rmsprop_kernel<T><<<blocks, kThreads, 0, stream>>>(dev, s);
  });
}

template <class T>
void adagrad_typed(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& state_sums, const std::vector<double>& step, const AdagradOptions& o,
                   DType dtype, int index) {
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
  const AdagradArgs<T> s{o.maximize ? T(-1) : T(1), T(o.weight_decay), T(o.eps)};
  run_chunks(chunks, index, [&](const AdagradChunk<T>* dev, unsigned blocks, cudaStream_t stream) {
    adagrad_kernel<T><<<blocks, kThreads, 0, stream>>>(dev, s);
  });
}

// The GPUs the params live on, each once.
std::vector<int> devices_of(const std::vector<Tensor>& params) {
  std::vector<int> out;
  for (const Tensor& p : params) {
    if (std::find(out.begin(), out.end(), p.device().index) == out.end()) out.push_back(p.device().index);
  }
  return out;
}

}  // namespace

void sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
         const std::vector<Tensor>& momentum_buffers, const std::vector<bool>& init_buffer, const SgdOptions& o) {
  for (int index : devices_of(params)) {
    sgd_typed<float>(params, grads, momentum_buffers, init_buffer, o, DType::Float32, index);
    sgd_typed<double>(params, grads, momentum_buffers, init_buffer, o, DType::Float64, index);
  }
}

void adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avgs,
          const std::vector<Tensor>& exp_avg_sqs, const std::vector<Tensor>& max_exp_avg_sqs,
          const std::vector<double>& step, const AdamOptions& o) {
  for (int index : devices_of(params)) {
    adam_typed<float>(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, step, o, DType::Float32, index);
    adam_typed<double>(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, step, o, DType::Float64, index);
  }
}

void rmsprop(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
             const std::vector<Tensor>& momentum_buffers, const RmspropOptions& o) {
  for (int index : devices_of(params)) {
    rmsprop_typed<float>(params, grads, square_avgs, grad_avgs, momentum_buffers, o, DType::Float32, index);
    rmsprop_typed<double>(params, grads, square_avgs, grad_avgs, momentum_buffers, o, DType::Float64, index);
  }
}

void adagrad(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             const std::vector<Tensor>& state_sums, const std::vector<double>& step, const AdagradOptions& o) {
  for (int index : devices_of(params)) {
    adagrad_typed<float>(params, grads, state_sums, step, o, DType::Float32, index);
    adagrad_typed<double>(params, grads, state_sums, step, o, DType::Float64, index);
  }
}

}  // namespace ember::cuda
