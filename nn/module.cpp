#include <ember/nn/module.h>

#include <map>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>

namespace ember::nn {

void Module::check_name(const std::string& kind, const std::string& name) {
  EMBER_CHECK(!name.empty(), ValueError, kind, " name can't be empty");
  EMBER_CHECK(name.find('.') == std::string::npos, ValueError, kind, " name can't contain \".\", got \"", name,
              "\"");
}

namespace {
template <class V>
bool has_key(const V& v, const std::string& name) {
  for (const auto& kv : v)
    if (kv.first == name) return true;
  return false;
}
}  // namespace

Tensor Module::register_parameter(const std::string& name, Tensor tensor, bool requires_grad) {
  check_name("parameter", name);
  EMBER_CHECK(!has_key(parameters_, name) && !has_key(buffers_, name) && !has_key(children_, name), ValueError,
              "register_parameter: attribute \"", name, "\" already exists in ", name_);
  if (tensor.defined()) tensor.requires_grad_(requires_grad);
  parameters_.emplace_back(name, std::move(tensor));
  return parameters_.back().second;
}

Tensor Module::register_buffer(const std::string& name, Tensor tensor) {
  check_name("buffer", name);
  EMBER_CHECK(!has_key(parameters_, name) && !has_key(buffers_, name) && !has_key(children_, name), ValueError,
              "register_buffer: attribute \"", name, "\" already exists in ", name_);
  buffers_.emplace_back(name, std::move(tensor));
  return buffers_.back().second;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_name("module", name);
  EMBER_CHECK(module != nullptr, ValueError, "register_module: module \"", name, "\" is null");
  EMBER_CHECK(!has_key(parameters_, name) && !has_key(buffers_, name) && !has_key(children_, name), ValueError,
              "register_module: attribute \"", name, "\" already exists in ", name_);
  children_.emplace_back(name, std::move(module));
}

void Module::collect(const std::string& prefix, bool recurse, bool params,
                     std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, t] : params ? parameters_ : buffers_)
    if (t.defined()) out.emplace_back(prefix + name, t);
  if (!recurse) return;
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", true, params, out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", recurse, true, out);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", recurse, false, out);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& kv : named_parameters(recurse)) out.push_back(kv.second);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& kv : named_buffers(recurse)) out.push_back(kv.second);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& kv : children_) out.push_back(kv.second);
  return out;
}

void Module::collect_state(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, t] : parameters_)
    if (t.defined()) out.emplace_back(prefix + name, t);
  for (const auto& [name, t] : buffers_)
    if (t.defined()) out.emplace_back(prefix + name, t);
  for (const auto& [name, child] : children_) child->collect_state(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Tensor>> Module::state_dict() const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect_state("", out);
  return out;
}

void Module::load_state_dict(const std::vector<std::pair<std::string, Tensor>>& state, bool strict) {
  const auto own = state_dict();
  std::map<std::string, Tensor> given;
  for (const auto& kv : state) given[kv.first] = kv.second;
  std::string missing, unexpected;
  for (const auto& kv : own)
    if (!given.count(kv.first)) missing += (missing.empty() ? "\"" : ", \"") + kv.first + "\"";
  std::map<std::string, Tensor> mine(own.begin(), own.end());
  for (const auto& kv : state)
    if (!mine.count(kv.first)) unexpected += (unexpected.empty() ? "\"" : ", \"") + kv.first + "\"";
  EMBER_CHECK(!strict || (missing.empty() && unexpected.empty()), Error, "Error(s) in loading state_dict for ",
              name_, ":", missing.empty() ? "" : " Missing key(s): " + missing + ".",
              unexpected.empty() ? "" : " Unexpected key(s): " + unexpected + ".");
  NoGradGuard no_grad;
  for (const auto& [key, dst] : own) {
    auto it = given.find(key);
    if (it == given.end()) continue;
    const Tensor& src = it->second;
    EMBER_CHECK(src.shape() == dst.shape(), Error, "Error(s) in loading state_dict for ", name_,
                ": size mismatch for ", key, ": copying a param with shape ", src.shape_str(),
                ", the shape in current model is ", dst.shape_str(), ".");
    Tensor d = dst.detach();
    d.copy_(src.detach());
  }
}

void Module::train(bool on) {
  training_ = on;
  for (auto& kv : children_) kv.second->train(on);
}

void Module::zero_grad() {
  for (auto& p : parameters()) p.set_grad(Tensor());
}

namespace {
// Points `t` at a converted copy of its data: the TensorImpl stays the same,
// so every Tensor handle (a layer's member, an optimizer's list) follows.
void convert_in_place(const Tensor& t, DType dtype) {
  if (!t.defined() || !is_floating(t.dtype()) || t.dtype() == dtype) return;
  Tensor c = t.detach().to(dtype, /*copy=*/true).contiguous();
  t.set_grad(Tensor());
  TensorImpl* impl = t.impl();
  impl->storage = c.impl()->storage;
  impl->shape = c.shape();
  impl->strides = c.strides();
  impl->offset = c.storage_offset();
  impl->dtype = dtype;
}
}  // namespace

void Module::to(DType dtype) {
  NoGradGuard no_grad;
  for (auto& kv : parameters_) convert_in_place(kv.second, dtype);
  for (auto& kv : buffers_) convert_in_place(kv.second, dtype);
  for (auto& kv : children_) kv.second->to(dtype);
}

}  // namespace ember::nn
