// embedding and dropout front-ends.
#include <ember/core/ops/nn_misc.h>

#include <string>

#include <ember/autograd/functions/nn_misc.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/nn_misc.h>
#include <ember/core/error.h>
#include <ember/core/generator.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/index.h>
#include <ember/core/ops/random.h>
#include <ember/core/shape.h>
#include <ember/cuda/nn_misc.h>

namespace ember {

namespace functions = autograd::functions;

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx,
                 bool scale_grad_by_freq) {
  const char* op = "embedding";
  EMBER_CHECK(input.defined() && weight.defined(), Error, op, ": expected defined input and weight tensors");
  EMBER_CHECK(input.device() == weight.device(), Error, op, ": expected indices and weight on the same device, but ",
              "indices are on ", input.device().str(), " and weight on ", weight.device().str());
  EMBER_CHECK(weight.dim() == 2, Error, op, ": expected a 2-d weight (num_embeddings, embedding_dim), got shape ",
              shape_str(weight.shape()));
  EMBER_CHECK(input.dtype() == DType::Int64 || input.dtype() == DType::Int32, Error, op,
              ": expected indices of dtype int64 or int32, got ", dtype_name(input.dtype()));
  const int64_t rows = weight.size(0), dim = weight.size(1);
  if (padding_idx) {
    EMBER_CHECK(*padding_idx >= -rows && *padding_idx < rows, ValueError, op, ": padding_idx ", *padding_idx,
                " must be within num_embeddings (", rows, ")");
    if (*padding_idx < 0) *padding_idx += rows;
  }
  const Tensor flat = input.to(DType::Int64).contiguous().reshape({-1});
  // GPU indices are copied back for the range check (a synchronization).
  const Tensor host = flat.device().is_cpu() ? flat : flat.to(kCPU);
  const int64_t* p = host.data<int64_t>();
  for (int64_t i = 0; i < host.numel(); ++i) {
    EMBER_CHECK(p[i] >= 0 && p[i] < rows, IndexError, op, ": index ", p[i], " is out of range for a weight with ",
                rows, " rows");
  }
  Shape out_shape = input.shape();
  out_shape.push_back(dim);
  Tensor out;
  if (weight.device().is_cuda()) {
    EMBER_CHECK(is_floating(weight.dtype()), NotImplementedError, op, ": not implemented for ",
                dtype_name(weight.dtype()), " weights on CUDA");
    out = empty({flat.numel(), dim}, weight.dtype(), weight.device());
    cuda::embedding_forward(out, weight.detach().contiguous(), flat);
    out = out.reshape(out_shape);
  } else {
    out = index_select(weight.detach(), 0, flat).reshape(out_shape);
  }
  if (autograd::any_requires_grad({weight})) {
    autograd::record("EmbeddingBackward0", {weight}, {out}, {},
                     functions::embedding_backward(weight.shape(), flat, padding_idx, scale_grad_by_freq));
  }
  return out;
}

namespace {

void check_p(double p, const char* op) {
  EMBER_CHECK(p >= 0.0 && p <= 1.0, ValueError, op, ": dropout probability has to be between 0 and 1, but got ", p);
}

void check_dropout_input(const Tensor& input, const char* op) {
  EMBER_CHECK(input.defined(), Error, op, ": expected a defined input tensor");
  EMBER_CHECK(is_floating(input.dtype()), Error, op, ": expected a floating point input, got ",
              dtype_name(input.dtype()));
  EMBER_CHECK(input.device().is_cpu() || input.device().is_cuda(), NotImplementedError, op,
              ": no kernel for device ", input.device().str());
}

// 1 / (1 - p), and 0 for p == 1 (everything is dropped; no division by zero).
double keep_scale(double p) { return p < 1.0 ? 1.0 / (1.0 - p) : 0.0; }

// The fused kernel on contiguous `src` (out may be src): reserves one 32-bit
// word per element from the device's default generator (4 per counter block,
// as bernoulli_ does) and writes out and the bool mask.
void run_native_dropout(Tensor& out, Tensor& mask, const Tensor& src, double p) {
  const int64_t n = src.numel();
  if (n == 0) return;
  const PhiloxStream s = default_generator(src.device()).reserve(static_cast<uint64_t>((n + 3) / 4));
  const uint64_t threshold = cpu::dropout_threshold(p);
  if (src.device().is_cuda()) cuda::native_dropout(out, mask, src, threshold, keep_scale(p), s);
  else cpu::native_dropout(out, mask, src, threshold, keep_scale(p), s);
}

// x * mask, where mask (of `mask_shape`, broadcast over x) keeps with
// probability 1 - p and is scaled by 1 / (1 - p): feature dropout, whose
// mask is one value per (n, c) map, a small tensor next to x.
Tensor apply_mask(const Tensor& input, double p, bool inplace, const Shape& mask_shape) {
  Tensor mask = zeros(mask_shape, input.dtype(), input.device());
  if (p < 1.0) {
    bernoulli_(mask, 1.0 - p);
    mask.mul_(full({}, 1.0 / (1.0 - p), input.dtype(), input.device()));
  }
  if (inplace) {
    Tensor self = input;
    return self.mul_(mask);
  }
  return mul(input, mask);
}

}  // namespace

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train) {
  const char* op = "native_dropout";
  check_p(p, op);
  check_dropout_input(input, op);
  const bool training = !train.has_value() || *train;
  Tensor out, mask;
  if (training) {
    const Tensor src = input.detach().contiguous();
    out = empty(input.shape(), input.dtype(), input.device());
    mask = empty(input.shape(), DType::Bool, input.device());
    run_native_dropout(out, mask, src, p);
  } else {
    out = input.detach().clone();
    mask = ones(input.shape(), DType::Bool, input.device());
  }
  if (autograd::any_requires_grad({input})) {
    autograd::record("NativeDropoutBackward0", {input}, {out}, {mask},
                     functions::native_dropout_backward(training ? keep_scale(p) : 1.0));
  }
  return {out, mask};
}

Tensor native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale) {
  const char* op = "native_dropout_backward";
  EMBER_CHECK(grad.defined() && mask.defined(), Error, op, ": expected defined grad and mask tensors");
  EMBER_CHECK(is_floating(grad.dtype()), Error, op, ": expected a floating point grad, got ", dtype_name(grad.dtype()));
  EMBER_CHECK(mask.dtype() == DType::Bool, Error, op, ": expected a bool mask, got ", dtype_name(mask.dtype()));
  EMBER_CHECK(grad.device() == mask.device(), Error, op, ": expected grad and mask on the same device, but grad is on ",
              grad.device().str(), " and mask on ", mask.device().str());
  EMBER_CHECK(grad.device().is_cpu() || grad.device().is_cuda(), NotImplementedError, op, ": no kernel for device ",
              grad.device().str());
  EMBER_CHECK(broadcast_shapes(grad.shape(), mask.shape(), op) == grad.shape(), Error, op, ": mask of shape ",
              shape_str(mask.shape()), " cannot be broadcast to the grad's shape ", shape_str(grad.shape()));
  Tensor out = empty(grad.shape(), grad.dtype(), grad.device());
  if (out.numel() > 0) {
    if (grad.device().is_cuda()) cuda::native_dropout_backward(out, grad, mask, scale);
    else cpu::native_dropout_backward(out, grad, mask, scale);
  }
  if (autograd::any_requires_grad({grad})) {
    autograd::record("NativeDropoutBackwardBackward0", {grad}, {out}, {mask}, functions::native_dropout_backward(scale));
  }
  return out;
}

Tensor dropout(const Tensor& input, double p, bool training, bool inplace) {
  const char* op = "dropout";
  check_p(p, op);
  check_dropout_input(input, op);
  if (!training || p == 0.0) return input;
  if (!inplace) return std::get<0>(native_dropout(input, p, true));
  Tensor self = input;
  check_no_internal_overlap(self, op);
  autograd::check_inplace(self, op);
  if (!autograd::any_requires_grad({self}) && self.is_contiguous()) {  // no history to keep: write over self
    Tensor mask = empty(self.shape(), DType::Bool, self.device());
    run_native_dropout(self, mask, self, p);
    self.bump_version();
    return self;
  }
  return assign_inplace(self, std::get<0>(native_dropout(self, p, true)));
}

Tensor feature_dropout(const Tensor& input, double p, bool training, bool inplace, const char* op) {
  check_p(p, op);
  check_dropout_input(input, op);
  EMBER_CHECK(input.dim() >= 2, Error, op, ": expected an input of at least 2 dims (N, C, ...), got shape ",
              shape_str(input.shape()));
  if (!training || p == 0.0) return input;
  // dropout1d and dropout3d also take one unbatched sample, (C, L) and
  // (C, D, H, W): its channels are dim 0 (PyTorch's reading of those shapes).
  const std::string name(op);
  const bool unbatched = (name == "dropout1d" && input.dim() == 2) || (name == "dropout3d" && input.dim() == 4);
  Shape mask_shape(static_cast<size_t>(input.dim()), 1);
  mask_shape[0] = input.size(0);
  if (!unbatched) mask_shape[1] = input.size(1);
  return apply_mask(input, p, inplace, mask_shape);
}

}  // namespace ember
