// Norm family front-ends. Each normalization is composed of ember ops
// (reductions, rsqrt, broadcasting arithmetic), so autograd, including double
// backward through the batch statistics, comes from those ops' formulas.
#include <ember/core/ops/norm.h>

#include <limits>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/unary.h>

namespace ember {

namespace {

Tensor scalar_like(const Tensor& x, double v) { return full({}, v, x.dtype(), x.device()); }

void check_input(const Tensor& x, const char* op) {
  EMBER_CHECK(x.defined(), Error, op, ": expected a defined input tensor");
  EMBER_CHECK(x.device().is_cpu(), NotImplementedError, op, ": only the CPU is supported in this build");
  EMBER_CHECK(is_floating(x.dtype()), Error, op, ": expected a floating point input, got ", dtype_name(x.dtype()));
}

// A per-channel vector (weight, bias, running stat) of length C, checked and
// viewed as (1, C, 1, ...) to broadcast against an input of `ndim` dims.
Tensor channel_view(const Tensor& v, int64_t channels, int64_t ndim, const char* op, const char* what) {
  EMBER_CHECK(v.dim() == 1 && v.size(0) == channels, Error, op, ": expected ", what, " of shape [", channels,
              "], got ", shape_str(v.shape()));
  Shape s(static_cast<size_t>(ndim), 1);
  s[1] = channels;
  return v.reshape(s);
}

// (x - mean) * rsqrt(var + eps) with biased statistics over `dims`.
Tensor standardize(const Tensor& x, const Dims& dims, double eps) {
  const Tensor mu = mean(x, dims, /*keepdim=*/true);
  const Tensor centered = sub(x, mu);
  const Tensor var = mean(square(centered), dims, /*keepdim=*/true);
  return mul(centered, rsqrt(add(var, scalar_like(var, eps))));
}

Tensor affine(Tensor y, const Tensor& w, const Tensor& b) {
  if (w.defined()) y = mul(y, w);
  if (b.defined()) y = add(y, b);
  return y;
}

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  const char* op = "batch_norm";
  check_input(input, op);
  EMBER_CHECK(input.dim() >= 2, ValueError, op, ": expected an input of at least 2 dims (N, C, ...), got ",
              shape_str(input.shape()));
  const int64_t nd = input.dim(), channels = input.size(1);
  Dims dims{0};
  int64_t per_channel = input.size(0);
  for (int64_t d = 2; d < nd; ++d) {
    dims.push_back(d);
    per_channel *= input.size(d);
  }
  const Tensor w = weight.defined() ? channel_view(weight, channels, nd, op, "weight") : Tensor();
  const Tensor b = bias.defined() ? channel_view(bias, channels, nd, op, "bias") : Tensor();
  const Tensor rm = running_mean.defined() ? channel_view(running_mean, channels, nd, op, "running_mean") : Tensor();
  const Tensor rv = running_var.defined() ? channel_view(running_var, channels, nd, op, "running_var") : Tensor();
  if (!training) {
    EMBER_CHECK(rm.defined() && rv.defined(), Error, op,
                ": running_mean and running_var must be given when training=False");
    const Tensor y = mul(sub(input, rm), rsqrt(add(rv, scalar_like(rv, eps))));
    return affine(y, w, b);
  }
  EMBER_CHECK(per_channel > 1, ValueError, op, ": expected more than 1 value per channel when training, got input size ",
              shape_str(input.shape()));
  const Tensor mu = mean(input, dims, /*keepdim=*/true);
  const Tensor centered = sub(input, mu);
  const Tensor var = mean(square(centered), dims, /*keepdim=*/true);
  if (rm.defined() || rv.defined()) {
    // The running statistics are buffers: updated in place, outside the graph.
    autograd::NoGradGuard no_grad;
    if (rm.defined()) {
      Tensor target = running_mean;
      target.mul_(scalar_like(target, 1.0 - momentum));
      target.add_(mu.detach().reshape({channels}).to(target.dtype()), momentum);
    }
    if (rv.defined()) {
      Tensor target = running_var;
      const double unbias = static_cast<double>(per_channel) / static_cast<double>(per_channel - 1);
      target.mul_(scalar_like(target, 1.0 - momentum));
      target.add_(var.detach().reshape({channels}).to(target.dtype()), momentum * unbias);
    }
  }
  const Tensor y = mul(centered, rsqrt(add(var, scalar_like(var, eps))));
  return affine(y, w, b);
}

namespace {

// The trailing dims covered by normalized_shape, after checking that it matches.
Dims trailing_dims(const Tensor& x, const Shape& normalized_shape, const char* op) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool ok = k >= 1 && k <= x.dim();
  for (int64_t i = 0; ok && i < k; ++i) ok = x.size(x.dim() - k + i) == normalized_shape[i];
  EMBER_CHECK(ok, Error, op, ": normalized_shape ", shape_str(normalized_shape),
              " does not match the trailing dims of the input of shape ", shape_str(x.shape()));
  Dims dims;
  for (int64_t i = x.dim() - k; i < x.dim(); ++i) dims.push_back(i);
  return dims;
}

void check_param(const Tensor& p, const Shape& shape, const char* op, const char* what) {
  if (!p.defined()) return;
  EMBER_CHECK(p.shape() == shape, Error, op, ": expected ", what, " of shape ", shape_str(shape), ", got ",
              shape_str(p.shape()));
}

}  // namespace

Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  const char* op = "layer_norm";
  check_input(input, op);
  const Dims dims = trailing_dims(input, normalized_shape, op);
  check_param(weight, normalized_shape, op, "weight");
  check_param(bias, normalized_shape, op, "bias");
  return affine(standardize(input, dims, eps), weight, bias);
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  const char* op = "group_norm";
  check_input(input, op);
  EMBER_CHECK(input.dim() >= 2, Error, op, ": expected an input of at least 2 dims (N, C, ...), got ",
              shape_str(input.shape()));
  const int64_t n = input.size(0), channels = input.size(1);
  EMBER_CHECK(num_groups > 0 && channels % num_groups == 0, Error, op, ": expected the number of channels (",
              channels, ") to be divisible by num_groups (", num_groups, ")");
  const Tensor w = weight.defined() ? channel_view(weight, channels, input.dim(), op, "weight") : Tensor();
  const Tensor b = bias.defined() ? channel_view(bias, channels, input.dim(), op, "bias") : Tensor();
  if (input.numel() == 0) return affine(input.reshape(input.shape()), w, b);
  const Tensor grouped = input.reshape({n, num_groups, -1});
  const Tensor y = standardize(grouped, {2}, eps).reshape(input.shape());
  return affine(y, w, b);
}

Tensor rms_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, std::optional<double> eps) {
  const char* op = "rms_norm";
  check_input(input, op);
  const Dims dims = trailing_dims(input, normalized_shape, op);
  check_param(weight, normalized_shape, op, "weight");
  double e;
  if (eps) e = *eps;
  else if (input.dtype() == DType::Float64) e = std::numeric_limits<double>::epsilon();
  else if (input.dtype() == DType::Float16) e = 0.0009765625;
  else if (input.dtype() == DType::BFloat16) e = 0.0078125;
  else e = std::numeric_limits<float>::epsilon();
  const Tensor ms = mean(square(input), dims, /*keepdim=*/true);
  Tensor y = mul(input, rsqrt(add(ms, scalar_like(ms, e))));
  if (weight.defined()) y = mul(y, weight);
  return y;
}

}  // namespace ember
