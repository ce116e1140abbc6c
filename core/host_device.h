// Marks functions that both the host compiler and nvcc build: the shared
// formulas and addressing that CPU kernels, CUDA kernels and the C++ tests
// (which run device code on the CPU) use alike.
#pragma once

#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#define EMBER_UNROLL _Pragma("unroll")
#else
#define EMBER_HOST_DEVICE
#define EMBER_UNROLL
#endif
