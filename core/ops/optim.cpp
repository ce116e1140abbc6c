// Front-ends of the optim family: argument checks, creation of missing state
// buffers, step counting, and work copies for tensors the CPU kernels cannot
// update directly (non-contiguous or half precision, which compute in float32).
#include <ember/core/ops/optim.h>

#include <utility>

#include <ember/autograd/grad_mode.h>
#include <ember/core/cpu/optim.h>
#include <ember/core/error.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/factory.h>
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

}  // namespace

void sgd_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
          std::vector<Tensor>& momentum_buffers, const SgdOptions& o) {
  NoGradGuard no_grad;
  check_params("sgd", params, grads, /*cuda_ok=*/true);
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
