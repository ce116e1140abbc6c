// Multi-tensor SGD, Adam/AdamW, RMSprop and Adagrad on the GPU. The host
// cuts every parameter into chunks of kChunk elements and describes each chunk
// (its pointers, its length and its parameter's per-step scalars) in one array
// copied to the device; one block per chunk then applies the same
// per-element update as core/cpu/optim.cpp, in the same order of operations.
// One launch per dtype per step, not one per tensor. The kernels and the
// chunking are in cuda/device/optim_kernels.cuh; this file launches them.
#include <ember/cuda/optim.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include <cuda_runtime.h>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/cuda_api.h>
#include <ember/cuda/device/optim_kernels.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

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
  const SgdArgs<T> s = sgd_args<T>(o);
  run_chunks(sgd_chunks<T>(params, grads, momentum_buffers, init_buffer, o, dtype, index), index,
             [&](const SgdChunk<T>* dev, unsigned blocks, cudaStream_t stream) {
               sgd_kernel<T><<<blocks, kOptimThreads, 0, stream>>>(dev, s);
             });
}

template <class T>
void adam_typed(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& step, const AdamOptions& o,
                DType dtype, int index) {
  const AdamArgs<T> s = adam_args<T>(o);
  run_chunks(adam_chunks<T>(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, step, o, dtype, index), index,
             [&](const AdamChunk<T>* dev, unsigned blocks, cudaStream_t stream) {
               adam_kernel<T><<<blocks, kOptimThreads, 0, stream>>>(dev, s);
             });
}

template <class T>
void rmsprop_typed(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
                   const std::vector<Tensor>& momentum_buffers, const RmspropOptions& o, DType dtype, int index) {
  const RmspropArgs<T> s = rmsprop_args<T>(o);
  run_chunks(rmsprop_chunks<T>(params, grads, square_avgs, grad_avgs, momentum_buffers, o, dtype, index), index,
             [&](const RmspropChunk<T>* dev, unsigned blocks, cudaStream_t stream) {
               rmsprop_kernel<T><<<blocks, kOptimThreads, 0, stream>>>(dev, s);
             });
}

template <class T>
void adagrad_typed(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& state_sums, const std::vector<double>& step, const AdagradOptions& o,
                   DType dtype, int index) {
  const AdagradArgs<T> s = adagrad_args<T>(o);
  run_chunks(adagrad_chunks<T>(params, grads, state_sums, step, o, dtype, index), index,
             [&](const AdagradChunk<T>* dev, unsigned blocks, cudaStream_t stream) {
               adagrad_kernel<T><<<blocks, kOptimThreads, 0, stream>>>(dev, s);
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
