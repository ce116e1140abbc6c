// embedding and dropout front-ends.
#include <ember/core/ops/nn_misc.h>

#include <ember/autograd/functions/nn_misc.h>
#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/index.h>
#include <ember/core/ops/random.h>
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

// x * mask, where mask (of `mask_shape`, broadcast over x) keeps with
// probability 1 - p and is scaled by 1 / (1 - p).
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

Tensor dropout(const Tensor& input, double p, bool training, bool inplace) {
  const char* op = "dropout";
  check_p(p, op);
  EMBER_CHECK(input.defined(), Error, op, ": expected a defined input tensor");
  EMBER_CHECK(is_floating(input.dtype()), Error, op, ": expected a floating point input, got ",
              dtype_name(input.dtype()));
  if (!training || p == 0.0) return input;
  return apply_mask(input, p, inplace, input.shape());
}

Tensor feature_dropout(const Tensor& input, double p, bool training, bool inplace, const char* op) {
  check_p(p, op);
  EMBER_CHECK(input.defined(), Error, op, ": expected a defined input tensor");
  EMBER_CHECK(is_floating(input.dtype()), Error, op, ": expected a floating point input, got ",
              dtype_name(input.dtype()));
  EMBER_CHECK(input.dim() >= 2, Error, op, ": expected an input of at least 2 dims (N, C, ...), got shape ",
              shape_str(input.shape()));
  if (!training || p == 0.0) return input;
  Shape mask_shape(static_cast<size_t>(input.dim()), 1);
  mask_shape[0] = input.size(0);
  mask_shape[1] = input.size(1);
  return apply_mask(input, p, inplace, mask_shape);
}

}  // namespace ember
