// embedding's kernels (cuda/nn_misc.cu launches them): a row gather forward
// and a backward that adds each gradient row into its weight row with
// atomicAdd, one thread per element in a grid-stride loop. Device code only,
// in a header so that tests/cpp/test_embedding_emulation.cpp runs the same
// source on the CPU (tests/cpp/cuda_emulation.h).
#pragma once
#include <cstdint>

#ifndef EMBER_CUDA_EMULATION  // tests/cpp/cuda_emulation.h stands in for these
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

// out[i, j] = weight[indices[i], j] over n rows of dim elements.
template <class T>
__global__ void gather_rows_kernel(T* out, const T* weight, const int64_t* indices, int64_t n, int64_t dim) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < n * dim; k += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = k / dim, j = k % dim;
    out[k] = weight[indices[i] * dim + j];
  }
}

// grad_weight[indices[i], j] += grad_rows[i, j] (grad_weight zeroed first).
template <class T>
__global__ void scatter_add_rows_kernel(T* grad_weight, const T* grad_rows, const int64_t* indices, int64_t n,
                                        int64_t dim) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < n * dim; k += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = k / dim, j = k % dim;
    atomicAdd(grad_weight + indices[i] * dim + j, grad_rows[k]);
  }
}

}  // namespace
}  // namespace ember::cuda
