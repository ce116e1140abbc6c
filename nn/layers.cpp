#include <ember/nn/layers.h>

#include <cmath>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/ops/matmul.h>
#include <ember/core/ops/nn_misc.h>
#include <ember/core/ops/unary.h>

namespace ember::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias)
    : UnaryModule("Linear"), in_features(in_features), out_features(out_features) {
  EMBER_CHECK(in_features >= 0 && out_features >= 0, ValueError, "Linear: in_features (", in_features,
              ") and out_features (", out_features, ") must be non-negative");
  weight = register_parameter("weight", empty({out_features, in_features}));
  if (with_bias) bias = register_parameter("bias", empty({out_features}));
  reset_parameters();
}

void Linear::reset_parameters() {
  NoGradGuard no_grad;
  // kaiming_uniform(a=sqrt(5)) reduces to bound = 1/sqrt(fan_in); torch uses
  // the same bound for the bias. fan_in = 0 leaves the (empty) weight alone.
  const double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
  weight.uniform_(-bound, bound);
  if (bias.defined()) bias.uniform_(-bound, bound);
}

Tensor Linear::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() >= 1 && input.shape().back() == in_features, ValueError, "Linear: input of shape ",
              input.shape_str(), " does not end in in_features=", in_features);
  if (!bias.defined() || input.dim() < 2) {
    Tensor y = matmul(input, weight.t());
    return bias.defined() ? y.add(bias) : y;
  }
  if (input.dim() == 2) return addmm(bias, input, weight.t());
  // [..., in] as one [rows, in] matrix: a single addmm, so CUDA adds the bias in
  // the GEMM's epilogue and autocast sees one op, as the Python linear does.
  Shape out_shape = input.shape();
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < out_shape.size(); ++i) rows *= out_shape[i];
  out_shape.back() = out_features;
  return addmm(bias, input.reshape({rows, in_features}), weight.t()).reshape(out_shape);
}

Tensor ReLU::forward(const Tensor& input) { return relu(input); }

Dropout::Dropout(double p) : UnaryModule("Dropout"), p(p) {
  EMBER_CHECK(p >= 0 && p <= 1, ValueError, "Dropout: probability has to be between 0 and 1, but got ", p);
}

Tensor Dropout::forward(const Tensor& input) { return dropout(input, p, is_training()); }

Tensor Flatten::forward(const Tensor& input) { return input.flatten(start_dim, end_dim); }

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (auto& layer : layers_) x = layer->forward(x);
  return x;
}

}  // namespace ember::nn
