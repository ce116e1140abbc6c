// Convolution and pooling layers of the C++ frontend: Conv2d, Conv1d,
// ConvTranspose2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, as torch::nn. Options are
// libtorch-style builders: Conv2d(Conv2dOptions(1, 8, 3).stride(2).padding(1)).
#pragma once
#include <cstdint>
#include <vector>

#include <ember/nn/layers.h>

namespace ember::nn {

using IntList = std::vector<int64_t>;

// One options type for Conv1d and Conv2d; a single value in a list applies to
// every spatial dimension, as torch's int arguments do.
struct ConvOptions {
  ConvOptions(int64_t in_channels, int64_t out_channels, IntList kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(std::move(kernel_size)) {}
  ConvOptions(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : ConvOptions(in_channels, out_channels, IntList{kernel_size}) {}
  ConvOptions& stride(IntList v) { stride_ = std::move(v); return *this; }
  ConvOptions& stride(int64_t v) { return stride(IntList{v}); }
  ConvOptions& padding(IntList v) { padding_ = std::move(v); return *this; }
  ConvOptions& padding(int64_t v) { return padding(IntList{v}); }
  ConvOptions& dilation(IntList v) { dilation_ = std::move(v); return *this; }
  ConvOptions& dilation(int64_t v) { return dilation(IntList{v}); }
  ConvOptions& groups(int64_t v) { groups_ = v; return *this; }
  ConvOptions& bias(bool v) { bias_ = v; return *this; }
  // ConvTranspose2d only: extra rows/columns on one side of the output.
  ConvOptions& output_padding(IntList v) { output_padding_ = std::move(v); return *this; }
  ConvOptions& output_padding(int64_t v) { return output_padding(IntList{v}); }

  int64_t in_channels_, out_channels_;
  IntList kernel_size_, stride_{1}, padding_{0}, dilation_{1}, output_padding_{0};
  int64_t groups_ = 1;
  bool bias_ = true;
};
using Conv1dOptions = ConvOptions;
using Conv2dOptions = ConvOptions;
using ConvTranspose2dOptions = ConvOptions;

// Shared by the conv layers: weight [out, in/groups, *kernel] ([in,
// out/groups, *kernel] when transposed), PyTorch's default init
// (kaiming_uniform a=sqrt(5): bound 1/sqrt(fan_in) for weight and bias, with
// fan_in = weight.size(1) * kernel elements, as torch computes it).
class ConvNd : public UnaryModule {
 public:
  void reset_parameters();
  ConvOptions options;
  Tensor weight, bias;  // bias undefined when options.bias_ is false

 protected:
  ConvNd(const char* name, int64_t spatial_dims, ConvOptions options, bool transposed = false);
};

class Conv1d : public ConvNd {
 public:
  explicit Conv1d(ConvOptions options);
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : Conv1d(ConvOptions(in_channels, out_channels, kernel_size)) {}
  Tensor forward(const Tensor& input) override;
};

class Conv2d : public ConvNd {
 public:
  explicit Conv2d(ConvOptions options);
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : Conv2d(ConvOptions(in_channels, out_channels, kernel_size)) {}
  Tensor forward(const Tensor& input) override;
};

// The gradient of Conv2d with respect to its input: upsamples by stride.
// Output size (H - 1) * stride - 2 * padding + dilation * (K - 1) + output_padding + 1.
class ConvTranspose2d : public ConvNd {
 public:
  explicit ConvTranspose2d(ConvOptions options);
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : ConvTranspose2d(ConvOptions(in_channels, out_channels, kernel_size)) {}
  Tensor forward(const Tensor& input) override;
};

// stride defaults to kernel_size (an empty list), as torch.
struct Pool2dOptions {
  Pool2dOptions(IntList kernel_size) : kernel_size_(std::move(kernel_size)) {}  // NOLINT
  Pool2dOptions(int64_t kernel_size) : kernel_size_{kernel_size} {}            // NOLINT
  Pool2dOptions& stride(IntList v) { stride_ = std::move(v); return *this; }
  Pool2dOptions& stride(int64_t v) { return stride(IntList{v}); }
  Pool2dOptions& padding(IntList v) { padding_ = std::move(v); return *this; }
  Pool2dOptions& padding(int64_t v) { return padding(IntList{v}); }
  Pool2dOptions& ceil_mode(bool v) { ceil_mode_ = v; return *this; }
  Pool2dOptions& count_include_pad(bool v) { count_include_pad_ = v; return *this; }  // AvgPool2d only

  IntList kernel_size_, stride_{}, padding_{0};
  bool ceil_mode_ = false, count_include_pad_ = true;
};
using MaxPool2dOptions = Pool2dOptions;
using AvgPool2dOptions = Pool2dOptions;

class MaxPool2d : public UnaryModule {
 public:
  explicit MaxPool2d(Pool2dOptions options) : UnaryModule("MaxPool2d"), options(std::move(options)) {}
  Tensor forward(const Tensor& input) override;
  Pool2dOptions options;
};

class AvgPool2d : public UnaryModule {
 public:
  explicit AvgPool2d(Pool2dOptions options) : UnaryModule("AvgPool2d"), options(std::move(options)) {}
  Tensor forward(const Tensor& input) override;
  Pool2dOptions options;
};

class AdaptiveAvgPool2d : public UnaryModule {
 public:
  AdaptiveAvgPool2d(int64_t out_h, int64_t out_w) : UnaryModule("AdaptiveAvgPool2d"), output_size{out_h, out_w} {}
  explicit AdaptiveAvgPool2d(int64_t out) : AdaptiveAvgPool2d(out, out) {}
  Tensor forward(const Tensor& input) override;
  IntList output_size;
};

}  // namespace ember::nn
