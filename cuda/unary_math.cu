// CUDA kernels of the extra math functions: the formulas of
// cuda/device/unary_math_ops.cuh run by the elementwise launcher
// (cuda/device/loops.cuh); half types are computed in float and rounded once.
#include <ember/cuda/unary_math.h>

#include <ember/core/error.h>
#include <ember/cuda/device/binary_ops.cuh>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/loops.cuh>
#include <ember/cuda/device/unary_math_ops.cuh>
#include <ember/cuda/device/unary_ops.cuh>
#include <ember/cuda/unary.h>

namespace ember::cuda {

namespace {

// Runs f<S, T>() with S the stored element type of `dtype` and T the type it
// computes in (float for the half types).
template <class F>
void dispatch_float(DType dtype, const char* op, F f) {
  switch (dtype) {
    case DType::Float32: return f.template operator()<float, float>();
    case DType::Float64: return f.template operator()<double, double>();
    case DType::Float16: return f.template operator()<__half, float>();
    case DType::BFloat16: return f.template operator()<__nv_bfloat16, float>();
    default: throw Error(str(op, ": the CUDA kernel needs a floating point dtype, got ", dtype_name(dtype)));
  }
}

struct UnaryLaunch {
  MathOp op;
  const TensorIterator& it;
  template <class S, class T>
  void operator()() const {
    math_ops::visit_unary_math<T>(op, [&](auto f) { launch<S, S>(it, unary_ops::stored_as<S, T>(f)); });
  }
};

struct BinaryLaunch {
  MathOp2 op;
  const TensorIterator& it;
  template <class S, class T>
  void operator()() const {
    math_ops::visit_binary_math<T>(op, [&](auto f) { launch<S, S, S>(it, binary_ops::stored2_as<S, T>(f)); });
  }
};

}  // namespace

void unary_math(MathOp op, Tensor& out, const Tensor& in) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(in, out);
  TensorIterator it({out, x});
  dispatch_float(out.dtype(), "unary_math", UnaryLaunch{op, it});
}

void binary_math(MathOp2 op, Tensor& out, const Tensor& a, const Tensor& b) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(a, out), y = kernel_operand(b, out);
  TensorIterator it({out, x, y});
  dispatch_float(out.dtype(), "binary_math", BinaryLaunch{op, it});
}

}  // namespace ember::cuda
