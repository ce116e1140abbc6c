// Front-ends of the optim family: argument checks, creation of missing state
// buffers, step counting, and work copies for tensors the CPU kernels cannot
// update directly (non-contiguous or half precision, which compute in float32).
#include <ember/core/ops/optim.h>

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <utility>

#include <ember/autograd/grad_mode.h>
#include <ember/core/cpu/optim.h>
#include <ember/core/error.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/factory.h>
#include <ember/core/tensor_impl.h>
#include <ember/cuda/optim.h>

namespace ember {
namespace {

DType compute_dtype(DType d) { return d == DType::Float64 ? DType::Float64 : DType::Float32; }

// Tensors the kernels update, as they see them. A tensor that is not a
// contiguous float32/float64 one is updated through a copy that finish()
// writes back; the others are updated in place and get their version bumped.
class Workspace {
 public:
  Tensor writable(const Tensor& t, DType dtype) {
    if (!t.defined()) return t;
    if (t.dtype() == dtype && t.is_contiguous()) {
      direct_.push_back(t);
      return t;
    }
    Tensor work = t.to(dtype, /*copy=*/true).contiguous();
    write_back_.emplace_back(t, work);
    return work;
  }
  static Tensor readable(const Tensor& t, DType dtype) { return t.to(dtype).contiguous(); }
  void finish() {
    for (auto& [orig, work] : write_back_) orig.copy_(work);
    for (auto& t : direct_) t.bump_version();
  }

 private:
  std::vector<Tensor> direct_;
  std::vector<std::pair<Tensor, Tensor>> write_back_;
};

// Checks that params and grads pair up: same count, shape, dtype and device.
// cuda_ok: the op has fused CUDA kernels (all four do today); the params
// of one step must then all be on the CPU or all on GPUs.
void check_params(const char* op, const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  bool cuda_ok = false) {
  EMBER_CHECK(params.size() == grads.size(), ValueError, op, ": got ", params.size(), " params but ",
              grads.size(), " grads");
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    const Tensor& g = grads[i];
    EMBER_CHECK(p.defined(), ValueError, op, ": params[", i, "] is None");
    EMBER_CHECK(g.defined(), ValueError, op, ": grads[", i, "] is None (skip parameters without a gradient)");
    EMBER_CHECK(p.is_floating_point(), TypeError, op, ": params[", i, "] has dtype ", dtype_name(p.dtype()),
                "; optimizers update floating-point tensors only");
    EMBER_CHECK(p.device().is_cpu() || cuda_ok, NotImplementedError, op, ": params[", i, "] is on ",
                p.device().str(), "; this optimizer's kernels run on the CPU only");
    EMBER_CHECK(p.device().type == params[0].device().type, NotImplementedError, op, ": params[", i, "] is on ",
                p.device().str(), " but params[0] on ", params[0].device().str(),
                "; step the CPU and the GPU parameters with separate optimizers");
    EMBER_CHECK(g.device() == p.device(), Error, op, ": grads[", i, "] is on ", g.device().str(),
                " but its parameter is on ", p.device().str());
    EMBER_CHECK(g.dtype() == p.dtype(), TypeError, op, ": grads[", i, "] has dtype ", dtype_name(g.dtype()),
                " but its parameter has dtype ", dtype_name(p.dtype()));
    EMBER_CHECK(g.shape() == p.shape(), Error, op, ": grads[", i, "] has shape ", g.shape_str(),
                " but its parameter has shape ", p.shape_str());
  }
}

// Checks one state list (`name`) against the params, creating missing
// buffers as zeros when `create` (and reporting which were created in `fresh`).
void prepare_state(const char* op, const char* name, const std::vector<Tensor>& params,
                   std::vector<Tensor>& state, bool create, std::vector<bool>* fresh = nullptr) {
  if (state.empty() && !params.empty()) state.resize(params.size());
  EMBER_CHECK(state.size() == params.size(), ValueError, op, ": got ", params.size(), " params but ",
              state.size(), " ", name);
  if (fresh) fresh->assign(params.size(), false);
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    Tensor& s = state[i];
    if (!s.defined()) {
      if (!create) continue;
      s = zeros(p.shape(), p.dtype(), p.device());
      if (fresh) (*fresh)[i] = true;
      continue;
    }
    EMBER_CHECK(s.is_floating_point(), TypeError, op, ": ", name, "[", i, "] has dtype ",
                dtype_name(s.dtype()), "; expected a floating-point tensor");
    EMBER_CHECK(s.device() == p.device(), Error, op, ": ", name, "[", i, "] is on ", s.device().str(),
                " but its parameter is on ", p.device().str());
    EMBER_CHECK(s.shape() == p.shape(), Error, op, ": ", name, "[", i, "] has shape ", s.shape_str(),
                " but its parameter has shape ", p.shape_str());
  }
}

// Adds one to each step tensor and returns the new counts.
std::vector<double> advance_steps(const char* op, const std::vector<Tensor>& params,
                                  const std::vector<Tensor>& steps) {
  EMBER_CHECK(steps.size() == params.size(), ValueError, op, ": got ", params.size(), " params but ",
              steps.size(), " steps");
  std::vector<double> counts(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const Tensor& s = steps[i];
    EMBER_CHECK(s.defined() && s.numel() == 1, ValueError, op, ": steps[", i,
                "] must be a one-element tensor (the step count)");
    counts[i] = s.item().to_double() + 1;
    Tensor(s).fill_(counts[i]);
  }
  return counts;
}

// Work tensors of one list, in the compute dtype of each parameter.
std::vector<Tensor> writable_all(Workspace& ws, const std::vector<Tensor>& ts, const std::vector<Tensor>& params) {
  std::vector<Tensor> out(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) out[i] = ws.writable(ts[i], compute_dtype(params[i].dtype()));
  return out;
}

std::vector<Tensor> readable_all(const std::vector<Tensor>& ts, const std::vector<Tensor>& params) {
  std::vector<Tensor> out(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) out[i] = Workspace::readable(ts[i], compute_dtype(params[i].dtype()));
  return out;
}

bool on_cuda(const std::vector<Tensor>& params) { return !params.empty() && params[0].device().is_cuda(); }

using TensorLists = std::vector<std::vector<Tensor>>;

// A parameter listed more than once is stepped once per place, in order, as
// PyTorch's loop does: one fused launch over both places would race on the
// shared memory, and two work copies would each write back one step. When any
// parameter repeats, `step` runs once per round (round k: the k-th place of
// each parameter) on that round's slice of params, grads, the read-only
// `inputs` (steps) and the `states`. Each place keeps the state it was given:
// where that is none, each creates its own, as in PyTorch's loop (whose SGD
// starts both places' momentum from the gradient). Returns false, running
// nothing, when no parameter repeats.
bool step_repeats_in_turn(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                          const std::vector<const std::vector<Tensor>*>& inputs,
                          const std::vector<std::vector<Tensor>*>& states,
                          const std::function<void(const std::vector<Tensor>&, const std::vector<Tensor>&,
                                                   const TensorLists&, TensorLists&)>& step) {
  std::unordered_map<const TensorImpl*, size_t> seen;  // parameter -> places so far
  std::vector<size_t> round_of(params.size());
  size_t rounds = 1;
  for (size_t i = 0; i < params.size(); ++i) {
    round_of[i] = seen[params[i].impl()]++;
    rounds = std::max(rounds, round_of[i] + 1);
  }
  if (rounds == 1) return false;
  // A list of the wrong length: the op's own checks report it, in one call.
  for (const auto* list : inputs) {
    if (list->size() != params.size()) return false;
  }
  for (const auto* list : states) {
    if (!list->empty() && list->size() != params.size()) return false;
  }
  auto slice = [](const std::vector<Tensor>& list, const std::vector<size_t>& idx) {
    std::vector<Tensor> out;  // empty for a state list not given (the op creates the state)
    if (!list.empty()) {
      for (size_t i : idx) out.push_back(list[i]);
    }
    return out;
  };
  for (size_t r = 0; r < rounds; ++r) {
    std::vector<size_t> idx;
    for (size_t i = 0; i < params.size(); ++i) {
      if (round_of[i] == r) idx.push_back(i);
    }
    TensorLists in, st;
    for (const auto* list : inputs) in.push_back(slice(*list, idx));
    for (auto* list : states) st.push_back(slice(*list, idx));
    step(slice(params, idx), slice(grads, idx), in, st);
    for (size_t k = 0; k < states.size(); ++k) {
      auto& list = *states[k];
      if (st[k].size() != idx.size()) continue;
      if (list.empty()) list.resize(params.size());
      for (size_t j = 0; j < idx.size(); ++j) list[idx[j]] = st[k][j];
    }
  }
  return true;
}

}  // namespace

void sgd_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
          std::vector<Tensor>& momentum_buffers, const SgdOptions& o) {
  NoGradGuard no_grad;
  check_params("sgd", params, grads, /*cuda_ok=*/true);
  if (step_repeats_in_turn(params, grads, {}, {&momentum_buffers}, [&](auto& p, auto& g, auto&, auto& st) {
        sgd_(p, g, st[0], o);
      })) {
    return;
  }
  std::vector<bool> fresh;
  const bool use_momentum = o.momentum != 0;
  prepare_state("sgd", "momentum_buffers", params, momentum_buffers, use_momentum, &fresh);
  Workspace ws;
  auto p = writable_all(ws, params, params);
  auto b = use_momentum ? writable_all(ws, momentum_buffers, params) : std::vector<Tensor>(params.size());
  if (on_cuda(params)) {
    cuda::sgd(p, readable_all(grads, params), b, fresh, o);
  } else {
    cpu::sgd(p, readable_all(grads, params), b, fresh, o);
  }
  ws.finish();
}

void adam_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
           std::vector<Tensor>& exp_avgs, std::vector<Tensor>& exp_avg_sqs,
           std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& steps, const AdamOptions& o) {
  const char* op = o.decoupled_weight_decay ? "adamw" : "adam";
  NoGradGuard no_grad;
  check_params(op, params, grads, /*cuda_ok=*/true);
  if (step_repeats_in_turn(params, grads, {&steps}, {&exp_avgs, &exp_avg_sqs, &max_exp_avg_sqs},
                           [&](auto& p, auto& g, auto& in, auto& st) { adam_(p, g, st[0], st[1], st[2], in[0], o); })) {
    return;
  }
  prepare_state(op, "exp_avgs", params, exp_avgs, true);
  prepare_state(op, "exp_avg_sqs", params, exp_avg_sqs, true);
  prepare_state(op, "max_exp_avg_sqs", params, max_exp_avg_sqs, o.amsgrad);
  const std::vector<double> counts = advance_steps(op, params, steps);
  Workspace ws;
  auto p = writable_all(ws, params, params);
  auto m = writable_all(ws, exp_avgs, params);
  auto v = writable_all(ws, exp_avg_sqs, params);
  auto vmax = o.amsgrad ? writable_all(ws, max_exp_avg_sqs, params) : std::vector<Tensor>(params.size());
  if (on_cuda(params)) {
    cuda::adam(p, readable_all(grads, params), m, v, vmax, counts, o);
  } else {
    cpu::adam(p, readable_all(grads, params), m, v, vmax, counts, o);
  }
  ws.finish();
}

void rmsprop_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& square_avgs, std::vector<Tensor>& grad_avgs,
              std::vector<Tensor>& momentum_buffers, const std::vector<Tensor>& steps,
              const RmspropOptions& o) {
  NoGradGuard no_grad;
  check_params("rmsprop", params, grads, /*cuda_ok=*/true);
  if (step_repeats_in_turn(params, grads, {&steps}, {&square_avgs, &grad_avgs, &momentum_buffers},
                           [&](auto& p, auto& g, auto& in, auto& st) { rmsprop_(p, g, st[0], st[1], st[2], in[0], o); })) {
    return;
  }
  prepare_state("rmsprop", "square_avgs", params, square_avgs, true);
  prepare_state("rmsprop", "grad_avgs", params, grad_avgs, o.centered);
  prepare_state("rmsprop", "momentum_buffers", params, momentum_buffers, o.momentum > 0);
  advance_steps("rmsprop", params, steps);
  Workspace ws;
  const std::vector<Tensor> none(params.size());
  auto p = writable_all(ws, params, params);
  auto sq = writable_all(ws, square_avgs, params);
  auto ga = o.centered ? writable_all(ws, grad_avgs, params) : none;
  auto buf = o.momentum > 0 ? writable_all(ws, momentum_buffers, params) : none;
  if (on_cuda(params)) {
    cuda::rmsprop(p, readable_all(grads, params), sq, ga, buf, o);
  } else {
    cpu::rmsprop(p, readable_all(grads, params), sq, ga, buf, o);
  }
  ws.finish();
}

void adagrad_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& state_sums, const std::vector<Tensor>& steps, const AdagradOptions& o) {
  NoGradGuard no_grad;
  check_params("adagrad", params, grads, /*cuda_ok=*/true);
  if (step_repeats_in_turn(params, grads, {&steps}, {&state_sums},
                           [&](auto& p, auto& g, auto& in, auto& st) { adagrad_(p, g, st[0], in[0], o); })) {
    return;
  }
  std::vector<bool> fresh;
  prepare_state("adagrad", "state_sums", params, state_sums, true, &fresh);
  for (size_t i = 0; i < params.size(); ++i)
    if (fresh[i] && o.initial_accumulator_value != 0) state_sums[i].fill_(o.initial_accumulator_value);
  const std::vector<double> counts = advance_steps("adagrad", params, steps);
  Workspace ws;
  auto p = writable_all(ws, params, params);
  auto s = writable_all(ws, state_sums, params);
  if (on_cuda(params)) {
    cuda::adagrad(p, readable_all(grads, params), s, counts, o);
  } else {
    cpu::adagrad(p, readable_all(grads, params), s, counts, o);
  }
  ws.finish();
}

}  // namespace ember
