#include <ember/optim/serialize.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include <ember/core/error.h>
#include <ember/core/ops/factory.h>
#include <ember/nn/json.h>

namespace ember {
namespace {

// A float as Python's json.dumps writes it: the shortest text that reads back
// exactly, with ".0" on whole numbers; JSON has no inf/nan, so those are tagged.
std::string float_json(double v) {
  if (std::isnan(v)) return "{\"F\": \"nan\"}";
  if (std::isinf(v)) return v > 0 ? "{\"F\": \"inf\"}" : "{\"F\": \"-inf\"}";
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string hyper_json(const optim::HyperValue& h) {
  switch (h.kind) {
    case optim::HyperValue::Bool: return h.flag ? "true" : "false";
    case optim::HyperValue::Pair: return "{\"U\": [" + float_json(h.x) + ", " + float_json(h.y) + "]}";
    default: return float_json(h.x);
  }
}

[[noreturn]] void malformed(const std::string& path, const std::string& what) {
  throw Error(path + ": not an optimizer state dict (" + what + ")");
}

const json::Value& tagged(const std::string& path, const json::Value& v, const char* tag, const std::string& what) {
  const json::Value* inner = v.kind == json::Value::Object && v.members.size() == 1 ? v.find(tag) : nullptr;
  if (!inner) malformed(path, what);
  return *inner;
}

double number(const std::string& path, const json::Value& v, const std::string& what) {
  if (v.kind == json::Value::Number) return std::strtod(v.text.c_str(), nullptr);
  const json::Value* f = v.kind == json::Value::Object ? v.find("F") : nullptr;
  if (f && f->kind == json::Value::String) return std::strtod(f->text.c_str(), nullptr);
  malformed(path, what + " is not a number");
}

// A hyperparameter as Python saved it; false for values C++ options never hold (None, strings).
bool hyper_from_json(const std::string& path, const json::Value& v, optim::HyperValue& out) {
  if (v.kind == json::Value::Bool) {
    out = {optim::HyperValue::Bool, 0, 0, v.boolean};
    return true;
  }
  if (v.kind == json::Value::Number || (v.kind == json::Value::Object && v.find("F"))) {
    out = {optim::HyperValue::Number, number(path, v, "a hyperparameter"), 0, false};
    return true;
  }
  if (v.kind == json::Value::Object && v.members.size() == 1 && (v.find("U") || v.find("L"))) {
    const json::Value& items = v.members[0].second;
    if (items.kind != json::Value::Array || items.items.size() != 2) return false;
    out = {optim::HyperValue::Pair, number(path, items.items[0], "a pair"), number(path, items.items[1], "a pair"),
           false};
    return true;
  }
  return false;
}

}  // namespace

void save(const optim::OptimizerState& state, const std::string& path) {
  std::map<std::string, Tensor> tensors;
  std::string s = "{\"D\": [[\"state\", {\"D\": [";
  for (size_t i = 0; i < state.state.size(); ++i) {
    const auto& [index, named] = state.state[i];
    s += std::string(i ? ", " : "") + "[" + std::to_string(index) + ", {\"D\": [";
    for (size_t k = 0; k < named.size(); ++k) {
      std::string name = "state." + std::to_string(index) + "." + named[k].first;
      while (tensors.count(name)) name += "_";  // as Python: distinct keys never collide
      tensors[name] = named[k].second;
      s += std::string(k ? ", " : "") + "[" + json::quote(named[k].first) + ", {\"T\": " + json::quote(name) + "}]";
    }
    s += "]}]";
  }
  s += "]}], [\"param_groups\", {\"L\": [";
  for (size_t g = 0; g < state.param_groups.size(); ++g) {
    const auto& group = state.param_groups[g];
    s += std::string(g ? ", " : "") + "{\"D\": [";
    for (const auto& [key, h] : group.options) s += "[" + json::quote(key) + ", " + hyper_json(h) + "], ";
    s += "[\"params\", {\"L\": [";
    for (size_t i = 0; i < group.params.size(); ++i) s += (i ? ", " : "") + std::to_string(group.params[i]);
    s += "]}]]}";
  }
  s += "]}]]}";
  serialize_detail::write_file(tensors, s, path);
}

void load(optim::OptimizerState& out, const std::string& path) {
  std::map<std::string, Tensor> tensors;
  NamedTensors header_order;
  const json::Value structure = serialize_detail::read_file(path, tensors, header_order);
  if (structure.kind == json::Value::Null) malformed(path, "the file has no ember metadata");
  const json::Value& top = tagged(path, structure, "D", "not a dict");
  const json::Value *state = nullptr, *groups = nullptr;
  for (const auto& item : top.items) {
    if (item.kind != json::Value::Array || item.items.size() != 2 || item.items[0].kind != json::Value::String)
      malformed(path, "malformed dict entry");
    if (item.items[0].text == "state") state = &item.items[1];
    if (item.items[0].text == "param_groups") groups = &item.items[1];
  }
  if (!state || !groups) malformed(path, "no \"state\" and \"param_groups\" entries");

  optim::OptimizerState result;
  for (const auto& entry : tagged(path, *state, "D", "\"state\" is not a dict").items) {
    if (entry.kind != json::Value::Array || entry.items.size() != 2 || !entry.items[0].is_int())
      malformed(path, "\"state\" keys must be parameter indices");
    const int64_t index = entry.items[0].as_int();
    optim::NamedState named;
    for (const auto& kv : tagged(path, entry.items[1], "D", "a parameter's state is not a dict").items) {
      if (kv.kind != json::Value::Array || kv.items.size() != 2 || kv.items[0].kind != json::Value::String)
        malformed(path, "malformed state entry");
      const std::string& key = kv.items[0].text;
      const json::Value& v = kv.items[1];
      if (v.kind == json::Value::Null) continue;  // torch's momentum_buffer=None: no state
      if (const json::Value* t = v.kind == json::Value::Object ? v.find("T") : nullptr) {
        auto it = tensors.find(t->text);
        if (it == tensors.end())
          malformed(path, "metadata names tensor \"" + t->text + "\", which the file lacks");
        named.emplace_back(key, it->second);
      } else {  // a plain number (older step counters): kept as a 0-d float32 tensor
        named.emplace_back(key, full({}, number(path, v, "state \"" + key + "\""), DType::Float32));
      }
    }
    result.state.emplace_back(index, std::move(named));
  }
  for (const auto& g : tagged(path, *groups, "L", "\"param_groups\" is not a list").items) {
    optim::ParamGroupState group;
    bool has_params = false;
    for (const auto& kv : tagged(path, g, "D", "a param group is not a dict").items) {
      if (kv.kind != json::Value::Array || kv.items.size() != 2 || kv.items[0].kind != json::Value::String)
        malformed(path, "malformed param group entry");
      const std::string& key = kv.items[0].text;
      if (key == "params") {
        has_params = true;
        for (const auto& i : tagged(path, kv.items[1], "L", "\"params\" is not a list").items) {
          if (!i.is_int()) malformed(path, "\"params\" must hold parameter indices");
          group.params.push_back(i.as_int());
        }
        continue;
      }
      optim::HyperValue h;
      if (hyper_from_json(path, kv.items[1], h)) group.options.emplace_back(key, h);
    }
    if (!has_params) malformed(path, "a param group has no \"params\"");
    result.param_groups.push_back(std::move(group));
  }
  out = std::move(result);
}

void save(const optim::Optimizer& optimizer, const std::string& path) { save(optimizer.state_dict(), path); }

void load(optim::Optimizer& optimizer, const std::string& path) {
  optim::OptimizerState state;
  load(state, path);
  optimizer.load_state_dict(state);
}

}  // namespace ember
