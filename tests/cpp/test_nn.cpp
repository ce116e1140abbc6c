// The C++ training frontend: Module registration and naming, layers,
// optimizers against hand computations, and save/load round trips.
#include <cmath>
#include <cstdio>
#include <fstream>
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

std::shared_ptr<nn::Sequential> mlp() {
  auto seq = std::make_shared<nn::Sequential>();
  seq->push_back(std::make_shared<nn::Linear>(4, 3));
  seq->push_back(std::make_shared<nn::ReLU>());
  seq->push_back(std::make_shared<nn::Dropout>(0.5));
  seq->push_back(std::make_shared<nn::Linear>(3, 2, /*bias=*/false));
  return seq;
}

struct WithBuffer : nn::Module {
  WithBuffer() : nn::Module("WithBuffer") {
    register_parameter("w", zeros({2}));
    register_buffer("running", ones({2}));
    inner = register_module("inner", std::make_shared<nn::Linear>(2, 2));
  }
  std::shared_ptr<nn::Linear> inner;
};

std::string temp_path(const char* name) { return std::string("/tmp/ember_test_nn_") + name + ".safetensors"; }

}  // namespace

TEST_CASE("Module names nested parameters with dots, as Python's state_dict", "[nn]") {
  auto seq = mlp();
  REQUIRE(keys(seq->named_parameters()) == std::vector<std::string>{"0.weight", "0.bias", "3.weight"});
  REQUIRE(keys(seq->named_parameters(/*recurse=*/false)).empty());
  REQUIRE(seq->parameters().size() == 3);
  REQUIRE(seq->children().size() == 4);
  for (const auto& p : seq->parameters()) REQUIRE(p.requires_grad());

  WithBuffer m;
  REQUIRE(keys(m.state_dict()) == std::vector<std::string>{"w", "running", "inner.weight", "inner.bias"});
  REQUIRE(keys(m.named_buffers()) == std::vector<std::string>{"running"});
  REQUIRE(!m.buffers()[0].requires_grad());
  require_throws<ValueError>([&] { m.register_parameter("w", zeros({1})); }, "already exists");
  require_throws<ValueError>([&] { m.register_buffer("a.b", zeros({1})); }, "can't contain");
}

TEST_CASE("train/eval reach every submodule and switch Dropout off", "[nn]") {
  auto seq = mlp();
  REQUIRE(seq->is_training());
  seq->eval();
  REQUIRE(!(*seq)[2]->is_training());
  Tensor x = ones({5, 4});
  // Dropout is the identity in eval: two forwards agree.
  require_values(seq->forward(x), to_vector(seq->forward(x)));
  seq->train();
  REQUIRE((*seq)[2]->is_training());
}

TEST_CASE("Linear: shapes, PyTorch's init bound, forward = x W^T + b", "[nn]") {
  manual_seed(0);
  nn::Linear lin(16, 5);
  REQUIRE(lin.weight.shape() == Shape{5, 16});
  REQUIRE(lin.bias.shape() == Shape{5});
  const double bound = 1 / std::sqrt(16.0);
  for (double v : to_vector(lin.weight)) REQUIRE(std::abs(v) <= bound);
  for (double v : to_vector(lin.bias)) REQUIRE(std::abs(v) <= bound);
  // Not all zero / not degenerate: the weights spread over the interval.
  double mx = 0;
  for (double v : to_vector(lin.weight)) mx = std::max(mx, std::abs(v));
  REQUIRE(mx > bound / 2);

  nn::Linear small(2, 1);
  {
    NoGradGuard g;
    small.weight.copy_(values({2, -1}, {1, 2}));
    small.bias.copy_(values({0.5}, {1}));
  }
  require_values(small.forward(values({1, 1, 3, 2}, {2, 2})), {1.5, 4.5});
  require_values(small.forward(values({1, 1}, {2})), {1.5});               // 1-D input
  REQUIRE(small.forward(ones({3, 4, 2})).shape() == Shape{3, 4, 1});       // batched
  // Batched (non-contiguous) input goes through one addmm; values as in 2-D.
  const Tensor batched = values({1, 1, 3, 2, 0, 1, 2, 0}, {2, 2, 2}).transpose(0, 1);
  const Tensor y = small.forward(batched);
  REQUIRE(y.shape() == Shape{2, 2, 1});
  require_values(y.contiguous(), {1.5, -0.5, 4.5, 4.5});
  REQUIRE(small.forward(ones({0, 3, 2})).shape() == Shape{0, 3, 1});       // empty batch
  require_throws<ValueError>([&] { small.forward(ones({2, 3})); }, "Linear");
}

TEST_CASE("Sequential chains layers; Flatten flattens from dim 1", "[nn]") {
  nn::Sequential seq;
  seq.push_back(std::make_shared<nn::Flatten>());
  auto lin = seq.push_back(std::make_shared<nn::Linear>(6, 2));
  REQUIRE(seq.size() == 2);
  Tensor y = seq.forward(ones({4, 2, 3}));
  REQUIRE(y.shape() == Shape{4, 2});
  y.sum().backward();
  REQUIRE(lin->weight.grad().defined());
  require_values(lin->bias.grad(), {4, 4});
  seq.zero_grad();
  REQUIRE(!lin->weight.grad().defined());
}

TEST_CASE("Module::to casts parameters in place; handles follow", "[nn]") {
  nn::Linear lin(3, 2);
  Tensor w = lin.weight;
  const auto before = to_vector(w);
  lin.to(DType::Float64);
  REQUIRE(w.dtype() == DType::Float64);
  REQUIRE(lin.parameters()[0].dtype() == DType::Float64);
  REQUIRE(w.requires_grad());
  require_values(w, before);
  lin.forward(ones({1, 3}, DType::Float64)).sum().backward();
  REQUIRE(w.grad().dtype() == DType::Float64);
}

TEST_CASE("optim::SGD with momentum and weight decay matches a hand computation", "[optim]") {
  Tensor p = values({1, -2}, {2}, DType::Float64).requires_grad_();
  optim::SGDOptions o(0.1);
  o.momentum = 0.9;
  o.weight_decay = 0.5;
  optim::SGD opt({p}, o);
  // loss = sum(p^2) -> grad 2p; with weight decay d = 2p + 0.5p = 2.5p.
  auto step = [&] {
    opt.zero_grad();
    p.mul(p).sum().backward();
    opt.step();
  };
  step();  // buf = d = [2.5, -5]; p = p - 0.1 buf = [0.75, -1.5]
  require_values(p, {0.75, -1.5});
  step();  // d = 2.5p = [1.875, -3.75]; buf = 0.9 buf + d = [4.125, -8.25]; p -= 0.1 buf
  require_values(p, {0.75 - 0.4125, -1.5 + 0.825});
  opt.zero_grad();
  REQUIRE(!p.grad().defined());
  opt.step();  // no gradients: nothing moves
  require_values(p, {0.75 - 0.4125, -1.5 + 0.825});
}

TEST_CASE("optim::Adam and AdamW: first step moves by lr against the gradient", "[optim]") {
  Tensor a = values({1, 1}, {2}).requires_grad_();
  Tensor b = values({1, 1}, {2}).requires_grad_();
  optim::Adam adam({a}, optim::AdamOptions(0.1));
  optim::AdamWOptions wo(0.1);
  wo.weight_decay = 0.5;
  optim::AdamW adamw({b}, wo);
  a.mul(values({1, -1}, {2})).sum().backward();
  b.mul(values({1, -1}, {2})).sum().backward();
  adam.step();
  adamw.step();
  require_values(a, {0.9, 1.1}, 1e-5);
  // Decoupled decay first: p *= 1 - lr * wd = 0.95, then the Adam update.
  require_values(b, {0.85, 1.05}, 1e-5);
  require_throws<ValueError>([] { optim::Adam({zeros({1})}, optim::AdamOptions(-1)); }, "learning rate");
}

TEST_CASE("save/load round-trips every dtype and keeps key order", "[serialize]") {
  const std::string path = temp_path("dtypes");
  NamedTensors in{{"z", values({1.5, -2}, {2})},
                  {"a", values({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float64)},
                  {"h", values({0.5}, {1}, DType::Float16)},
                  {"bf", values({2}, {}, DType::BFloat16)},
                  {"i64", values({-7, 8}, {2}, DType::Int64)},
                  {"i32", values({9}, {1}, DType::Int32)},
                  {"i8", values({-3}, {1}, DType::Int8)},
                  {"u8", values({200}, {1}, DType::UInt8)},
                  {"b", values({1, 0}, {2}, DType::Bool)},
                  {"empty", zeros({0, 3})},
                  {"view", values({1, 2, 3, 4}, {2, 2}).t()}};
  save(in, path);
  NamedTensors out = load(path);
  REQUIRE(keys(out) == keys(in));
  for (size_t i = 0; i < in.size(); ++i) {
    INFO(in[i].first);
    REQUIRE(out[i].second.dtype() == in[i].second.dtype());
    REQUIRE(out[i].second.shape() == in[i].second.shape());
    REQUIRE(to_vector(out[i].second) == to_vector(in[i].second));
  }
  std::remove(path.c_str());
}

TEST_CASE("Module state_dict save/load restores the weights", "[serialize]") {
  const std::string path = temp_path("module");
  manual_seed(1);
  auto a = mlp();
  manual_seed(2);
  auto b = mlp();
  REQUIRE(to_vector(a->parameters()[0]) != to_vector(b->parameters()[0]));
  save(*a, path);
  load(*b, path);
  for (size_t i = 0; i < 3; ++i) REQUIRE(to_vector(a->parameters()[i]) == to_vector(b->parameters()[i]));
  // A different architecture is rejected with the key names.
  nn::Linear other(4, 3);
  require_throws<Error>([&] { load(other, path); }, "Unexpected key(s): \"0.weight\"");
  nn::Sequential wrong;
  wrong.push_back(std::make_shared<nn::Linear>(4, 2));
  require_throws<Error>([&] { wrong.load_state_dict(a->state_dict(), /*strict=*/false); }, "size mismatch for 0.weight");
  std::remove(path.c_str());
}

TEST_CASE("load rejects truncated and foreign files naming the path", "[serialize]") {
  const std::string path = temp_path("bad");
  save(NamedTensors{{"x", ones({16})}}, path);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  auto write = [&](const std::string& s) { std::ofstream(path, std::ios::binary) << s; };
  write(bytes.substr(0, bytes.size() - 4));
  require_throws<Error>([&] { load(path); }, path + ": tensor \"x\": data ends");
  write("abc");
  require_throws<Error>([&] { load(path); }, "not a safetensors file");
  write(std::string("\x05\0\0\0\0\0\0\0hello", 13));
  require_throws<Error>([&] { load(path); }, "header is not JSON");
  write(std::string("\xff\xff\0\0\0\0\0\0{}", 10));
  require_throws<Error>([&] { load(path); }, "truncated");
  std::remove(path.c_str());
  require_throws<Error>([&] { load(path); }, "cannot open " + path);
}

TEST_CASE("save writes the bytes Python's ember.save writes for a plain dict", "[serialize]") {
  // Golden header from python/ember/serialization.py's save() of
  // {"w": float32 [1, -2], "n": int64 [[3]]}: entries sorted, ember's
  // metadata as json.dumps text, padded with spaces to 8 bytes.
  const std::string head =
      R"({"n":{"dtype":"I64","shape":[1,1],"data_offsets":[0,8]},"w":{"dtype":"F32","shape":[2],)"
      R"("data_offsets":[8,16]},"__metadata__":{"ember":"{\"version\": 1, \"structure\": {\"D\": [[\"w\", )"
      R"({\"T\": \"w\"}], [\"n\", {\"T\": \"n\"}]]}}"}}  )";
  REQUIRE(head.size() == 232);
  const std::string path = temp_path("golden");
  save(NamedTensors{{"w", values({1, -2}, {2})}, {"n", values({3}, {1, 1}, DType::Int64)}}, path);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() == 8 + 232 + 16);
  REQUIRE(bytes.substr(0, 8) == std::string("\xe8\0\0\0\0\0\0\0", 8));
  REQUIRE(bytes.substr(8, 232) == head);
  const float w[2] = {1, -2};
  const int64_t n = 3;
  REQUIRE(bytes.substr(240, 8) == std::string(reinterpret_cast<const char*>(&n), 8));
  REQUIRE(bytes.substr(248, 8) == std::string(reinterpret_cast<const char*>(w), 8));
  std::remove(path.c_str());
}

TEST_CASE("load rejects malformed header entries", "[serialize]") {
  const std::string path = temp_path("entries");
  auto write_header = [&](const std::string& h) {
    std::string len(8, '\0');
    for (int k = 0; k < 8; ++k) len[k] = static_cast<char>(h.size() >> (8 * k));
    std::ofstream(path, std::ios::binary) << len << h << std::string(8, '\0');
  };
  write_header(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,-]}})");
  require_throws<Error>([&] { load(path); }, "malformed data_offsets");
  write_header(R"({"x":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})");
  require_throws<Error>([&] { load(path); }, "unsupported dtype C64");
  write_header(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})");
  require_throws<Error>([&] { load(path); }, "needs 12");
  write_header(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"y":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})");
  require_throws<Error>([&] { load(path); }, "overlap");
  write_header(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})");
  REQUIRE(load(path).size() == 1);  // a plain safetensors file without ember metadata
  std::remove(path.c_str());
}
