// CUDA kernels of clamp (a scalar or tensor range), declared in
// cuda/unary.h: the device functors of cuda/device/unary_ops.cuh run by the
// elementwise launcher. A file of their own so that nvcc compiles them beside
// cuda/unary.cu.
#include <ember/cuda/unary.h>

#include <ember/core/error.h>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/loops.cuh>
#include <ember/cuda/device/math.cuh>
#include <ember/cuda/device/unary_ops.cuh>

namespace ember::cuda {

namespace {

using namespace unary_ops;

template <class T>
void clamp_typed(const TensorIterator& it, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  visit_clamp<T>(lo, hi, [&](auto f) { launch<T, T>(it, f); });
}

template <class T>
void clamp_tensor_typed(Tensor& out, const Tensor& in, const Tensor& lo, const Tensor& hi) {
  if (lo.defined() && hi.defined()) {
    launch<T, T, T, T>(TensorIterator({out, in, lo, hi}), ClampTensorBoth<T>{});
  } else if (lo.defined()) {
    launch<T, T, T>(TensorIterator({out, in, lo}), ClampTensorMin<T>{});
  } else {
    launch<T, T, T>(TensorIterator({out, in, hi}), ClampTensorMax<T>{});
  }
}

}  // namespace

void clamp(Tensor& out, const Tensor& in, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "clamp", clamp_typed<T>(it, lo, hi));
}

void clamp_tensor(Tensor& out, const Tensor& in, const Tensor& lo, const Tensor& hi) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(in, out), l = kernel_operand(lo, out), h = kernel_operand(hi, out);
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "clamp", clamp_tensor_typed<T>(out, x, l, h));
}

}  // namespace ember::cuda
