// The CPU FFT engine under ember.fft: batched, strided 1-D transforms over raw
// std::complex<float|double> / float|double arrays (no Tensor, no dtype enum:
// the front-end dispatches and lays out the batch).
//
// Every length n >= 1 runs in O(n log n): mixed-radix Stockham passes
// (radix 8, 4, 2, 3, 5 and a generic odd radix up to 13), and Bluestein's
// chirp-z through a power-of-two FFT when n has a larger prime factor. A
// batch runs in blocks of transforms side by side in SIMD lanes
// (fft_lanes.h), a single long transform as a grid of shorter ones
// (fft_grid.cpp).
// Twiddles are computed in (long) double also for float. Plans are cached per
// (length, precision), so repeated transforms of one length reuse them.
//
// Layout: transform b (of `batch`) reads in[b*in_dist + j*in_stride] and
// writes out[b*out_dist + k*out_stride]; strides and dists count elements
// (complex elements for complex arrays). Each block of transforms is staged
// through a private buffer, so out may be the very array in is (an in-place
// transform) as long as no transform writes what another one reads. Blocks
// are spread over ember's CPU threads when there is enough work.
//
// Normalization is the caller's: the forward transform is
//   X[k] = sum_j x[j] exp(-2πi jk/n)
// and the inverse the same sum with exp(+2πi jk/n), unscaled (multiply by
// 1/n for numpy's and PyTorch's norm="backward" inverse).
#pragma once
#include <complex>
#include <cstdint>

namespace ember::cpu {

// Complex to complex, n complex values to n complex values per transform.
template <class T>
void fft_c2c(const std::complex<T>* in, int64_t in_stride, int64_t in_dist, std::complex<T>* out,
             int64_t out_stride, int64_t out_dist, int64_t n, int64_t batch, bool inverse);

// Real to complex (rfft): n reals to the first n/2+1 bins of their forward
// transform (the others are their conjugates).
template <class T>
void fft_r2c(const T* in, int64_t in_stride, int64_t in_dist, std::complex<T>* out, int64_t out_stride,
             int64_t out_dist, int64_t n, int64_t batch);

// Complex to real (irfft): n/2+1 bins of a Hermitian spectrum to the n reals
// of its unscaled inverse transform. Like numpy and PyTorch, the imaginary
// parts of bin 0 and (even n) bin n/2 are ignored: they cannot belong to the
// spectrum of a real signal.
template <class T>
void fft_c2r(const std::complex<T>* in, int64_t in_stride, int64_t in_dist, T* out, int64_t out_stride,
             int64_t out_dist, int64_t n, int64_t batch);

}  // namespace ember::cpu
