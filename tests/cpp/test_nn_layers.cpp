// The C++ frontend's conv, pool, norm, embedding and activation layers and
// the RMSprop / Adagrad optimizers: shapes, PyTorch's state_dict key names and
// init, BatchNorm's running statistics, steps against hand computations.
#include <cmath>
#include <cstdio>
#include <memory>

#include "util.h"

using namespace ember;
using test::require_throws;
using test::require_values;
using test::to_vector;
using test::values;

namespace {

std::vector<std::string> keys(const NamedTensors& named) {
  std::vector<std::string> out;
  for (const auto& kv : named) out.push_back(kv.first);
  return out;
}

void require_within(const Tensor& t, double bound) {
  bool any_far = false;  // the values must spread, not sit at zero
  for (double v : to_vector(t)) {
    REQUIRE(std::abs(v) <= bound);
    any_far = any_far || std::abs(v) > bound / 4;
  }
  REQUIRE(any_far);
}

}  // namespace

TEST_CASE("Conv2d / Conv1d: weight shapes, PyTorch's init bound, options", "[nn_layers]") {
  manual_seed(0);
  nn::Conv2d conv(3, 8, 3);
  REQUIRE(conv.weight.shape() == Shape{8, 3, 3, 3});
  REQUIRE(conv.bias.shape() == Shape{8});
  REQUIRE(keys(conv.state_dict()) == std::vector<std::string>{"weight", "bias"});
  require_within(conv.weight, 1 / std::sqrt(27.0));
  require_within(conv.bias, 1 / std::sqrt(27.0));
  REQUIRE(conv.forward(ones({2, 3, 5, 5})).shape() == Shape{2, 8, 3, 3});

  nn::Conv2d strided(nn::Conv2dOptions(4, 6, {3, 1}).stride(2).padding({1, 0}).groups(2).bias(false));
  REQUIRE(strided.weight.shape() == Shape{6, 2, 3, 1});
  REQUIRE(!strided.bias.defined());
  REQUIRE(keys(strided.named_parameters()) == std::vector<std::string>{"weight"});
  require_within(strided.weight, 1 / std::sqrt(6.0));  // fan_in = 4/2 * 3 * 1
  REQUIRE(strided.forward(ones({1, 4, 7, 5})).shape() == Shape{1, 6, 4, 3});  // W: (5 - 1) / 2 + 1

  nn::Conv1d c1(nn::Conv1dOptions(2, 4, 5).padding(2).dilation(1));
  REQUIRE(c1.weight.shape() == Shape{4, 2, 5});
  require_within(c1.weight, 1 / std::sqrt(10.0));
  REQUIRE(c1.forward(ones({3, 2, 9})).shape() == Shape{3, 4, 9});

  // A hand-set kernel: forward is the cross-correlation plus bias.
  nn::Conv2d k(1, 1, 2);
  {
    NoGradGuard g;
    k.weight.copy_(values({1, 2, 3, 4}, {1, 1, 2, 2}));
    k.bias.fill_(0.5);
  }
  require_values(k.forward(values({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3})), {37.5, 47.5, 67.5, 77.5});

  require_throws<ValueError>([] { nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)); }, "divisible by groups");
  require_throws<ValueError>([] { nn::Conv2d(nn::Conv2dOptions(2, 4, {3, 3, 3})); }, "Conv2d: kernel_size");
}

TEST_CASE("MaxPool2d, AvgPool2d, AdaptiveAvgPool2d: shapes and values", "[nn_layers]") {
  Tensor x = values({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {1, 1, 4, 4});
  nn::MaxPool2d mp(2);
  require_values(mp.forward(x), {6, 8, 14, 16});
  REQUIRE(mp.state_dict().empty());
  nn::AvgPool2d ap(2);
  require_values(ap.forward(x), {3.5, 5.5, 11.5, 13.5});
  nn::MaxPool2d mp3(nn::MaxPool2dOptions(3).stride(1).padding(1));
  REQUIRE(mp3.forward(x).shape() == Shape{1, 1, 4, 4});
  nn::AvgPool2d ap_pad(nn::AvgPool2dOptions(2).stride(2).padding(1).count_include_pad(false));
  require_values(ap_pad.forward(x), {1, 2.5, 4, 7, 8.5, 10, 13, 14.5, 16});
  nn::AdaptiveAvgPool2d gap(1);
  require_values(gap.forward(x), {8.5});
  nn::AdaptiveAvgPool2d ad(2, 1);
  require_values(ad.forward(x), {4.5, 12.5});
}

TEST_CASE("BatchNorm: PyTorch's key names, running stats in training, used in eval", "[nn_layers]") {
  auto seq = std::make_shared<nn::Sequential>();
  seq->push_back(std::make_shared<nn::Conv2d>(1, 2, 1));
  auto bn = seq->push_back(std::make_shared<nn::BatchNorm2d>(2));
  REQUIRE(keys(seq->state_dict()) == std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias",
                                                               "1.running_mean", "1.running_var",
                                                               "1.num_batches_tracked"});
  REQUIRE(keys(seq->named_parameters()) == std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"});
  REQUIRE(bn->num_batches_tracked.dtype() == DType::Int64);
  REQUIRE(bn->num_batches_tracked.dim() == 0);
  require_values(bn->running_mean, {0, 0});
  require_values(bn->running_var, {1, 1});
  require_values(bn->weight, {1, 1});
  require_values(bn->bias, {0, 0});

  nn::BatchNorm2d b(nn::BatchNormOptions(2).momentum(0.5));
  // Channel 0 holds 1..4 (mean 2.5, unbiased var 5/3), channel 1 holds 2s.
  Tensor x = values({1, 2, 3, 4, 2, 2, 2, 2}, {1, 2, 2, 2});
  Tensor y = b.forward(x);
  const double sd = std::sqrt(1.25 + 1e-5);
  require_values(y, {-1.5 / sd, -0.5 / sd, 0.5 / sd, 1.5 / sd, 0, 0, 0, 0}, 1e-5);
  require_values(b.running_mean, {1.25, 1.0});
  require_values(b.running_var, {0.5 + 0.5 * 5.0 / 3.0, 0.5});
  REQUIRE(b.num_batches_tracked.item().to_int() == 1);

  b.eval();
  Tensor z = b.forward(values({3, 3, 3, 3, 1, 1, 1, 1}, {1, 2, 2, 2}));
  const double v0 = 0.5 + 0.5 * 5.0 / 3.0;
  const double e0 = (3 - 1.25) / std::sqrt(v0 + 1e-5), e1 = (1 - 1.0) / std::sqrt(0.5 + 1e-5);
  require_values(z, {e0, e0, e0, e0, e1, e1, e1, e1}, 1e-5);
  REQUIRE(b.num_batches_tracked.item().to_int() == 1);  // eval leaves the buffers alone
  require_values(b.running_mean, {1.25, 1.0});

  // momentum=None: cumulative average; untracked: batch stats even in eval.
  nn::BatchNorm1d cum(nn::BatchNormOptions(1).momentum(std::nullopt));
  cum.forward(values({0, 2}, {2, 1}));
  cum.forward(values({4, 6}, {2, 1}));
  require_values(cum.running_mean, {3});
  nn::BatchNorm1d untracked(nn::BatchNormOptions(1).track_running_stats(false).affine(false));
  REQUIRE(untracked.state_dict().empty());
  untracked.eval();
  require_values(untracked.forward(values({1, 3}, {2, 1})), {-1 / std::sqrt(1 + 1e-5), 1 / std::sqrt(1 + 1e-5)});
  require_throws<ValueError>([] { nn::BatchNorm2d(3).forward(ones({2, 3})); }, "BatchNorm2d: expected 4D input");
}

TEST_CASE("LayerNorm, GroupNorm, Embedding: parameters, init and forward", "[nn_layers]") {
  nn::LayerNorm ln({3});
  REQUIRE(keys(ln.state_dict()) == std::vector<std::string>{"weight", "bias"});
  const double s = std::sqrt(2.0 / 3.0 + 1e-5);
  require_values(ln.forward(values({1, 2, 3}, {1, 3})), {-1 / s, 0, 1 / s}, 1e-5);
  REQUIRE(nn::LayerNorm({3}, 1e-5, false).state_dict().empty());

  nn::GroupNorm gn(2, 4);
  REQUIRE(gn.weight.shape() == Shape{4});
  const double g = std::sqrt(0.25 + 1e-5);
  require_values(gn.forward(values({0, 1, 5, 7}, {1, 4, 1})), {-0.5 / g, 0.5 / g, -1 / std::sqrt(1 + 1e-5),
                                                               1 / std::sqrt(1 + 1e-5)}, 1e-5);
  require_throws<ValueError>([] { nn::GroupNorm(3, 4); }, "GroupNorm");

  manual_seed(0);
  nn::Embedding emb(50, 40, -1);
  REQUIRE(emb.padding_idx == 49);
  REQUIRE(keys(emb.state_dict()) == std::vector<std::string>{"weight"});
  require_values(emb.weight.select(0, 49), std::vector<double>(40, 0.0));
  const auto w = to_vector(emb.weight);
  double mean = 0, sq = 0;
  for (double v : w) mean += v / 1960, sq += v * v / 1960;  // the 49 non-padding rows
  REQUIRE(std::abs(mean) < 0.1);
  REQUIRE(std::abs(sq - 1) < 0.15);  // normal(0, 1), not uniform
  Tensor idx = values({49, 0}, {2}, DType::Int64);
  Tensor out = emb.forward(idx);
  REQUIRE(out.shape() == Shape{2, 40});
  out.sum().backward();
  require_values(emb.weight.grad().select(0, 49), std::vector<double>(40, 0.0));
  require_values(emb.weight.grad().select(0, 0), std::vector<double>(40, 1.0));
  require_throws<ValueError>([] { nn::Embedding(3, 2, 3); }, "padding_idx");
}

TEST_CASE("Activation layers match their ops", "[nn_layers]") {
  Tensor x = values({-1, 0, 2}, {3});
  require_values(nn::GELU().forward(x), {-0.15865525, 0, 1.9544997}, 1e-6);
  require_values(nn::SiLU().forward(x), {-1 / (1 + std::exp(1.0)), 0, 2 / (1 + std::exp(-2.0))});
  require_values(nn::Tanh().forward(x), {std::tanh(-1.0), 0, std::tanh(2.0)});
  require_values(nn::Sigmoid().forward(x), {1 / (1 + std::exp(1.0)), 0.5, 1 / (1 + std::exp(-2.0))});
  Tensor m = values({1, 2, 3, 3}, {2, 2});
  const double e = std::exp(1.0);
  require_values(nn::Softmax(1).forward(m), {1 / (1 + e), e / (1 + e), 0.5, 0.5});
  require_values(nn::LogSoftmax(0).forward(m), {std::log(1 / (1 + e * e)), std::log(1 / (1 + e)),
                                                std::log(e * e / (1 + e * e)), std::log(e / (1 + e))});
}

TEST_CASE("RMSprop and Adagrad: steps against hand computations", "[nn_layers]") {
  // loss = sum(p * c) gives grad c = [0.5, -2].
  Tensor c = values({0.5, -2}, {2}, DType::Float64);
  Tensor p = values({1, 2}, {2}, DType::Float64).requires_grad_(true);
  optim::RMSprop rms({p}, 0.01);
  p.mul(c).sum().backward();
  rms.step();
  // square_avg = 0.01 g^2, so the step is lr * g / (0.1 |g| + eps) = 0.1 sign(g).
  require_values(p, {1 - 0.1 / (1 + 1e-8 / 0.05), 2 + 0.1 / (1 + 1e-8 / 0.2)}, 1e-9);

  Tensor q = values({1, 2}, {2}, DType::Float64).requires_grad_(true);
  optim::Adagrad ada({q}, optim::AdagradOptions(0.1));
  for (int i = 0; i < 2; ++i) {
    ada.zero_grad();
    q.mul(c).sum().backward();
    ada.step();
  }
  // state_sum = k g^2 after step k, so step k moves lr / sqrt(k) against sign(g).
  const double moved = 0.1 + 0.1 / std::sqrt(2.0);
  require_values(q, {1 - moved, 2 + moved}, 1e-8);

  optim::RMSpropOptions mo(0.01);
  mo.momentum = 0.9;
  mo.centered = true;
  Tensor r = values({1}, {1}, DType::Float64).requires_grad_(true);
  optim::RMSprop rc({r}, mo);
  r.mul(full({1}, 2.0, DType::Float64)).sum().backward();
  rc.step();
  // centered: avg = 0.01 g^2 - (0.01 g)^2 = 0.0396; buf = g / sqrt(avg).
  require_values(r, {1 - 0.01 * 2 / (std::sqrt(0.0396) + 1e-8)}, 1e-9);
  require_throws<ValueError>([&] { optim::RMSprop({r}, -1.0); }, "RMSprop: invalid learning rate");
  require_throws<ValueError>([&] { optim::Adagrad({r}, -1.0); }, "Adagrad: invalid learning rate");
}

TEST_CASE("A tiny CNN trains: Conv2d, ReLU, MaxPool2d, Flatten, Linear", "[nn_layers]") {
  manual_seed(0);
  nn::Sequential net;
  net.push_back(std::make_shared<nn::Conv2d>(nn::Conv2dOptions(1, 4, 3).padding(1)));
  net.push_back(std::make_shared<nn::BatchNorm2d>(4));
  net.push_back(std::make_shared<nn::ReLU>());
  net.push_back(std::make_shared<nn::MaxPool2d>(2));
  net.push_back(std::make_shared<nn::Flatten>());
  net.push_back(std::make_shared<nn::Linear>(4 * 3 * 3, 2));
  REQUIRE(keys(net.state_dict()) == std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias",
                                                              "1.running_mean", "1.running_var",
                                                              "1.num_batches_tracked", "5.weight", "5.bias"});
  Tensor x = randn({8, 1, 6, 6});
  Tensor target = randn({8, 2});
  optim::SGD opt(net.parameters(), 0.1);
  double first = 0, last = 0;
  for (int i = 0; i < 20; ++i) {
    opt.zero_grad();
    Tensor y = net.forward(x);
    REQUIRE(y.shape() == Shape{8, 2});
    Tensor loss = y.sub(target).pow(2).mean();
    loss.backward();
    for (const auto& [name, prm] : net.named_parameters()) {
      INFO(name);
      REQUIRE(prm.grad().defined());
      REQUIRE(prm.grad().shape() == prm.shape());
    }
    opt.step();
    (i == 0 ? first : last) = loss.item().to_double();
  }
  REQUIRE(last < first * 0.9);
}

TEST_CASE("BatchNorm's buffers survive a checkpoint and a dtype cast", "[nn_layers]") {
  manual_seed(0);
  nn::BatchNorm2d a(3), b(3);
  a.forward(randn({4, 3, 2, 2}));
  a.forward(randn({4, 3, 2, 2}));
  const std::string path = "/tmp/ember_test_nn_layers_bn.safetensors";
  save(a, path);
  load(b, path);
  std::remove(path.c_str());
  REQUIRE(b.num_batches_tracked.item().to_int() == 2);
  require_values(b.running_mean, to_vector(a.running_mean));
  require_values(b.running_var, to_vector(a.running_var));

  b.to(DType::Float64);
  REQUIRE(b.running_mean.dtype() == DType::Float64);
  REQUIRE(b.weight.dtype() == DType::Float64);
  REQUIRE(b.num_batches_tracked.dtype() == DType::Int64);  // an integer buffer keeps its dtype
  REQUIRE(b.forward(randn({2, 3, 2, 2}, DType::Float64)).dtype() == DType::Float64);
  REQUIRE(b.num_batches_tracked.item().to_int() == 3);
}
