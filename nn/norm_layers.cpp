#include <ember/nn/norm_layers.h>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/nn_misc.h>
#include <ember/core/ops/norm.h>
#include <ember/core/ops/softmax.h>
#include <ember/core/ops/unary.h>

namespace ember::nn {

BatchNormBase::BatchNormBase(const char* name, BatchNormOptions o, int64_t min_dim, int64_t max_dim)
    : UnaryModule(name), options(std::move(o)), min_dim_(min_dim), max_dim_(max_dim) {
  const int64_t c = options.num_features_;
  EMBER_CHECK(c > 0, ValueError, name, ": num_features must be positive, got ", c);
  if (options.affine_) {
    weight = register_parameter("weight", empty({c}));
    bias = register_parameter("bias", empty({c}));
  }
  if (options.track_running_stats_) {
    running_mean = register_buffer("running_mean", empty({c}));
    running_var = register_buffer("running_var", empty({c}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, DType::Int64));
  }
  reset_parameters();
}

void BatchNormBase::reset_running_stats() {
  if (!options.track_running_stats_) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

void BatchNormBase::reset_parameters() {
  reset_running_stats();
  if (!options.affine_) return;
  NoGradGuard no_grad;
  weight.fill_(1);
  bias.zero_();
}

Tensor BatchNormBase::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() >= min_dim_ && input.dim() <= max_dim_, ValueError, name(), ": expected ",
              min_dim_ == max_dim_ ? std::to_string(min_dim_) + "D" :
                                     std::to_string(min_dim_) + "D or " + std::to_string(max_dim_) + "D",
              " input (got ", input.dim(), "D input of shape ", input.shape_str(), ")");
  double momentum = options.momentum_.value_or(0.0);
  if (is_training() && options.track_running_stats_) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(ones({}, DType::Int64));
    // momentum=None: a cumulative moving average over the batches seen.
    if (!options.momentum_) momentum = 1.0 / static_cast<double>(num_batches_tracked.item().to_int());
  }
  // Batch statistics while training or when nothing is tracked; the running
  // buffers are updated only in training mode.
  const bool use_batch_stats = is_training() || !options.track_running_stats_;
  const bool update = is_training() && options.track_running_stats_;
  return batch_norm(input, update || !use_batch_stats ? running_mean : Tensor(),
                    update || !use_batch_stats ? running_var : Tensor(), weight, bias, use_batch_stats, momentum,
                    options.eps_);
}

LayerNorm::LayerNorm(Shape shape, double eps, bool elementwise_affine, bool with_bias)
    : UnaryModule("LayerNorm"), normalized_shape(std::move(shape)), eps(eps) {
  if (elementwise_affine) {
    weight = register_parameter("weight", ones(normalized_shape));
    if (with_bias) bias = register_parameter("bias", zeros(normalized_shape));
  }
}

Tensor LayerNorm::forward(const Tensor& input) { return layer_norm(input, normalized_shape, weight, bias, eps); }

RMSNorm::RMSNorm(Shape shape, std::optional<double> eps, bool elementwise_affine)
    : UnaryModule("RMSNorm"), normalized_shape(std::move(shape)), eps(eps) {
  if (elementwise_affine) weight = register_parameter("weight", ones(normalized_shape));
}

Tensor RMSNorm::forward(const Tensor& input) { return rms_norm(input, normalized_shape, weight, eps); }

GroupNorm::GroupNorm(int64_t num_groups, int64_t num_channels, double eps, bool affine)
    : UnaryModule("GroupNorm"), num_groups(num_groups), num_channels(num_channels), eps(eps) {
  EMBER_CHECK(num_groups > 0 && num_channels % num_groups == 0, ValueError,
              "GroupNorm: num_channels (", num_channels, ") must be divisible by num_groups (", num_groups, ")");
  if (affine) {
    weight = register_parameter("weight", ones({num_channels}));
    bias = register_parameter("bias", zeros({num_channels}));
  }
}

Tensor GroupNorm::forward(const Tensor& input) { return group_norm(input, num_groups, weight, bias, eps); }

Embedding::Embedding(int64_t num, int64_t dim, std::optional<int64_t> pad)
    : UnaryModule("Embedding"), num_embeddings(num), embedding_dim(dim) {
  EMBER_CHECK(num >= 0 && dim >= 0, ValueError, "Embedding: num_embeddings (", num, ") and embedding_dim (", dim,
              ") must be non-negative");
  if (pad) {
    EMBER_CHECK(*pad < num && *pad >= -num, ValueError, "Embedding: padding_idx (", *pad,
                ") must be within num_embeddings (", num, ")");
    padding_idx = *pad < 0 ? *pad + num : *pad;
  }
  weight = register_parameter("weight", empty({num, dim}));
  reset_parameters();
}

void Embedding::reset_parameters() {
  NoGradGuard no_grad;
  weight.normal_(0, 1);
  if (padding_idx) {
    Tensor row = weight.select(0, *padding_idx);
    row.zero_();
  }
}

Tensor Embedding::forward(const Tensor& input) { return embedding(input, weight, padding_idx); }

Tensor GELU::forward(const Tensor& input) { return gelu(input, approximate); }
Tensor SiLU::forward(const Tensor& input) { return silu(input); }
Tensor Tanh::forward(const Tensor& input) { return tanh(input); }
Tensor Sigmoid::forward(const Tensor& input) { return sigmoid(input); }
Tensor Softmax::forward(const Tensor& input) { return softmax(input, dim); }
Tensor LogSoftmax::forward(const Tensor& input) { return log_softmax(input, dim); }

}  // namespace ember::nn
