// CUDA kernels of pow (a scalar or tensor exponent), declared in
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
void pow_scalar_typed(const TensorIterator& it, const Scalar& exponent) {
  if (!visit_pow_scalar<T>(exponent, [&](auto f) { launch<T, T>(it, f); })) {
    throw TypeError("pow: bool tensors are not supported");
  }
}

template <class T>
void pow_typed(const TensorIterator& it) {
  if (!visit_pow<T>([&](auto f) { launch<T, T, T>(it, f); })) throw TypeError("pow: bool tensors are not supported");
}

}  // namespace

void pow_scalar(Tensor& out, const Tensor& in, const Scalar& exponent) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "pow", pow_scalar_typed<T>(it, exponent));
}

void pow(Tensor& out, const Tensor& base, const Tensor& exponent) {
  DeviceGuard guard(out.device().index);
  const Tensor b = kernel_operand(base, out), e = kernel_operand(exponent, out);
  TensorIterator it({out, b, e});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "pow", pow_typed<T>(it));
}

}  // namespace ember::cuda
