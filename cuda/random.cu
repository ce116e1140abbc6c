// Philox4x32-10 random fills on the GPU. One thread per 128-bit counter block
// fills the elements whose words lie in it (core/cpu/random.h gives the
// layout), so results do not depend on the launch shape. The Philox block,
// the per-element and the normal kernels and the per-op formulas are in
// cuda/device/random_kernels.cuh; this file launches them.
#include <ember/cuda/random.h>

#include <cstdint>
#include <type_traits>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/random_kernels.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

constexpr int kThreads = 256;

int grid_for(int64_t threads) {
  const int64_t b = (threads + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

template <class T, class F>
void per_element(Tensor& out, int words, const PhiloxStream& s, F f) {
  const int64_t n = out.numel();
  if (n == 0) return;
  DeviceGuard guard(out.device().index);
  per_element_kernel<T><<<grid_for((n * words + 3) / 4), kThreads, 0, current_cuda_stream()>>>(
      out.data<T>(), n, words, s.seed, s.offset, f);
  EMBER_CUDA_KERNEL_CHECK();
}

template <class T>
constexpr bool kFloating = std::is_floating_point_v<T> || std::is_same_v<T, __half> ||
                           std::is_same_v<T, __nv_bfloat16>;

template <class F>
void by_float_dtype(const Tensor& out, const char* op, F f) {
  dispatch_device(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!kFloating<T>) {
      throw Error(str(op, ": expected a floating point tensor, got ", dtype_name(out.dtype())));
    } else {
      f(tag);
    }
  });
}

template <class T>
void uniform_typed(Tensor& out, double from, double to, const PhiloxStream& s) {
  const int words = out.dtype() == DType::Float64 ? 2 : 1;
  const double range = to - from;
  per_element<T>(out, words, s, UniformOp<T>{from, to, range, words});
}

}  // namespace

void uniform(Tensor& out, double from, double to, const PhiloxStream& s) {
  by_float_dtype(out, "uniform_", [&](auto tag) { uniform_typed<typename decltype(tag)::type>(out, from, to, s); });
}

void normal(Tensor& out, double mean, double std, const PhiloxStream& s) {
  by_float_dtype(out, "normal_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = out.numel();
    if (n == 0) return;
    const int words = out.dtype() == DType::Float64 ? 2 : 1;
    DeviceGuard guard(out.device().index);
    normal_kernel<T><<<grid_for(((n + (n & 1)) * words + 3) / 4), kThreads, 0, current_cuda_stream()>>>(
        out.data<T>(), n, words, s.seed, s.offset, mean, std);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

template <class T>
void randint_typed(Tensor& out, int64_t low, uint64_t range, const PhiloxStream& s) {
  const int words = range == 0 || range > 0xFFFFFFFFull ? 2 : 1;
  per_element<T>(out, words, s, RandintOp<T>{low, range, words});
}

void randint(Tensor& out, int64_t low, uint64_t range, const PhiloxStream& s) {
  dispatch_device(out.dtype(), [&](auto tag) { randint_typed<typename decltype(tag)::type>(out, low, range, s); });
}

template <class T>
void bernoulli_tensor_typed(Tensor& out, const double* prob, const PhiloxStream& s) {
  per_element<T>(out, 1, s, BernoulliTensorOp<T>{prob});
}

void bernoulli(Tensor& out, const Tensor& p, const PhiloxStream& s) {
  EMBER_CHECK(p.device() == out.device() && p.dtype() == DType::Float64 && p.is_contiguous(), Error,
              "bernoulli_: the CUDA kernel needs p as contiguous float64 on ", out.device().str());
  const double* prob = p.data<double>();
  dispatch_device(out.dtype(), [&](auto tag) { bernoulli_tensor_typed<typename decltype(tag)::type>(out, prob, s); });
}

template <class T>
void bernoulli_scalar_typed(Tensor& out, double prob, const PhiloxStream& s) {
  per_element<T>(out, 1, s, BernoulliScalarOp<T>{prob});
}

void bernoulli(Tensor& out, double p, const PhiloxStream& s) {
  dispatch_device(out.dtype(), [&](auto tag) { bernoulli_scalar_typed<typename decltype(tag)::type>(out, p, s); });
}

template <class T>
void exponential_typed(Tensor& out, double lambd, const PhiloxStream& s) {
  const int words = out.dtype() == DType::Float64 ? 2 : 1;
  per_element<T>(out, words, s, ExponentialOp<T>{lambd, words});
}

void exponential(Tensor& out, double lambd, const PhiloxStream& s) {
  by_float_dtype(out, "exponential_", [&](auto tag) { exponential_typed<typename decltype(tag)::type>(out, lambd, s); });
}

}  // namespace ember::cuda
