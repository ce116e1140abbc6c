// The GPU FFT engine under ember.fft (cuFFT), with the contract of the CPU
// one (core/cpu/fft_kernel.h): batched, strided 1-D transforms over raw
// device arrays of std::complex<float|double> / float|double, unnormalized,
// transform b reading in[b*in_dist + j*in_stride] and writing
// out[b*out_dist + k*out_stride] (element counts). No CUDA headers here: the
// core calls these; a CPU build links cuda/no_cuda_fft.cpp.
//
// Differences from the CPU engine, which the front-end must respect:
// - strides and dists are >= 0 (cuFFT's layouts cannot walk backwards);
// - out and in either do not overlap at all, or (fft_c2c only) are the same
//   array with the same strides and dists, an in-place transform;
// - the work runs asynchronously on the device's current stream.
// `device` is the GPU holding both arrays (-1: the current device).
#pragma once
#include <complex>
#include <cstdint>

namespace ember::cuda {

template <class T>
void fft_c2c(const std::complex<T>* in, int64_t in_stride, int64_t in_dist, std::complex<T>* out,
             int64_t out_stride, int64_t out_dist, int64_t n, int64_t batch, bool inverse, int device = -1);

// n reals -> the first n/2+1 bins of their forward transform.
template <class T>
void fft_r2c(const T* in, int64_t in_stride, int64_t in_dist, std::complex<T>* out, int64_t out_stride,
             int64_t out_dist, int64_t n, int64_t batch, int device = -1);

// n/2+1 bins of a Hermitian spectrum -> the n reals of its unscaled inverse.
// The input is left untouched (cuFFT's complex-to-real transforms overwrite
// theirs, so it runs on a copy).
template <class T>
void fft_c2r(const std::complex<T>* in, int64_t in_stride, int64_t in_dist, T* out, int64_t out_stride,
             int64_t out_dist, int64_t n, int64_t batch, int device = -1);

// Drops the cached cuFFT plans (of every device).
void fft_clear_plan_cache();

// The engine's instantiations for one precision T, made by cuda/fft.cpp and,
// in a CPU build, by cuda/no_cuda_fft.cpp.
#define EMBER_CUDA_FFT_INSTANTIATE(T)                                                                             \
  template void fft_c2c<T>(const std::complex<T>*, int64_t, int64_t, std::complex<T>*, int64_t, int64_t, int64_t, \
                           int64_t, bool, int);                                                                   \
  template void fft_r2c<T>(const T*, int64_t, int64_t, std::complex<T>*, int64_t, int64_t, int64_t, int64_t, int); \
  template void fft_c2r<T>(const std::complex<T>*, int64_t, int64_t, T*, int64_t, int64_t, int64_t, int64_t, int);

}  // namespace ember::cuda
