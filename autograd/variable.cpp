// Tensor's autograd methods: requires_grad, grad, grad_fn, backward, hooks.
#include <atomic>

#include <ember/autograd/engine.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/meta.h>
#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/tensor.h>

namespace ember {

namespace autograd {
AutogradMeta& meta(const Tensor& t) {
  auto& m = t.impl()->autograd;
  if (!m) m = std::make_unique<AutogradMeta>();
  return *m;
}
}  // namespace autograd

using autograd::meta;
using autograd::meta_if;

bool Tensor::requires_grad() const {
  auto* m = meta_if(*this);
  return m && m->requires_grad;
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  auto* m = meta_if(*this);
  if (m && m->grad_fn) {
    EMBER_CHECK(requires_grad, Error,
                "requires_grad_: you can only change requires_grad flags of leaf variables. If you want to "
                "use a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().");
    return *this;
  }
  EMBER_CHECK(!requires_grad || !is_inference() || autograd::inference_mode_enabled(), Error,
              "requires_grad_: setting requires_grad=True on an inference tensor outside inference_mode is not "
              "allowed (clone it first)");
  EMBER_CHECK(!requires_grad || is_differentiable(dtype()), Error,
              "requires_grad_: only Tensors of floating point and complex dtype can require gradients (got ",
              dtype_name(dtype()), ")");
  if (requires_grad || m) meta(*this).requires_grad = requires_grad;
  return *this;
}

Tensor Tensor::grad() const {
  auto* m = meta_if(*this);
  return m ? m->grad : Tensor();
}

void Tensor::set_grad(const Tensor& g) const {
  if (g.defined()) {
    EMBER_CHECK(g.shape() == shape(), Error, "assigning grad: shape ", ember::shape_str(g.shape()),
                " does not match the tensor's shape ", ember::shape_str(shape()));
    EMBER_CHECK(g.dtype() == dtype(), Error, "assigning grad: assigned grad has data of a different type (",
                dtype_name(g.dtype()), ") than the tensor (", dtype_name(dtype()), ")");
    EMBER_CHECK(g.device() == device(), Error, "assigning grad: assigned grad is on ", g.device().str(),
                " but the tensor is on ", device().str());
  }
  meta(*this).grad = g;
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  auto* m = meta_if(*this);
  return m ? m->grad_fn : nullptr;
}

bool Tensor::is_leaf() const { return grad_fn() == nullptr; }

void Tensor::retain_grad() const {
  EMBER_CHECK(requires_grad(), Error, "retain_grad: can't retain_grad on Tensor that has requires_grad=False");
  auto& m = meta(*this);
  if (!m.grad_fn || m.retains_grad) return;
  m.retains_grad = true;
  m.grad_fn->retained[m.output_nr] = impl_ptr();
}

bool Tensor::retains_grad() const {
  auto* m = meta_if(*this);
  return m && m->retains_grad;
}

Tensor Tensor::detach() const {
  Tensor out = make_view(*this, shape(), strides(), storage_offset());
  out.impl()->is_view = impl_->is_view;
  return out;
}

Tensor& Tensor::detach_() {
  auto* m = meta_if(*this);
  if (m) {
    m->grad_fn.reset();
    m->requires_grad = false;
  }
  return *this;
}

void Tensor::backward(const Tensor& gradient, bool retain_graph, bool create_graph) const {
  autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}

namespace {
std::atomic<int> g_next_hook{0};  // hooks may be registered from several threads
}

int Tensor::register_hook(Hook hook) const {
  EMBER_CHECK(requires_grad(), Error,
              "register_hook: cannot register a hook on a tensor that doesn't require gradient");
  auto& m = meta(*this);
  const int id = ++g_next_hook;
  if (m.grad_fn) {
    m.grad_fn->tensor_hooks[m.output_nr].emplace_back(id, std::move(hook));
  } else {
    m.hooks.emplace_back(id, std::move(hook));
  }
  return id;
}

void Tensor::remove_hook(int handle) const {
  auto* m = meta_if(*this);
  if (!m) return;
  auto drop = [handle](auto& list) {
    for (auto it = list.begin(); it != list.end(); ++it) {
      if (it->first == handle) { list.erase(it); return; }
    }
  };
  drop(m->hooks);
  if (m->grad_fn) drop(m->grad_fn->tensor_hooks[m->output_nr]);
}

namespace autograd {

int register_post_accumulate_grad_hook(const Tensor& leaf, PostAccumulateGradHook hook) {
  EMBER_CHECK(leaf.requires_grad(), Error, "register_post_accumulate_grad_hook: cannot register a hook on a "
              "tensor that doesn't require gradient");
  EMBER_CHECK(leaf.is_leaf(), Error, "register_post_accumulate_grad_hook: post accumulate grad hooks cannot be "
              "registered on non-leaf tensors");
  const int id = ++g_next_hook;
  meta(leaf).post_accumulate_hooks.emplace_back(id, std::move(hook));
  return id;
}

void remove_post_accumulate_grad_hook(const Tensor& leaf, int handle) {
  auto* m = meta_if(leaf);
  if (!m) return;
  auto& list = m->post_accumulate_hooks;
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (it->first == handle) { list.erase(it); return; }
  }
}

}  // namespace autograd
}  // namespace ember
