// Bindings of the optim family: private multi-tensor updates that the
// ember.optim classes call once per param group per step. State lists may hold
// None where a buffer does not exist yet; the calls return the state lists
// with the buffers they created, for the caller to store.
#include <ember/core/ops/optim.h>

#include "bind.h"

namespace ember::python {
namespace {

using TensorList = std::vector<Tensor>;
using OptionalList = std::vector<std::optional<Tensor>>;

TensorList unwrap(const OptionalList& ts) {
  TensorList out(ts.size());
  for (size_t i = 0; i < ts.size(); ++i)
    if (ts[i]) out[i] = *ts[i];
  return out;
}

}  // namespace

void init_optim(py::module_& m) {
  m.def("_optim_sgd", [](const TensorList& params, const TensorList& grads, const OptionalList& momentum_buffers,
                         double lr, double momentum, double dampening, bool nesterov, double weight_decay,
                         bool maximize) {
        TensorList bufs = unwrap(momentum_buffers);
        sgd_(params, grads, bufs, SgdOptions{lr, momentum, dampening, weight_decay, nesterov, maximize});
        return bufs;
      },
      py::arg("params"), py::arg("grads"), py::arg("momentum_buffers"), py::arg("lr"), py::arg("momentum"),
      py::arg("dampening"), py::arg("nesterov"), py::arg("weight_decay"), py::arg("maximize"));

  m.def("_optim_adam", [](const TensorList& params, const TensorList& grads, const OptionalList& exp_avgs,
                          const OptionalList& exp_avg_sqs, const OptionalList& max_exp_avg_sqs,
                          const TensorList& state_steps, double lr, double beta1, double beta2,
                          double weight_decay, double eps, bool amsgrad, bool maximize,
                          bool decoupled_weight_decay) {
        TensorList m1 = unwrap(exp_avgs), m2 = unwrap(exp_avg_sqs), mx = unwrap(max_exp_avg_sqs);
        adam_(params, grads, m1, m2, mx, state_steps,
              AdamOptions{lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled_weight_decay});
        return py::make_tuple(m1, m2, mx);
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"),
      py::arg("max_exp_avg_sqs"), py::arg("state_steps"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"),
      py::arg("weight_decay"), py::arg("eps"), py::arg("amsgrad"), py::arg("maximize"),
      py::arg("decoupled_weight_decay") = false);

  m.def("_optim_rmsprop", [](const TensorList& params, const TensorList& grads, const OptionalList& square_avgs,
                             const OptionalList& grad_avgs, const OptionalList& momentum_buffers,
                             const TensorList& state_steps, double lr, double alpha, double eps,
                             double weight_decay, double momentum, bool centered, bool maximize) {
        TensorList sq = unwrap(square_avgs), ga = unwrap(grad_avgs), buf = unwrap(momentum_buffers);
        rmsprop_(params, grads, sq, ga, buf, state_steps,
                 RmspropOptions{lr, alpha, eps, weight_decay, momentum, centered, maximize});
        return py::make_tuple(sq, ga, buf);
      },
      py::arg("params"), py::arg("grads"), py::arg("square_avgs"), py::arg("grad_avgs"),
      py::arg("momentum_buffers"), py::arg("state_steps"), py::arg("lr"), py::arg("alpha"), py::arg("eps"),
      py::arg("weight_decay"), py::arg("momentum"), py::arg("centered"), py::arg("maximize"));

  m.def("_optim_adagrad", [](const TensorList& params, const TensorList& grads, const OptionalList& state_sums,
                             const TensorList& state_steps, double lr, double lr_decay, double weight_decay,
                             double initial_accumulator_value, double eps, bool maximize) {
        TensorList sums = unwrap(state_sums);
        adagrad_(params, grads, sums, state_steps,
                 AdagradOptions{lr, lr_decay, weight_decay, initial_accumulator_value, eps, maximize});
        return sums;
      },
      py::arg("params"), py::arg("grads"), py::arg("state_sums"), py::arg("state_steps"), py::arg("lr"),
      py::arg("lr_decay"), py::arg("weight_decay"), py::arg("initial_accumulator_value"), py::arg("eps"),
      py::arg("maximize"));
}

}  // namespace ember::python
