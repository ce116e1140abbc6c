// Normalisation, embedding and activation layers of the C++ frontend, as
// torch::nn. Parameter and buffer names are PyTorch's, so state_dict keys
// match Python's ("1.running_mean", "1.num_batches_tracked").
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <ember/nn/layers.h>

namespace ember::nn {

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  BatchNormOptions& eps(double v) { eps_ = v; return *this; }
  // nullopt: cumulative average (1 / num_batches_tracked), as torch's momentum=None.
  BatchNormOptions& momentum(std::optional<double> v) { momentum_ = v; return *this; }
  BatchNormOptions& affine(bool v) { affine_ = v; return *this; }
  BatchNormOptions& track_running_stats(bool v) { track_running_stats_ = v; return *this; }

  int64_t num_features_;
  double eps_ = 1e-5;
  std::optional<double> momentum_ = 0.1;
  bool affine_ = true, track_running_stats_ = true;
};

// weight (ones) and bias (zeros) when affine; buffers running_mean (zeros),
// running_var (ones) and num_batches_tracked (int64 0-d) when tracking. Batch
// statistics are used while training (or when not tracking), running ones in eval().
class BatchNormBase : public UnaryModule {
 public:
  Tensor forward(const Tensor& input) override;
  void reset_running_stats();
  void reset_parameters();
  BatchNormOptions options;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 protected:
  BatchNormBase(const char* name, BatchNormOptions options, int64_t min_dim, int64_t max_dim);

 private:
  int64_t min_dim_, max_dim_;
};

// Input [N, C] or [N, C, L].
class BatchNorm1d : public BatchNormBase {
 public:
  explicit BatchNorm1d(BatchNormOptions options) : BatchNormBase("BatchNorm1d", std::move(options), 2, 3) {}
};

// Input [N, C, H, W].
class BatchNorm2d : public BatchNormBase {
 public:
  explicit BatchNorm2d(BatchNormOptions options) : BatchNormBase("BatchNorm2d", std::move(options), 4, 4) {}
};

// Normalises over the trailing normalized_shape; weight ones, bias zeros.
class LayerNorm : public UnaryModule {
 public:
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true, bool bias = true);
  Tensor forward(const Tensor& input) override;
  Shape normalized_shape;
  double eps;
  Tensor weight, bias;
};

// Root-mean-square norm over the trailing normalized_shape, weight ones.
// eps nullopt: the machine epsilon of the input's dtype, as torch's eps=None.
class RMSNorm : public UnaryModule {
 public:
  explicit RMSNorm(Shape normalized_shape, std::optional<double> eps = std::nullopt, bool elementwise_affine = true);
  Tensor forward(const Tensor& input) override;
  Shape normalized_shape;
  std::optional<double> eps;
  Tensor weight;  // undefined without elementwise_affine
};

class GroupNorm : public UnaryModule {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor forward(const Tensor& input) override;
  int64_t num_groups, num_channels;
  double eps;
  Tensor weight, bias;
};

// Lookup table [num_embeddings, embedding_dim], init normal(0, 1); the
// padding_idx row starts at zero and gets no gradient.
class Embedding : public UnaryModule {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx = std::nullopt);
  Tensor forward(const Tensor& input) override;
  void reset_parameters();
  int64_t num_embeddings, embedding_dim;
  std::optional<int64_t> padding_idx;  // normalised to a non-negative row
  Tensor weight;
};

class GELU : public UnaryModule {
 public:
  explicit GELU(std::string approximate = "none") : UnaryModule("GELU"), approximate(std::move(approximate)) {}
  Tensor forward(const Tensor& input) override;
  std::string approximate;
};

class SiLU : public UnaryModule {
 public:
  SiLU() : UnaryModule("SiLU") {}
  Tensor forward(const Tensor& input) override;
};

class Tanh : public UnaryModule {
 public:
  Tanh() : UnaryModule("Tanh") {}
  Tensor forward(const Tensor& input) override;
};

class Sigmoid : public UnaryModule {
 public:
  Sigmoid() : UnaryModule("Sigmoid") {}
  Tensor forward(const Tensor& input) override;
};

class Softmax : public UnaryModule {
 public:
  explicit Softmax(int64_t dim) : UnaryModule("Softmax"), dim(dim) {}
  Tensor forward(const Tensor& input) override;
  int64_t dim;
};

class LogSoftmax : public UnaryModule {
 public:
  explicit LogSoftmax(int64_t dim) : UnaryModule("LogSoftmax"), dim(dim) {}
  Tensor forward(const Tensor& input) override;
  int64_t dim;
};

}  // namespace ember::nn
