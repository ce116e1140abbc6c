// Saved-tensor hooks from C++ (autograd/saved_hooks.h): pack at record time,
// unpack on every use, nesting, shape checks, the version check, disabling,
// and double backward through unpacked tensors.
#include <cmath>

#include <ember/autograd/saved_hooks.h>

#include "util.h"

using namespace ember;
using test::require_throws;
using test::require_values;
using test::values;

namespace {
Tensor leaf(const std::vector<double>& v, const Shape& shape) {
  Tensor t = values(v, shape, DType::Float64);
  t.requires_grad_(true);
  return t;
}

// Hooks that count their calls and keep a detached view (or a copy).
struct Counting {
  int packs = 0, unpacks = 0;
  std::shared_ptr<autograd::SavedTensorHooks> hooks(bool copy) {
    auto h = std::make_shared<autograd::SavedTensorHooks>();
    h->pack = [this, copy](const Tensor& t) -> autograd::PackedValue {
      ++packs;
      return std::make_shared<Tensor>(copy ? t.detach().clone() : t.detach());
    };
    h->unpack = [this](const autograd::PackedValue& v) {
      ++unpacks;
      return *static_cast<const Tensor*>(v.get());
    };
    return h;
  }
};
}  // namespace

TEST_CASE("saved-tensor hooks pack at record time and unpack on every use", "[saved-hooks]") {
  Counting c;
  Tensor x = leaf({0.5, -1, 2}, {3});
  Tensor y;
  {
    autograd::SavedTensorHooksGuard guard(c.hooks(false));
    REQUIRE(autograd::current_saved_tensor_hooks() != nullptr);
    y = x.mul(x).exp().sum();  // mul saves x twice, exp its output
  }
  REQUIRE(autograd::current_saved_tensor_hooks() == nullptr);
  REQUIRE(c.packs == 3);
  REQUIRE(c.unpacks == 0);
  y.backward(Tensor(), /*retain_graph=*/true);
  REQUIRE(c.unpacks == 3);
  y.backward();
  REQUIRE(c.unpacks == 6);
  const double e[] = {std::exp(0.25), std::exp(1.0), std::exp(4.0)};
  require_values(x.grad(), {2 * 2 * 0.5 * e[0], 2 * 2 * -1 * e[1], 2 * 2 * 2 * e[2]}, 1e-9);
}

TEST_CASE("nested saved-tensor hooks: the innermost applies, a null entry suspends", "[saved-hooks]") {
  Counting outer, inner;
  Tensor x = leaf({1, 2}, {2});
  autograd::SavedTensorHooksGuard a(outer.hooks(false));
  x.exp();
  {
    autograd::SavedTensorHooksGuard b(inner.hooks(false));
    x.exp();
    autograd::SavedTensorHooksGuard none(nullptr);
    x.exp();
  }
  x.exp();
  REQUIRE(outer.packs == 2);
  REQUIRE(inner.packs == 1);
}

TEST_CASE("an unpack hook must give back the saved shape and dtype", "[saved-hooks]") {
  Tensor x = leaf({1, 2, 3}, {3});
  auto h = std::make_shared<autograd::SavedTensorHooks>();
  h->pack = [](const Tensor& t) -> autograd::PackedValue { return std::make_shared<Tensor>(t.detach()); };
  h->unpack = [](const autograd::PackedValue& v) { return static_cast<const Tensor*>(v.get())->reshape({3, 1}); };
  Tensor y;
  {
    autograd::SavedTensorHooksGuard guard(h);
    y = x.exp().sum();
  }
  require_throws<Error>([&] { y.backward(); }, "ExpBackward0: the saved tensor unpack hook returned a float64 "
                                               "tensor of shape [3, 1]");
}

TEST_CASE("the version check stays for unpacked tensors sharing the saved memory", "[saved-hooks]") {
  Tensor x = leaf({1, 2}, {2});
  Counting shared, copied;
  Tensor y = x.mul(values({1, 1}, {2}, DType::Float64));
  Tensor z;
  {
    autograd::SavedTensorHooksGuard guard(shared.hooks(false));
    z = y.mul(y).sum();
  }
  {
    NoGradGuard no_grad;
    y.add_(values({1, 1}, {2}, DType::Float64));
  }
  require_throws<Error>([&] { z.backward(); }, "which is an input of MulBackward0, is at version 1; expected "
                                               "version 0");
  // A copy is a snapshot: the gradient of the values at save time.
  Tensor y2 = x.mul(values({1, 1}, {2}, DType::Float64));
  {
    autograd::SavedTensorHooksGuard guard(copied.hooks(true));
    z = y2.mul(y2).sum();
  }
  {
    NoGradGuard no_grad;
    y2.add_(values({1, 1}, {2}, DType::Float64));
  }
  z.backward();
  require_values(x.grad(), {2, 4});
}

TEST_CASE("double backward reaches leaves through unpacked tensors", "[saved-hooks]") {
  Counting c;
  Tensor x = leaf({0.5, 3}, {2});
  Tensor g;
  {
    autograd::SavedTensorHooksGuard guard(c.hooks(true));
    Tensor y = x.mul(x).mul(x).sum();  // x^3
    g = autograd::grad({y}, {x}, {}, false, /*create_graph=*/true, false)[0];
  }
  require_values(g, {3 * 0.25, 3 * 9.0}, 1e-12);
  g.sum().backward();
  require_values(x.grad(), {6 * 0.5, 6 * 3.0}, 1e-12);
}

TEST_CASE("disabled saved-tensor hooks refuse to be pushed", "[saved-hooks]") {
  Counting c;
  autograd::disable_saved_tensor_hooks("no hooks here");
  require_throws<Error>([&] { autograd::push_saved_tensor_hooks(c.hooks(false)); }, "no hooks here");
  autograd::push_saved_tensor_hooks(nullptr);  // a suspension is always allowed
  autograd::pop_saved_tensor_hooks();
  REQUIRE(autograd::saved_tensor_hooks_disabled_message() == std::optional<std::string>("no hooks here"));
  autograd::enable_saved_tensor_hooks();
  {
    autograd::SavedTensorHooksGuard guard(c.hooks(false));
    require_throws<Error>([] { autograd::disable_saved_tensor_hooks("too late"); }, "too late");
    autograd::enable_saved_tensor_hooks();
  }
  REQUIRE_FALSE(autograd::saved_tensor_hooks_disabled_message().has_value());
  require_throws<Error>([] { autograd::pop_saved_tensor_hooks(); }, "pop without a matching push");
}
