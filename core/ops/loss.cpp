// Loss family front-ends. Each loss is composed of ember ops (log_softmax's
// fused kernel for cross_entropy, gather for the picked log-probabilities,
// stable softplus forms for the logits losses), so autograd and double
// backward come from those ops' formulas.
#include <ember/core/ops/loss.h>
#include <ember/core/autocast.h>

#include <limits>

#include <ember/autograd/functions/loss.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/loss.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/index.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/shape.h>
#include <ember/core/ops/softmax.h>
#include <ember/core/ops/unary.h>
#include <ember/cuda/loss.h>

namespace ember {

namespace {

enum class Reduction { None, Mean, Sum, BatchMean };

Reduction parse_reduction(const std::string& r, const char* op, bool allow_batchmean = false) {
  if (r == "none") return Reduction::None;
  if (r == "mean") return Reduction::Mean;
  if (r == "sum") return Reduction::Sum;
  if (allow_batchmean && r == "batchmean") return Reduction::BatchMean;
  EMBER_CHECK(false, ValueError, op, ": '", r, "' is not a valid value for reduction (expected 'none', 'mean'",
              allow_batchmean ? ", 'sum' or 'batchmean')" : " or 'sum')");
  return Reduction::None;
}

Tensor reduce(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::None: return loss;
    case Reduction::Sum: return sum(loss);
    default: return mean(loss);
  }
}

Tensor scalar_like(const Tensor& x, double v) { return full({}, v, x.dtype(), x.device()); }

void check_args(const Tensor& input, const Tensor& target, const char* op) {
  EMBER_CHECK(input.defined() && target.defined(), Error, op, ": expected defined input and target tensors");
  EMBER_CHECK(input.device() == target.device(), Error, op, ": expected input and target on the same device, but input is on ",
              input.device().str(), " and target on ", target.device().str());
  EMBER_CHECK(is_floating(input.dtype()), Error, op, ": expected a floating point input, got ",
              dtype_name(input.dtype()));
}

// The class dim of an nll/cross_entropy input: 0 for (C), 1 for (N, C, ...).
int64_t class_dim(const Tensor& input, const char* op) {
  EMBER_CHECK(input.dim() >= 1, ValueError, op, ": expected an input of at least 1 dim, got a 0-d tensor");
  return input.dim() == 1 ? 0 : 1;
}

void check_class_target(const Tensor& input, const Tensor& target, const char* op) {
  EMBER_CHECK(!is_floating(target.dtype()) && target.dtype() != DType::Bool, Error, op,
              ": expected class-index targets of an integer dtype (or class probabilities of the input's shape ",
              shape_str(input.shape()), "), got ", dtype_name(target.dtype()), " of shape ",
              shape_str(target.shape()));
  if (input.dim() == 1) {
    EMBER_CHECK(target.dim() == 0, Error, op, ": for an input of shape ", shape_str(input.shape()),
                " expected a 0-d target, got shape ", shape_str(target.shape()));
    return;
  }
  EMBER_CHECK(target.dim() >= 1 && target.size(0) == input.size(0), ValueError, op, ": expected input batch_size (",
              input.size(0), ") to match target batch_size (", target.dim() >= 1 ? target.size(0) : 0, ")");
  Shape expected = input.shape();
  expected.erase(expected.begin() + 1);
  EMBER_CHECK(target.shape() == expected, Error, op, ": size mismatch (got input: ", shape_str(input.shape()),
              ", target: ", shape_str(target.shape()), "); expected a target of shape ", shape_str(expected));
}

void check_class_weight(const Tensor& weight, int64_t classes, const char* op, const Device& dev) {
  if (!weight.defined()) return;
  EMBER_CHECK(weight.device() == dev, Error, op, ": expected weight on ", dev.str(), " like the input, but it is on ",
              weight.device().str());
  EMBER_CHECK(weight.dim() == 1 && weight.size(0) == classes, Error, op,
              ": weight should be defined for all ", classes, " classes or none, but got a weight of shape ",
              shape_str(weight.shape()));
}

// Every target that is not ignore_index must be a class in [0, classes).
void check_target_range(const Tensor& target, int64_t classes, int64_t ignore_index, const char* op) {
  // On the GPU the targets are copied back to check them (a synchronization;
  // PyTorch asserts on the device instead).
  const Tensor t = target.to(DType::Int64).to(kCPU).contiguous();
  const int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    EMBER_CHECK(p[i] == ignore_index || (p[i] >= 0 && p[i] < classes), IndexError, op, ": target ", p[i],
                " is out of bounds for ", classes, " classes");
  }
}

// total / weight_sum, the weighted mean of nll and cross_entropy. When every
// target is ignored it is 0/0 = NaN, as in PyTorch, with a zero gradient (the
// plain division's would be inf, and inf * 0 = NaN in every input's gradient).
Tensor weighted_mean(const Tensor& total, const Tensor& weight_sum) {
  const Tensor empty_batch = eq(weight_sum, scalar_like(weight_sum, 0.0));
  const Tensor safe = where(empty_batch, scalar_like(weight_sum, 1.0), weight_sum);
  return where(empty_batch, scalar_like(total, std::numeric_limits<double>::quiet_NaN()), div(total, safe));
}

// nll on log-probabilities, with PyTorch's weighted mean: sum(w_t * -logp_t)
// divided by the sum of the weights of the targets that are not ignored.
Tensor nll(const Tensor& logp, const Tensor& target, const Tensor& weight, int64_t ignore_index, Reduction r) {
  const int64_t cdim = logp.dim() == 1 ? 0 : 1;
  const Tensor t = target.to(DType::Int64);
  const Tensor valid = ne(t, full({}, ignore_index, DType::Int64, t.device()));
  const Tensor safe = where(valid, t, zeros({}, DType::Int64, t.device()));
  const Tensor picked = squeeze(gather(logp, cdim, unsqueeze(safe, cdim)), cdim);
  Tensor w = valid.to(logp.dtype());
  if (weight.defined()) w = mul(w, index_select(weight, 0, safe.reshape({-1})).reshape(t.shape()));
  const Tensor loss = neg(mul(picked, w));
  if (r == Reduction::None) return loss;
  if (r == Reduction::Sum) return sum(loss);
  return weighted_mean(sum(loss), sum(w));
}

// cross_entropy on class indices without label smoothing: one kernel for
// log_softmax + pick (core/cpu/loss.cpp), then the reduction in ember ops.
// float32_result: return the float32 loss for half inputs (autocast) rather
// than casting it to the input's dtype.
Tensor fused_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                           Reduction r, bool float32_result) {
  const int64_t cdim = input.dim() == 1 ? 0 : 1;
  const int64_t classes = input.size(cdim), outer = input.dim() == 1 ? 1 : input.size(0);
  const int64_t inner = classes * outer == 0 ? 0 : input.numel() / (classes * outer);
  const DType compute = is_half(input.dtype()) ? DType::Float32 : input.dtype();
  auto prep = [&](const Tensor& t) {
    const Tensor d = t.detach();
    return (d.dtype() == compute ? d : d.to(compute)).contiguous();
  };
  const Tensor t = target.to(DType::Int64).contiguous();
  Tensor loss = empty(t.shape(), compute, input.device());
  Tensor wt = empty(t.shape(), compute, input.device());
  Tensor lse = empty(t.shape(), compute, input.device());
  if (loss.numel() > 0) {
    const Tensor w = weight.defined() ? prep(weight) : Tensor();
    if (input.device().is_cuda()) {  // the kernel reads half inputs directly
      cuda::cross_entropy_forward(loss, wt, lse, input.detach().contiguous(), t, w, ignore_index, outer, classes,
                                  inner);
    } else {
      cpu::cross_entropy_forward(loss, wt, lse, prep(input), t, w, ignore_index, outer, classes, inner);
    }
  }
  if (autograd::any_requires_grad({input})) {
    autograd::record("CrossEntropyLossBackward0", {input}, {loss}, {input, t, wt, lse},
                     autograd::functions::cross_entropy_backward(cdim, ignore_index, {outer, classes, inner}));
  }
  Tensor out;
  if (r == Reduction::None) out = loss;
  else if (r == Reduction::Sum) out = sum(loss);
  else out = weighted_mean(sum(loss), sum(wt));
  return out.dtype() == input.dtype() || float32_result ? out : out.to(input.dtype());
}

// nll_loss on the GPU: one kernel picks and weights the targets' log-probabilities.
Tensor fused_nll(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index, Reduction r) {
  const int64_t cdim = input.dim() == 1 ? 0 : 1;
  const int64_t classes = input.size(cdim), outer = input.dim() == 1 ? 1 : input.size(0);
  const int64_t inner = classes * outer == 0 ? 0 : input.numel() / (classes * outer);
  const DType compute = is_half(input.dtype()) ? DType::Float32 : input.dtype();
  const Tensor t = target.to(DType::Int64).contiguous();
  Tensor loss = empty(t.shape(), compute, input.device());
  Tensor wt = empty(t.shape(), compute, input.device());
  if (loss.numel() > 0) {
    const Tensor w = weight.defined() ? weight.detach().to(compute).contiguous() : Tensor();
    cuda::nll_forward(loss, wt, input.detach().contiguous(), t, w, ignore_index, outer, classes, inner);
  }
  if (autograd::any_requires_grad({input})) {
    autograd::record("NllLossBackward0", {input}, {loss}, {input, t, wt},
                     autograd::functions::nll_backward(cdim, ignore_index, {outer, classes, inner}));
  }
  Tensor out;
  if (r == Reduction::None) out = loss;
  else if (r == Reduction::Sum) out = sum(loss);
  else out = weighted_mean(sum(loss), sum(wt));
  return out.dtype() == input.dtype() ? out : out.to(input.dtype());
}

}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                const std::string& reduction) {
  if (autocast::Scope ac{"nll_loss", input, target, weight}; ac)
    return nll_loss(ac[0], ac[1], ac[2], ignore_index, reduction);
  const char* op = "nll_loss";
  check_args(input, target, op);
  const Reduction r = parse_reduction(reduction, op);
  const int64_t classes = input.size(class_dim(input, op));
  check_class_target(input, target, op);
  check_class_weight(weight, classes, op, input.device());
  check_target_range(target, classes, ignore_index, op);
  if (input.device().is_cuda()) return fused_nll(input, target, weight, ignore_index, r);
  return nll(input, target, weight, ignore_index, r);
}

namespace {

// The float32 the autocast list asks for, as a cast (an ordinary op, which
// autograd records) of half tensors.
Tensor half_to_float32(const Tensor& t) { return t.defined() && is_half(t.dtype()) ? t.to(DType::Float32) : t; }

// cross_entropy; float32_in_op: under autocast, half logits give a float32
// loss (computed from them in float32 by the fused kernel; the other paths
// cast them first).
Tensor cross_entropy_impl(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                          const std::string& reduction, double label_smoothing, bool float32_in_op) {
  if (float32_in_op && (is_floating(target.dtype()) || label_smoothing != 0.0)) {
    return cross_entropy_impl(half_to_float32(input), half_to_float32(target), half_to_float32(weight),
                              ignore_index, reduction, label_smoothing, false);
  }
  const char* op = "cross_entropy";
  check_args(input, target, op);
  const Reduction r = parse_reduction(reduction, op);
  EMBER_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0, Error, op,
              ": label_smoothing must be between 0.0 and 1.0, got ", label_smoothing);
  const int64_t cdim = class_dim(input, op);
  const int64_t classes = input.size(cdim);
  check_class_weight(weight, classes, op, input.device());
  Tensor wview;  // weight broadcast along the class dim
  if (weight.defined()) {
    Shape s(static_cast<size_t>(input.dim()), 1);
    s[cdim] = classes;
    wview = weight.reshape(s);
  }
  if (is_floating(target.dtype())) {  // class probabilities
    const Tensor logp = log_softmax(input, cdim);
    EMBER_CHECK(target.shape() == input.shape(), Error, op, ": class-probability targets must have the input's shape ",
                shape_str(input.shape()), ", got ", shape_str(target.shape()));
    Tensor t = target;
    if (label_smoothing > 0) {
      t = add(mul(t, scalar_like(t, 1.0 - label_smoothing)), scalar_like(t, label_smoothing / classes));
    }
    Tensor prod = mul(logp, t);
    if (wview.defined()) prod = mul(prod, wview);
    return reduce(neg(sum(prod, {cdim})), r);
  }

  check_class_target(input, target, op);
  check_target_range(target, classes, ignore_index, op);
  if (label_smoothing == 0.0) return fused_cross_entropy(input, target, weight, ignore_index, r, float32_in_op);
  const Tensor logp = log_softmax(input, cdim);
  const Tensor nll_part = input.device().is_cuda() ? fused_nll(logp, target, weight, ignore_index, r)
                                                   : nll(logp, target, weight, ignore_index, r);
  if (label_smoothing == 0.0) return nll_part;
  // The smoothing term: -sum_c w_c logp_c per sample, zero where ignored, with
  // the same normalizer as the nll term under reduction='mean'.
  const Tensor t = target.to(DType::Int64);
  const Tensor valid = ne(t, full({}, ignore_index, DType::Int64, t.device()));
  Tensor smooth = neg(sum(wview.defined() ? mul(logp, wview) : logp, {cdim}));
  smooth = mul(smooth, valid.to(smooth.dtype()));
  Tensor smooth_red;
  if (r == Reduction::None) smooth_red = smooth;
  else if (r == Reduction::Sum) smooth_red = sum(smooth);
  else {
    Tensor norm_w = valid.to(smooth.dtype());
    if (weight.defined()) {
      const Tensor safe = where(valid, t, zeros({}, DType::Int64, t.device()));
      norm_w = mul(norm_w, index_select(weight, 0, safe.reshape({-1})).reshape(t.shape()));
    }
    smooth_red = weighted_mean(sum(smooth), sum(norm_w));
  }
  return add(mul(nll_part, scalar_like(nll_part, 1.0 - label_smoothing)),
             mul(smooth_red, scalar_like(smooth_red, label_smoothing / classes)));
}

}  // namespace

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                     const std::string& reduction, double label_smoothing) {
  if (autocast::Scope ac{"cross_entropy", input, target, weight}; ac) {
    return cross_entropy_impl(ac[0], ac[1], ac[2], ignore_index, reduction, label_smoothing, ac.float32_in_op());
  }
  return cross_entropy_impl(input, target, weight, ignore_index, reduction, label_smoothing, false);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  if (autocast::Scope ac{"mse_loss", input, target}; ac) return mse_loss(ac[0], ac[1], reduction);
  check_args(input, target, "mse_loss");
  return reduce(square(sub(input, target)), parse_reduction(reduction, "mse_loss"));
}

Tensor l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  if (autocast::Scope ac{"l1_loss", input, target}; ac) return l1_loss(ac[0], ac[1], reduction);
  check_args(input, target, "l1_loss");
  return reduce(abs(sub(input, target)), parse_reduction(reduction, "l1_loss"));
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction, double beta) {
  if (autocast::Scope ac{"smooth_l1_loss", input, target}; ac) return smooth_l1_loss(ac[0], ac[1], reduction, beta);
  const char* op = "smooth_l1_loss";
  check_args(input, target, op);
  const Reduction r = parse_reduction(reduction, op);
  EMBER_CHECK(beta >= 0, Error, op, ": beta must be non-negative, got ", beta);
  const Tensor d = abs(sub(input, target));
  if (beta == 0.0) return reduce(d, r);
  const Tensor quadratic = mul(square(d), scalar_like(d, 0.5 / beta));
  const Tensor linear = sub(d, scalar_like(d, 0.5 * beta));
  return reduce(where(lt(d, scalar_like(d, beta)), quadratic, linear), r);
}

namespace {
void check_same_size(const Tensor& input, const Tensor& target, const char* op) {
  EMBER_CHECK(target.shape() == input.shape(), ValueError, op, ": target size ", shape_str(target.shape()),
              " must be the same as input size ", shape_str(input.shape()));
}
}  // namespace

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            const std::string& reduction) {
  if (autocast::Scope ac{"binary_cross_entropy", input, target, weight}; ac)
    return binary_cross_entropy(ac[0], ac[1], ac[2], reduction);
  const char* op = "binary_cross_entropy";
  check_args(input, target, op);
  const Reduction r = parse_reduction(reduction, op);
  check_same_size(input, target, op);
  if (input.numel() > 0) {  // NaN fails both comparisons, as in PyTorch
    auto in_unit_range = [](const Tensor& t) {
      return all(logical_and(ge(t, scalar_like(t, 0.0)), le(t, scalar_like(t, 1.0)))).item().to<bool>();
    };
    EMBER_CHECK(in_unit_range(input.detach()), Error, op, ": all elements of input should be between 0 and 1");
    EMBER_CHECK(in_unit_range(target.detach()), Error, op, ": all elements of target should be between 0 and 1");
  }
  // log clamped to >= -100 like torch, so x = 0 or 1 gives a finite loss;
  // computed off the graph, with torch's gradient recorded for it.
  Tensor loss;
  {
    autograd::NoGradGuard no_grad;
    const Tensor x = input.detach(), t = target.detach();
    const std::optional<Scalar> lo = Scalar(-100.0), none;
    const Tensor log_x = clamp(log(x), lo, none);
    const Tensor log_1mx = clamp(log(sub(scalar_like(x, 1.0), x)), lo, none);
    loss = neg(add(mul(t, log_x), mul(sub(scalar_like(t, 1.0), t), log_1mx)));
    if (weight.defined()) loss = mul(loss, weight.detach());
  }
  if (autograd::any_requires_grad({input, target, weight})) {
    autograd::record("BinaryCrossEntropyBackward0", {input, target, weight}, {loss}, {input, target, weight},
                     autograd::functions::binary_cross_entropy_backward());
  }
  return reduce(loss, r);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const std::string& reduction, const Tensor& pos_weight) {
  if (autocast::Scope ac{"binary_cross_entropy_with_logits", input, target, weight, pos_weight}; ac)
    return binary_cross_entropy_with_logits(ac[0], ac[1], ac[2], reduction, ac[3]);
  const char* op = "binary_cross_entropy_with_logits";
  check_args(input, target, op);
  const Reduction r = parse_reduction(reduction, op);
  check_same_size(input, target, op);
  // softplus(-x) = log(1 + exp(-x)), stable for any x. Not relu(-x) + log1p(exp(-|x|)):
  // at x = 0 the kinks of relu and abs each pass a zero gradient, where the sum's is -1/2.
  const Tensor softplus_neg = softplus(neg(input));
  Tensor log_weight = pos_weight.defined()
                          ? add(mul(sub(pos_weight, scalar_like(pos_weight, 1.0)), target), scalar_like(target, 1.0))
                          : Tensor();
  const Tensor pos_term = log_weight.defined() ? mul(log_weight, softplus_neg) : softplus_neg;
  Tensor loss = add(mul(sub(scalar_like(target, 1.0), target), input), pos_term);
  if (weight.defined()) loss = mul(loss, weight);
  return reduce(loss, r);
}

Tensor kl_div(const Tensor& input, const Tensor& target, const std::string& reduction, bool log_target) {
  if (autocast::Scope ac{"kl_div", input, target}; ac) return kl_div(ac[0], ac[1], reduction, log_target);
  const char* op = "kl_div";
  check_args(input, target, op);
  const Reduction r = parse_reduction(reduction, op, /*allow_batchmean=*/true);
  Tensor loss;
  if (log_target) {
    loss = mul(exp(target), sub(target, input));
  } else {
    // xlogy(t, t) - t * x, with 0 * log(0) = 0 (and a finite gradient there).
    const Tensor positive = gt(target, scalar_like(target, 0.0));
    const Tensor safe = where(positive, target, scalar_like(target, 1.0));
    loss = sub(mul(target, log(safe)), mul(target, input));
  }
  if (r == Reduction::BatchMean) {
    const Tensor total = sum(loss);
    return input.dim() == 0 ? total : div(total, scalar_like(total, static_cast<double>(input.size(0))));
  }
  return reduce(loss, r);
}

}  // namespace ember
