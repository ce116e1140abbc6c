#include <ember/nn/conv_layers.h>

#include <cmath>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/ops/conv.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/pool.h>

namespace ember::nn {

ConvNd::ConvNd(const char* name, int64_t spatial_dims, ConvOptions o, bool transposed)
    : UnaryModule(name), options(std::move(o)) {
  IntList& k = options.kernel_size_;
  if (k.size() == 1) k.assign(spatial_dims, k[0]);
  EMBER_CHECK(static_cast<int64_t>(k.size()) == spatial_dims, ValueError, name, ": kernel_size must have ",
              spatial_dims, " values, got ", k.size());
  for (int64_t v : k) EMBER_CHECK(v > 0, ValueError, name, ": kernel_size must be positive, got ", v);
  const int64_t in = options.in_channels_, out = options.out_channels_, g = options.groups_;
  EMBER_CHECK(in > 0 && out > 0, ValueError, name, ": in_channels (", in, ") and out_channels (", out,
              ") must be positive");
  EMBER_CHECK(g > 0, ValueError, name, ": groups must be a positive integer, got ", g);
  EMBER_CHECK(in % g == 0, ValueError, name, ": in_channels (", in, ") must be divisible by groups (", g, ")");
  EMBER_CHECK(out % g == 0, ValueError, name, ": out_channels (", out, ") must be divisible by groups (", g, ")");
  if (transposed) {
    IntList& op = options.output_padding_;
    if (op.size() == 1) op.assign(spatial_dims, op[0]);
    EMBER_CHECK(static_cast<int64_t>(op.size()) == spatial_dims, ValueError, name, ": output_padding must have ",
                spatial_dims, " values, got ", op.size());
  }
  Shape wshape = transposed ? Shape{in, out / g} : Shape{out, in / g};
  for (int64_t v : k) wshape.push_back(v);
  weight = register_parameter("weight", empty(wshape));
  if (options.bias_) bias = register_parameter("bias", empty({out}));
  reset_parameters();
}

void ConvNd::reset_parameters() {
  NoGradGuard no_grad;
  // kaiming_uniform(a=sqrt(5)) gives bound 1/sqrt(fan_in); torch's bias uses the same bound.
  int64_t fan_in = weight.size(1);
  for (int64_t v : options.kernel_size_) fan_in *= v;
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  weight.uniform_(-bound, bound);
  if (bias.defined()) bias.uniform_(-bound, bound);
}

Conv1d::Conv1d(ConvOptions o) : ConvNd("Conv1d", 1, std::move(o)) {}

Tensor Conv1d::forward(const Tensor& input) {
  return conv1d(input, weight, bias, options.stride_, options.padding_, options.dilation_, options.groups_);
}

Conv2d::Conv2d(ConvOptions o) : ConvNd("Conv2d", 2, std::move(o)) {}

Tensor Conv2d::forward(const Tensor& input) {
  return conv2d(input, weight, bias, options.stride_, options.padding_, options.dilation_, options.groups_);
}

ConvTranspose2d::ConvTranspose2d(ConvOptions o) : ConvNd("ConvTranspose2d", 2, std::move(o), true) {}

Tensor ConvTranspose2d::forward(const Tensor& input) {
  return conv_transpose2d(input, weight, bias, options.stride_, options.padding_, options.output_padding_,
                          options.groups_, options.dilation_);
}

Tensor MaxPool2d::forward(const Tensor& input) {
  return max_pool2d(input, options.kernel_size_, options.stride_, options.padding_, {1}, options.ceil_mode_);
}

Tensor AvgPool2d::forward(const Tensor& input) {
  return avg_pool2d(input, options.kernel_size_, options.stride_, options.padding_, options.ceil_mode_,
                    options.count_include_pad_);
}

Tensor AdaptiveAvgPool2d::forward(const Tensor& input) { return adaptive_avg_pool2d(input, output_size); }

}  // namespace ember::nn
