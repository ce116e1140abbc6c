// C++ optimizers: param groups with their own options, state_dict() in
// PyTorch's layout, and a checkpoint through ember::save / ember::load that
// resumes training exactly where an uninterrupted run would be.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "util.h"

using namespace ember;
using test::require_throws;
using test::require_values;
using test::to_vector;
using test::values;

namespace {

// A small regression model and data, fixed by the seed.
struct Problem {
  explicit Problem(uint64_t seed) {
    manual_seed(seed);
    net.push_back(std::make_shared<nn::Linear>(3, 4));
    net.push_back(std::make_shared<nn::Tanh>());
    net.push_back(std::make_shared<nn::Linear>(4, 1));
    manual_seed(99);  // the same data for every model
    x = randn({8, 3});
    y = randn({8, 1});
  }
  void step(optim::Optimizer& opt) {
    opt.zero_grad();
    nn::functional::mse_loss(net.forward(x), y).backward();
    opt.step();
  }
  nn::Sequential net;
  Tensor x, y;
};

std::string temp_path(const std::string& name) { return "/tmp/ember_test_optim_" + name + ".safetensors"; }

using Factory = std::function<std::unique_ptr<optim::Optimizer>(nn::Sequential&)>;

// Two groups (first layer / the rest) with different learning rates.
template <class Opt, class Options>
Factory two_groups(Options first, Options rest) {
  return [=](nn::Sequential& net) {
    auto opt = std::make_unique<Opt>(net[0]->parameters(), first);
    opt->add_param_group(net[2]->parameters(), rest);
    return std::unique_ptr<optim::Optimizer>(std::move(opt));
  };
}

void require_resumes_identically(const std::string& name, const Factory& make) {
  INFO(name);
  Problem straight(1), resumed(1);
  auto opt_a = make(straight.net);
  auto opt_b = make(resumed.net);
  for (int i = 0; i < 3; ++i) straight.step(*opt_a), resumed.step(*opt_b);

  const std::string model_path = temp_path(name + "_model"), opt_path = temp_path(name + "_opt");
  save(resumed.net, model_path);
  save(*opt_b, opt_path);
  opt_b.reset();
  Problem fresh(7);  // other initial weights, overwritten by the checkpoint
  load(fresh.net, model_path);
  auto opt_c = make(fresh.net);
  load(*opt_c, opt_path);
  std::remove(model_path.c_str());
  std::remove(opt_path.c_str());

  for (int i = 0; i < 4; ++i) straight.step(*opt_a), fresh.step(*opt_c);
  const auto a = straight.net.parameters(), c = fresh.net.parameters();
  REQUIRE(a.size() == c.size());
  for (size_t i = 0; i < a.size(); ++i) require_values(c[i], to_vector(a[i]), 0);  // bit for bit
}

}  // namespace

TEST_CASE("Param groups keep their own options; add_param_group checks its params", "[optim]") {
  Tensor a = values({1, 1}, {2}).requires_grad_(true), b = values({1}, {1}).requires_grad_(true);
  optim::SGD sgd({a}, optim::SGDOptions(0.1));
  optim::SGDOptions slow(0.01);
  slow.momentum = 0.5;
  sgd.add_param_group({b}, slow);
  REQUIRE(sgd.num_param_groups() == 2);
  REQUIRE(sgd.parameters().size() == 2);
  a.sum().backward();
  b.sum().backward();
  sgd.step();
  require_values(a, {0.9, 0.9});
  require_values(b, {0.99});
  sgd.param_groups()[0].options.lr = 0.5;  // as torch's group["lr"] = ...
  sgd.step();
  require_values(a, {0.4, 0.4});
  require_values(b, {1 - 0.01 - 0.015});  // momentum buffer 1.5

  require_throws<ValueError>([&] { sgd.add_param_group({a}); }, "SGD: some parameters appear in more than one");
  Tensor c = values({1}, {1}).requires_grad_(true);
  require_throws<ValueError>([&] { sgd.add_param_group({c, c}); }, "duplicate parameters");
  require_throws<ValueError>([&] { sgd.add_param_group({c}, optim::SGDOptions(-1)); }, "SGD: invalid learning rate");
  require_throws<ValueError>([&] { sgd.add_param_group({c.mul(c)}); }, "non-leaf");
}

TEST_CASE("state_dict has PyTorch's layout", "[optim]") {
  Problem p(3);
  optim::AdamOptions o(0.01);
  o.amsgrad = true;
  optim::Adam adam(p.net[0]->parameters(), o);
  adam.add_param_group(p.net[2]->parameters(), optim::AdamOptions(0.1));
  optim::OptimizerState before = adam.state_dict();
  REQUIRE(before.state.empty());
  p.step(adam);
  p.step(adam);
  optim::OptimizerState s = adam.state_dict();
  REQUIRE(s.param_groups.size() == 2);
  REQUIRE(s.param_groups[0].params == std::vector<int64_t>{0, 1});
  REQUIRE(s.param_groups[1].params == std::vector<int64_t>{2, 3});
  std::vector<std::string> keys;
  for (const auto& kv : s.param_groups[1].options) keys.push_back(kv.first);
  REQUIRE(keys == std::vector<std::string>{"lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"});
  REQUIRE(s.param_groups[1].options[0].second.x == 0.1);
  REQUIRE(s.param_groups[0].options[1].second.kind == optim::HyperValue::Pair);
  REQUIRE(s.param_groups[0].options[4].second.flag);
  REQUIRE(s.state.size() == 4);
  for (const auto& [index, named] : s.state) {
    std::vector<std::string> names;
    for (const auto& kv : named) names.push_back(kv.first);
    std::vector<std::string> expected{"step", "exp_avg", "exp_avg_sq"};
    if (index < 2) expected.push_back("max_exp_avg_sq");  // only the first group has amsgrad
    REQUIRE(names == expected);
    REQUIRE(named[0].second.item().to_double() == 2);
  }

  // The file round trip keeps every entry; a mismatched optimizer is refused.
  const std::string path = temp_path("layout");
  save(s, path);
  optim::OptimizerState back;
  load(back, path);
  std::remove(path.c_str());
  REQUIRE(back.state.size() == 4);
  REQUIRE(back.state[3].first == 3);
  require_values(back.state[3].second[2].second, to_vector(s.state[3].second[2].second), 0);
  REQUIRE(back.param_groups[1].params == std::vector<int64_t>{2, 3});
  REQUIRE(back.param_groups[0].options.size() == 6);
  REQUIRE(back.param_groups[0].options[0].second.x == 0.01);
  REQUIRE(back.param_groups[0].options[1].second.y == 0.999);

  optim::Adam one_group(p.net.parameters(), optim::AdamOptions(0.1));
  require_throws<ValueError>([&] { one_group.load_state_dict(s); }, "different number of parameter groups");
  optim::Adam small(p.net[0]->parameters(), optim::AdamOptions(0.1));
  small.add_param_group({p.net[2]->parameters()[0]});
  require_throws<ValueError>([&] { small.load_state_dict(s); }, "doesn't match the size");
  // Loading restores the saved hyperparameters too.
  optim::Adam other(p.net[0]->parameters(), optim::AdamOptions(0.5));
  other.add_param_group(p.net[2]->parameters());
  other.load_state_dict(s);
  REQUIRE(other.param_groups()[0].options.lr == 0.01);
  REQUIRE(other.param_groups()[0].options.amsgrad);
  REQUIRE(other.param_groups()[1].options.lr == 0.1);

  const std::string foreign = temp_path("foreign");
  save(p.net, foreign);
  require_throws<Error>([&] { load(other, foreign); }, "not an optimizer state dict");
  std::remove(foreign.c_str());
}

TEST_CASE("A checkpointed run resumes exactly like an uninterrupted one", "[optim]") {
  optim::SGDOptions sgd_a(0.1), sgd_b(0.05);
  sgd_a.momentum = 0.9;
  sgd_b.momentum = 0.5;
  sgd_b.nesterov = true;
  require_resumes_identically("sgd", two_groups<optim::SGD>(sgd_a, sgd_b));
  optim::AdamOptions adam_b(0.02);
  adam_b.amsgrad = true;
  require_resumes_identically("adam", two_groups<optim::Adam>(optim::AdamOptions(0.01), adam_b));
  require_resumes_identically("adamw", two_groups<optim::AdamW>(optim::AdamWOptions(0.01), optim::AdamWOptions(0.03)));
  optim::RMSpropOptions rms_b(0.01);
  rms_b.centered = true;
  rms_b.momentum = 0.5;
  require_resumes_identically("rmsprop", two_groups<optim::RMSprop>(optim::RMSpropOptions(0.02), rms_b));
  require_resumes_identically("adagrad",
                              two_groups<optim::Adagrad>(optim::AdagradOptions(0.1), optim::AdagradOptions(0.05)));
}

TEST_CASE("A state dict saved by Python's ember.save loads into a C++ optimizer", "[optim]") {
  // The exact header Python writes for Adam(lr=0.25, betas=(0.5, 0.75)) after one step with
  // grad [1, -1] (None, false and tuple entries included), with its data bytes.
  std::string header = R"({"state.0.exp_avg":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"state.0.exp_avg_sq":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},"state.0.step":{"dtype":"F32","shape":[],"data_offsets":[16,20]},"__metadata__":{"ember":"{\"version\": 1, \"structure\": {\"D\": [[\"state\", {\"D\": [[0, {\"D\": [[\"step\", {\"T\": \"state.0.step\"}], [\"exp_avg\", {\"T\": \"state.0.exp_avg\"}], [\"exp_avg_sq\", {\"T\": \"state.0.exp_avg_sq\"}]]}]]}], [\"param_groups\", {\"L\": [{\"D\": [[\"lr\", 0.25], [\"betas\", {\"U\": [0.5, 0.75]}], [\"eps\", 1e-08], [\"weight_decay\", 0], [\"amsgrad\", false], [\"maximize\", false], [\"foreach\", null], [\"capturable\", false], [\"differentiable\", false], [\"fused\", null], [\"params\", {\"L\": [0]}]]}]}]]}}"}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  const float data[] = {0.5f, -0.5f, 0.25f, 0.25f, 1.0f};  // exp_avg, exp_avg_sq, step
  const std::string path = temp_path("from_python");
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    unsigned char len[8];
    for (int k = 0; k < 8; ++k) len[k] = static_cast<unsigned char>(static_cast<uint64_t>(header.size()) >> (8 * k));
    std::fwrite(len, 1, 8, f);
    std::fwrite(header.data(), 1, header.size(), f);
    std::fwrite(data, sizeof(float), 5, f);
    std::fclose(f);
  }
  Tensor p = values({0.75, 2.25}, {2}).requires_grad_(true);
  optim::Adam adam({p}, optim::AdamOptions(1.0));
  load(adam, path);
  std::remove(path.c_str());
  const optim::AdamOptions& o = adam.param_groups()[0].options;
  REQUIRE(o.lr == 0.25);
  REQUIRE(o.betas == std::make_pair(0.5, 0.75));
  REQUIRE(o.eps == 1e-8);
  REQUIRE(!o.amsgrad);
  const optim::OptimizerState s = adam.state_dict();
  REQUIRE(s.state.size() == 1);
  require_values(s.state[0].second[0].second, {1});
  // The second step: m = [0.75, -0.75], v = [0.4375] * 2, both bias-corrected to 1: a step of lr.
  p.set_grad(values({1, -1}, {2}));
  adam.step();
  require_values(p, {0.5, 2.5}, 1e-6);
}
