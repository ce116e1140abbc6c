// Norm family front-ends: checks, fused CPU kernels (core/cpu/norm.cpp) and
// the autograd node with the analytic backward (autograd/functions/norm.cpp).
// float16 / bfloat16 inputs are computed in float32 and cast back.
#include <ember/core/ops/norm.h>
#include <ember/core/autocast.h>

#include <limits>

#include <ember/autograd/functions/norm.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/norm.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/unary.h>
#include <ember/cuda/norm.h>

namespace ember {

namespace functions = autograd::functions;

namespace {

Tensor scalar_like(const Tensor& x, double v) { return full({}, v, x.dtype(), x.device()); }

// cuda_ok: the op has CUDA kernels (the row norms); others are CPU-only for now.
void check_input(const Tensor& x, const char* op, bool cuda_ok = false) {
  EMBER_CHECK(x.defined(), Error, op, ": expected a defined input tensor");
  EMBER_CHECK(x.device().is_cpu() || (cuda_ok && x.device().is_cuda()), NotImplementedError, op,
              ": only the CPU is supported in this build");
  EMBER_CHECK(is_floating(x.dtype()), Error, op, ": expected a floating point input, got ", dtype_name(x.dtype()));
}

void check_param(const Tensor& p, const Shape& shape, const char* op, const char* what, const Device& dev = kCPU) {
  if (!p.defined()) return;
  EMBER_CHECK(p.shape() == shape, Error, op, ": expected ", what, " of shape ", shape_str(shape), ", got ",
              shape_str(p.shape()));
  if (dev.is_cuda()) {
    EMBER_CHECK(p.device() == dev, Error, op, ": expected ", what, " on ", dev.str(), " like the input, but it is on ",
                p.device().str());
    return;
  }
  EMBER_CHECK(p.device().is_cpu(), NotImplementedError, op, ": ", what, " is on ", p.device().str(),
              " but only the CPU is supported in this build");
}

DType compute_dtype(DType t) { return is_half(t) ? DType::Float32 : t; }

// A detached, contiguous copy in the compute dtype for the kernels (undefined stays undefined).
Tensor prepared(const Tensor& t, DType compute) {
  if (!t.defined()) return t;
  const Tensor d = t.detach();
  return (d.dtype() == compute ? d : d.to(compute)).contiguous();
}

Tensor finish(Tensor out, DType dtype) { return out.dtype() == dtype ? out : out.to(dtype); }

// Row norm of x [rows, cols] into out/mean/rstd, allocated here. The CPU
// computes half types in float32 and casts back; the GPU kernel reads and
// writes them directly. The statistics are float32 (float64 for float64).
Tensor run_row_norm(const Tensor& input, const Shape& out_shape, Tensor& mean, Tensor& rstd, const Shape& stat_shape,
                    const Tensor& weight, const Tensor& bias, int64_t rows, int64_t cols, double eps, bool rms) {
  const DType compute = compute_dtype(input.dtype());
  const bool on_cuda = input.device().is_cuda();
  const Tensor x = prepared(input, on_cuda ? input.dtype() : compute);
  Tensor out = empty(out_shape, on_cuda ? input.dtype() : compute, input.device());
  mean = rms ? Tensor() : empty(stat_shape, compute, input.device());
  rstd = empty(stat_shape, compute, input.device());
  if (out.numel() > 0) {
    if (on_cuda) {
      cuda::row_norm(out, mean, rstd, x, prepared(weight, compute), prepared(bias, compute), rows, cols, eps, rms);
    } else {
      cpu::row_norm(out, mean, rstd, x, prepared(weight, compute), prepared(bias, compute), rows, cols, eps, rms);
    }
  }
  return finish(out, input.dtype());
}

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  const char* op = "batch_norm";
  check_input(input, op, /*cuda_ok=*/true);
  EMBER_CHECK(input.dim() >= 2, ValueError, op, ": expected an input of at least 2 dims (N, C, ...), got ",
              shape_str(input.shape()));
  const int64_t n = input.size(0), channels = input.size(1);
  int64_t inner = 1;
  for (int64_t d = 2; d < input.dim(); ++d) inner *= input.size(d);
  for (const auto& [t, what] : {std::pair{weight, "weight"}, {bias, "bias"}, {running_mean, "running_mean"},
                                {running_var, "running_var"}}) {
    check_param(t, {channels}, op, what, input.device());
  }
  if (!training) {
    EMBER_CHECK(running_mean.defined() && running_var.defined(), Error, op,
                ": running_mean and running_var must be given when training=False");
  } else {
    EMBER_CHECK(n * inner > 1, ValueError, op, ": expected more than 1 value per channel when training, got input size ",
                shape_str(input.shape()));
  }
  if (!training && autograd::any_requires_grad({running_mean, running_var})) {
    // Gradients for the running statistics themselves: compose ember ops.
    Shape cs(static_cast<size_t>(input.dim()), 1);
    cs[1] = channels;
    const Tensor rv = running_var.reshape(cs);
    Tensor y = mul(sub(input, running_mean.reshape(cs)), rsqrt(add(rv, scalar_like(rv, eps))));
    if (weight.defined()) y = mul(y, weight.reshape(cs));
    if (bias.defined()) y = add(y, bias.reshape(cs));
    return y;
  }
  const DType compute = compute_dtype(input.dtype());
  const Tensor x = prepared(input, compute);
  const Shape stat_shape{1, channels, 1};
  Tensor mean, rstd;
  if (training) {
    mean = empty(stat_shape, compute, input.device());
    Tensor var = empty(stat_shape, compute, input.device());
    if (x.numel() > 0 && x.device().is_cuda()) {
      cuda::channel_moments(mean, var, x, n, channels, inner);
    } else if (x.numel() > 0) {
      cpu::channel_moments(mean, var, x, n, channels, inner);
    }
    rstd = rsqrt(add(var, scalar_like(var, eps)));
    // The running statistics are buffers: updated in place, outside the graph.
    autograd::NoGradGuard no_grad;
    if (running_mean.defined()) {
      Tensor target = running_mean;
      target.mul_(scalar_like(target, 1.0 - momentum));
      target.add_(mean.reshape({channels}).to(target.dtype()), momentum);
    }
    if (running_var.defined()) {
      Tensor target = running_var;
      const double unbias = static_cast<double>(n * inner) / static_cast<double>(n * inner - 1);
      target.mul_(scalar_like(target, 1.0 - momentum));
      target.add_(var.reshape({channels}).to(target.dtype()), momentum * unbias);
    }
  } else {
    mean = prepared(running_mean, compute).reshape(stat_shape);
    const Tensor rv = prepared(running_var, compute).reshape(stat_shape);
    rstd = rsqrt(add(rv, scalar_like(rv, eps)));
  }
  // y = x * scale + shift per channel, one pass.
  const Tensor w = prepared(weight, compute), b = prepared(bias, compute);
  const Tensor scale = (w.defined() ? mul(rstd.reshape({channels}), w) : rstd.reshape({channels})).contiguous();
  Tensor shift = neg(mul(mean.reshape({channels}), scale));
  if (b.defined()) shift = add(shift, b);
  shift = shift.contiguous();
  Tensor out = empty({n, channels, inner}, compute, input.device());
  if (out.numel() > 0 && x.device().is_cuda()) {
    cuda::channel_affine(out, x, scale, shift, n, channels, inner);
  } else if (out.numel() > 0) {
    cpu::channel_affine(out, x, scale, shift, n, channels, inner);
  }
  out = finish(out.reshape(input.shape()), input.dtype());
  if (autograd::any_requires_grad({input, weight, bias})) {
    functions::NormSpec spec{{n, channels, inner}, {0, 2}, stat_shape, {channels}, eps, false, training, true};
    autograd::record("NativeBatchNormBackward0", {input, weight, bias}, {out}, {input, weight, mean, rstd},
                     functions::normalize_backward(spec));
  }
  return out;
}

namespace {

// layer_norm and rms_norm: rows of the trailing normalized_shape dims.
Tensor row_normalize(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                     double eps, bool rms, const char* op) {
  check_input(input, op, /*cuda_ok=*/true);
  const int64_t k = static_cast<int64_t>(normalized_shape.size()), nd = input.dim();
  bool ok = k >= 1 && k <= nd;
  for (int64_t i = 0; ok && i < k; ++i) ok = input.size(nd - k + i) == normalized_shape[i];
  EMBER_CHECK(ok, Error, op, ": normalized_shape ", shape_str(normalized_shape),
              " does not match the trailing dims of the input of shape ", shape_str(input.shape()));
  check_param(weight, normalized_shape, op, "weight", input.device());
  check_param(bias, normalized_shape, op, "bias", input.device());
  int64_t rows = 1, cols = 1;
  Shape stat_shape, w_view;
  Dims dims;
  for (int64_t d = 0; d < nd; ++d) {
    const bool normalized = d >= nd - k;
    (normalized ? cols : rows) *= input.size(d);
    stat_shape.push_back(normalized ? 1 : input.size(d));
    w_view.push_back(normalized ? input.size(d) : 1);
    if (normalized) dims.push_back(d);
  }
  Tensor mean, rstd;
  Tensor out = run_row_norm(input, input.shape(), mean, rstd, stat_shape, weight, bias, rows, cols, eps, rms);
  if (autograd::any_requires_grad({input, weight, bias})) {
    functions::NormSpec spec{input.shape(), dims, w_view, normalized_shape, eps, rms, true};
    autograd::record(rms ? "RmsNormBackward0" : "NativeLayerNormBackward0", {input, weight, bias}, {out},
                     {input, weight, mean, rstd}, functions::normalize_backward(spec));
  }
  return out;
}

}  // namespace

Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  if (autocast::Scope ac{"layer_norm", input, weight, bias}; ac)
    return layer_norm(ac[0], normalized_shape, ac[1], ac[2], eps);
  return row_normalize(input, normalized_shape, weight, bias, eps, false, "layer_norm");
}

Tensor rms_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, std::optional<double> eps) {
  if (autocast::Scope ac{"rms_norm", input, weight}; ac) return rms_norm(ac[0], normalized_shape, ac[1], eps);
  double e;
  if (eps) e = *eps;
  else if (input.defined() && input.dtype() == DType::Float64) e = std::numeric_limits<double>::epsilon();
  else if (input.defined() && input.dtype() == DType::Float16) e = 0.0009765625;     // 2^-10
  else if (input.defined() && input.dtype() == DType::BFloat16) e = 0.0078125;       // 2^-7
  else e = std::numeric_limits<float>::epsilon();
  return row_normalize(input, normalized_shape, weight, Tensor(), e, true, "rms_norm");
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  if (autocast::Scope ac{"group_norm", input, weight, bias}; ac)
    return group_norm(ac[0], num_groups, ac[1], ac[2], eps);
  const char* op = "group_norm";
  check_input(input, op, /*cuda_ok=*/true);
  EMBER_CHECK(input.dim() >= 2, Error, op, ": expected an input of at least 2 dims (N, C, ...), got ",
              shape_str(input.shape()));
  const int64_t n = input.size(0), channels = input.size(1);
  EMBER_CHECK(num_groups > 0 && channels % num_groups == 0, Error, op, ": expected the number of channels (",
              channels, ") to be divisible by num_groups (", num_groups, ")");
  check_param(weight, {channels}, op, "weight", input.device());
  check_param(bias, {channels}, op, "bias", input.device());
  int64_t inner = 1;
  for (int64_t d = 2; d < input.dim(); ++d) inner *= input.size(d);
  const int64_t cols = channels / num_groups * inner;
  Tensor mean, rstd;
  Tensor y = run_row_norm(input, {n, num_groups, cols}, mean, rstd, {n, num_groups, 1}, Tensor(), Tensor(),
                          n * num_groups, cols, eps, false)
                 .reshape(input.shape());
  if (autograd::any_requires_grad({input})) {
    functions::NormSpec spec{{n, num_groups, cols}, {2}, {}, {}, eps, false, true};
    autograd::record("NativeGroupNormBackward0", {input}, {y}, {input, Tensor(), mean, rstd},
                     functions::normalize_backward(spec));
  }
  // The per-channel affine as ops (its own nodes).
  Shape channel_shape(static_cast<size_t>(input.dim()), 1);
  channel_shape[1] = channels;
  if (weight.defined()) y = mul(y, weight.reshape(channel_shape));
  if (bias.defined()) y = add(y, bias.reshape(channel_shape));
  return y;
}

}  // namespace ember
