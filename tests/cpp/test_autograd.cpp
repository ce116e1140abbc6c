// The autograd engine: gradients through the skeleton's ops, accumulation,
// freed and modified saved tensors, grad mode, hooks and double backward.
#include "util.h"

using namespace ember;
using test::require_throws;
using test::require_values;
using test::values;

namespace {
Tensor leaf(const std::vector<double>& v, const Shape& shape, DType dtype = DType::Float64) {
  Tensor t = values(v, shape, dtype);
  t.requires_grad_(true);
  return t;
}
}  // namespace

TEST_CASE("backward through add, sub, mul, div, sum and mean", "[autograd]") {
  Tensor x = leaf({1, 2, 4}, {3});
  Tensor w = leaf({0.5, -1, 2}, {3});
  // y = sum(x * w + x / 2 - w) + mean(x * x)
  Tensor y = x.mul(w).add(x.div(scalar_tensor(2.0))).sub(w).sum().add(x.mul(x).mean());
  REQUIRE(y.dim() == 0);
  REQUIRE(y.grad_fn() != nullptr);
  REQUIRE(y.grad_fn()->name() == "AddBackward0");
  y.backward();
  // dy/dx = w + 1/2 + 2x/3, dy/dw = x - 1
  require_values(x.grad(), {0.5 + 0.5 + 2.0 / 3, -1 + 0.5 + 4.0 / 3, 2 + 0.5 + 8.0 / 3});
  require_values(w.grad(), {0, 1, 3});
  REQUIRE(x.is_leaf());
  REQUIRE_FALSE(y.is_leaf());
}

TEST_CASE("gradients flow back through broadcasting and dtype casts", "[autograd]") {
  Tensor b = leaf({1, 2, 3}, {3});
  Tensor m = leaf({1, 1, 1, 1, 1, 1}, {2, 3});
  (m.mul(b)).sum().backward();  // b broadcast over 2 rows
  require_values(b.grad(), {2, 2, 2});
  require_values(m.grad(), {1, 2, 3, 1, 2, 3});

  Tensor f = leaf({1, 2}, {2}, DType::Float32);
  f.to(DType::Float64).mul(scalar_tensor(3.0)).sum().backward();
  REQUIRE(f.grad().dtype() == DType::Float32);
  require_values(f.grad(), {3, 3});
}

TEST_CASE("backward through view, expand and permute", "[autograd][view]") {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor weights = values({1, 10, 100, 1000, 10000, 100000}, {3, 2}, DType::Float64);
  // permute to [3, 2], weight each element, flatten through view
  x.permute({1, 0}).mul(weights).reshape({6}).sum().backward();
  // element x[i][j] met weights[j][i]
  require_values(x.grad(), {1, 100, 10000, 10, 1000, 100000});

  Tensor y = leaf({1, 2, 3}, {3});
  y.view({1, 3}).expand({4, 3}).sum().backward();
  require_values(y.grad(), {4, 4, 4});

  Tensor z = leaf({1, 2}, {2});
  z.unsqueeze(1).expand({2, 5}).mean().backward();
  require_values(z.grad(), {0.5, 0.5});
}

TEST_CASE("gradients accumulate across backward calls", "[autograd]") {
  Tensor x = leaf({1, 2}, {2});
  x.mul(x).sum().backward();
  require_values(x.grad(), {2, 4});
  x.mul(x).sum().backward();
  require_values(x.grad(), {4, 8});
  // Two uses of x in one graph add up too.
  Tensor y = leaf({3}, {1});
  y.add(y).add(y).sum().backward();
  require_values(y.grad(), {3});
}

TEST_CASE("a second backward through freed saved tensors raises", "[autograd][errors]") {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x.mul(x).sum();
  y.backward();
  require_throws<Error>([&] { y.backward(); }, "backward through the graph a second time");

  // retain_graph keeps them.
  Tensor z = x.mul(x).sum();
  x.set_grad(Tensor());
  z.backward(Tensor(), /*retain_graph=*/true);
  z.backward();
  require_values(x.grad(), {4, 8});
}

TEST_CASE("modifying a saved tensor in place makes backward raise", "[autograd][errors]") {
  Tensor x = leaf({1, 2}, {2});
  Tensor a = x.mul(scalar_tensor(2.0));  // not a leaf: in-place is allowed
  Tensor b = a.mul(a);                   // saves a
  a.add_(ones({2}, DType::Float64));
  require_throws<Error>([&] { b.sum().backward(); }, "modified by an inplace operation");

  // In-place on a leaf that requires grad is refused outright.
  require_throws<Error>([&] { x.add_(ones({2}, DType::Float64)); }, "leaf Variable that requires grad");
}

TEST_CASE("NoGradGuard stops recording and restores the mode", "[autograd][grad_mode]") {
  Tensor x = leaf({1, 2}, {2});
  REQUIRE(autograd::grad_enabled());
  {
    NoGradGuard guard;
    REQUIRE_FALSE(autograd::grad_enabled());
    Tensor y = x.mul(x);
    REQUIRE_FALSE(y.requires_grad());
    REQUIRE(y.grad_fn() == nullptr);
    x.add_(ones({2}, DType::Float64));  // allowed on a leaf under no_grad
  }
  REQUIRE(autograd::grad_enabled());
  require_values(x, {2, 3});
  REQUIRE(x.mul(x).requires_grad());
  // detach() cuts the graph but shares the data.
  Tensor d = x.detach();
  REQUIRE_FALSE(d.requires_grad());
  REQUIRE(d.storage().is_same(x.storage()));
}

TEST_CASE("tensor hooks see and may replace gradients", "[autograd][hooks]") {
  Tensor x = leaf({1, 2}, {2});
  const int doubling = x.register_hook([](const Tensor& g) { return g.mul(scalar_tensor(2.0)); });
  Tensor seen;
  Tensor y = x.mul(scalar_tensor(3.0));
  y.register_hook([&seen](const Tensor& g) {
    seen = g;
    return Tensor();  // keep g unchanged
  });
  y.sum().backward();
  require_values(seen, {1, 1});
  require_values(x.grad(), {6, 6});

  x.remove_hook(doubling);
  x.set_grad(Tensor());
  x.mul(scalar_tensor(3.0)).sum().backward();
  require_values(x.grad(), {3, 3});

  require_throws<Error>([] { zeros({1}).register_hook([](const Tensor& g) { return g; }); },
                        "doesn't require gradient");
}

TEST_CASE("retain_grad keeps a non-leaf's gradient", "[autograd]") {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x.mul(x);
  y.retain_grad();
  y.sum().backward();
  require_values(y.grad(), {1, 1});
  require_values(x.grad(), {2, 4});
}

TEST_CASE("autograd::grad with create_graph gives higher derivatives", "[autograd][double_backward]") {
  Tensor x = leaf({3}, {});
  Tensor y = x.mul(x).mul(x);  // x^3
  std::vector<Tensor> g = autograd::grad({y}, {x}, {}, /*retain_graph=*/true, /*create_graph=*/true,
                                         /*allow_unused=*/false);
  REQUIRE(g.size() == 1);
  require_values(g[0], {27});  // 3x^2
  REQUIRE(g[0].requires_grad());
  std::vector<Tensor> gg = autograd::grad({g[0]}, {x}, {}, true, true, false);
  require_values(gg[0], {18});  // 6x
  std::vector<Tensor> ggg = autograd::grad({gg[0]}, {x}, {}, false, false, false);
  require_values(ggg[0], {6});
  REQUIRE_FALSE(x.grad().defined());  // grad() returns, it does not accumulate

  Tensor unused = leaf({1}, {});
  require_throws<Error>([&] { autograd::grad({x.mul(x)}, {unused}, {}, false, false, false); },
                        "appears to not have been used in the graph");
  std::vector<Tensor> none = autograd::grad({x.mul(x)}, {unused}, {}, false, false, /*allow_unused=*/true);
  REQUIRE_FALSE(none[0].defined());
}

TEST_CASE("backward needs a gradient for non-scalar outputs", "[autograd][errors]") {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x.mul(x);
  require_throws<Error>([&] { y.backward(); }, "grad can be implicitly created only for scalar outputs");
  y.backward(values({1, 0.5}, {2}, DType::Float64));
  require_values(x.grad(), {2, 2});
  require_throws<Error>([] { zeros({1}).backward(); }, "does not require grad");
}

TEST_CASE("post accumulate grad hooks run after .grad is written", "[autograd][hooks]") {
  Tensor w = leaf({1, 2}, {2});
  std::vector<std::vector<double>> seen;
  const int id = autograd::register_post_accumulate_grad_hook(
      w, [&seen](const Tensor& t) { seen.push_back(test::to_vector(t.grad())); });
  w.mul(scalar_tensor(3.0)).sum().backward();
  w.mul(scalar_tensor(2.0)).sum().backward();
  REQUIRE(seen.size() == 2);
  REQUIRE(seen[0] == std::vector<double>{3, 3});
  REQUIRE(seen[1] == std::vector<double>{5, 5});  // sees the accumulated value

  // autograd::grad returns gradients without accumulating: no hook.
  autograd::grad({w.sum()}, {w}, {}, false, false, false);
  REQUIRE(seen.size() == 2);

  autograd::remove_post_accumulate_grad_hook(w, id);
  w.sum().backward();
  REQUIRE(seen.size() == 2);

  require_throws<Error>([&] { autograd::register_post_accumulate_grad_hook(w.mul(w), [](const Tensor&) {}); },
                        "non-leaf");
  require_throws<Error>([] { autograd::register_post_accumulate_grad_hook(zeros({1}), [](const Tensor&) {}); },
                        "doesn't require gradient");
}

TEST_CASE("queued callbacks run once when backward finishes", "[autograd][hooks]") {
  Tensor a = leaf({1}, {1});
  Tensor b = leaf({2}, {1});
  std::vector<std::string> order;
  int calls = 0;
  // Queued from a's hook: runs after b's gradient is in as well.
  autograd::register_post_accumulate_grad_hook(a, [&](const Tensor&) {
    order.push_back("a");
    if (calls++ == 0) {
      autograd::queue_callback([&] {
        order.push_back(b.grad().defined() ? "callback after b" : "callback before b");
        autograd::queue_callback([&] { order.push_back("nested"); });
      });
    }
  });
  autograd::register_post_accumulate_grad_hook(b, [&](const Tensor&) { order.push_back("b"); });
  a.mul(b).sum().backward();
  REQUIRE(order.size() == 4);
  REQUIRE(order[2] == "callback after b");
  REQUIRE(order[3] == "nested");
  a.mul(b).sum().backward();  // not queued again: runs once per backward
  REQUIRE(order.size() == 6);

  require_throws<Error>([] { autograd::queue_callback([] {}); }, "while a backward pass is running");
}
