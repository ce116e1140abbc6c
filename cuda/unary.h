// CUDA kernels of the unary family (cuda/unary.cu), with the signatures of
// core/cpu/unary.h: the front-end has chosen the dtypes (half types arrive as
// float32, except for unary(), which computes them in float itself) and `out`
// may alias `in`. No CUDA headers here, so the front-ends
// include it in every build (cuda/no_cuda_elementwise.cpp stands in without CUDA).
#pragma once
#include <optional>

#include <ember/core/cpu/unary.h>
#include <ember/core/tensor.h>

namespace ember::cuda {

void unary(UnaryOp op, Tensor& out, const Tensor& in);
void softplus(Tensor& out, const Tensor& in, double beta, double threshold);
void clamp(Tensor& out, const Tensor& in, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi);
void clamp_tensor(Tensor& out, const Tensor& in, const Tensor& lo, const Tensor& hi);
void pow_scalar(Tensor& out, const Tensor& in, const Scalar& exponent);
void pow(Tensor& out, const Tensor& base, const Tensor& exponent);
void nan_to_num(Tensor& out, const Tensor& in, double nan, double posinf, double neginf);
void in_range_mask(Tensor& out, const Tensor& in, std::optional<double> lo, std::optional<double> hi);
void isfinite_mask(Tensor& out, const Tensor& in);
void keep_where(Tensor& out, const Tensor& value, const Tensor& keep);

// An input as the elementwise launcher takes it for an output like `like`:
// tensors on its device unchanged, a CPU 0-d operand (a wrapped Python
// number) unchanged too (its value travels in the launch arguments), any
// other tensor copied to the device.
Tensor kernel_operand(const Tensor& t, const Tensor& like);

}  // namespace ember::cuda
