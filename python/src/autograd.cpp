// Autograd from Python: backward, grad, grad modes, hooks, grad_fn.
#include <ember/autograd/engine.h>
#include <ember/autograd/meta.h>
#include <ember/autograd/sequence.h>

#include <unordered_set>

#include "bind.h"

namespace ember::python {

void init_anomaly(py::module_& m);  // anomaly.cpp
void init_saved_hooks(py::module_& m);  // saved_hooks.cpp

namespace {
// None (no tensors), a Tensor, or a sequence of Tensors and Nones; a TypeError
// naming op and the argument (`what`) otherwise.
std::vector<Tensor> tensor_list(py::handle obj, const char* op, const char* what) {
  std::vector<Tensor> out;
  if (obj.is_none()) return out;
  if (py::isinstance<Tensor>(obj)) return {obj.cast<Tensor>()};
  EMBER_CHECK(py::isinstance<py::iterable>(obj) && !py::isinstance<py::str>(obj), TypeError, op, ": ", what,
              " must be a Tensor or a sequence of Tensors, got ", type_name(obj));
  for (auto item : obj) {
    EMBER_CHECK(item.is_none() || py::isinstance<Tensor>(item), TypeError, op, ": ", what,
                " must hold Tensors (or None), but element ", out.size(), " is ", type_name(item));
    out.push_back(item.is_none() ? Tensor() : item.cast<Tensor>());
  }
  return out;
}

// Python objects held by a C++ callback that backward copies and drops with
// the GIL released: the holder takes the GIL to let them go.
struct PyHeld {
  py::object obj;
  explicit PyHeld(py::object o) : obj(std::move(o)) {}
  ~PyHeld() {
    if (!Py_IsInitialized()) { obj.release(); return; }
    py::gil_scoped_acquire gil;
    obj = py::object();
  }
};

// An undefined tensor (no gradient) is None in Python, as in torch.
py::object tensor_or_none(const Tensor& t) { return t.defined() ? py::cast(t) : py::object(py::none()); }

py::list list_of(const std::vector<Tensor>& ts) {
  py::list out;
  for (const auto& t : ts) out.append(tensor_or_none(t));
  return out;
}

// The backward of an ember.autograd.Function: calls back into Python with the
// output gradients and the unpacked saved tensors; gets one gradient (or None)
// per input back.
autograd::Vjp python_vjp(py::function backward) {
  auto held = std::make_shared<PyHeld>(std::move(backward));
  return [held](const autograd::TensorList& grads, const autograd::TensorList& saved,
                const std::vector<bool>& needs_grad) {
    py::gil_scoped_acquire gil;
    py::list needs;
    for (bool b : needs_grad) needs.append(b);
    py::object result = held->obj(list_of(grads), list_of(saved), needs);
    return tensor_list(result, "autograd.Function.backward", "the returned gradients");
  };
}

bool same_edge(const autograd::Edge& a, const autograd::Edge& b) {
  return a.node == b.node && a.input_nr == b.input_nr;
}

// What a computation recorded since sequence number `since` depends on, for
// activation checkpointing: the leaves requiring grad it used (parameters)
// other than `inputs`, and how many edges lead to earlier non-leaf tensors
// that are not among `inputs` (tensors captured from outside: their gradient
// would be lost, so the caller refuses them).
py::tuple graph_inputs(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs, uint64_t since) {
  std::vector<autograd::Edge> input_edges;
  std::unordered_set<const TensorImpl*> input_impls;
  for (const auto& t : inputs) {
    input_edges.push_back(autograd::gradient_edge(t));
    input_impls.insert(t.impl());
  }
  std::vector<Tensor> leaves;
  std::unordered_set<const autograd::Node*> seen;
  std::vector<autograd::Node*> stack;
  int64_t captured = 0;
  auto visit = [&](const autograd::Edge& e) {
    if (!e.valid() || seen.count(e.node.get())) return;
    for (const auto& in : input_edges) {
      if (same_edge(in, e)) return;
    }
    if (auto* acc = dynamic_cast<autograd::AccumulateGrad*>(e.node.get())) {
      seen.insert(acc);
      if (!input_impls.count(acc->leaf().get())) leaves.push_back(Tensor(acc->leaf()));
    } else if (e.node->sequence_nr < since) {
      ++captured;
    } else {
      seen.insert(e.node.get());
      stack.push_back(e.node.get());
    }
  };
  for (const auto& out : outputs) visit(autograd::gradient_edge(out));
  while (!stack.empty()) {
    autograd::Node* n = stack.back();
    stack.pop_back();
    for (const auto& e : n->next_edges) visit(e);
  }
  return py::make_tuple(list_of(leaves), captured);
}
}  // namespace

void init_autograd(py::module_& m) {
  init_anomaly(m);
  init_saved_hooks(m);
  py::class_<autograd::Node, std::shared_ptr<autograd::Node>>(m, "Node")
      .def("name", &autograd::Node::name)
      .def_property_readonly("next_functions", [](const autograd::Node& n) {
        py::list out;
        for (const auto& e : n.next_edges) {
          out.append(py::make_tuple(e.node ? py::cast(e.node) : py::object(py::none()), e.input_nr));
        }
        return py::tuple(out);
      })
      .def("__repr__", [](const autograd::Node& n) { return "<" + n.name() + " object>"; });

  auto& cls = tensor_class();
  cls.def_property("requires_grad", &Tensor::requires_grad,
                   [](Tensor& t, bool v) { t.requires_grad_(v); })
      .def("requires_grad_", [](Tensor& t, bool v) -> Tensor& { return t.requires_grad_(v); },
           py::arg("requires_grad") = true)
      .def_property("grad", [](const Tensor& t) { return tensor_or_none(t.grad()); }, [](Tensor& t, py::object g) {
        EMBER_CHECK(g.is_none() || py::isinstance<Tensor>(g), TypeError,
                    "assigning grad: expected a Tensor or None, got ", type_name(g));
        t.set_grad(g.is_none() ? Tensor() : g.cast<Tensor>());
      })
      .def_property_readonly("grad_fn", [](const Tensor& t) -> py::object {
        auto fn = t.grad_fn();
        return fn ? py::cast(fn) : py::object(py::none());
      })
      .def_property_readonly("is_leaf", &Tensor::is_leaf)
      .def("is_inference", &Tensor::is_inference)
      .def_property_readonly("retains_grad", &Tensor::retains_grad)
      .def("retain_grad", &Tensor::retain_grad)
      .def("detach", &Tensor::detach)
      .def("detach_", [](Tensor& t) -> Tensor& { return t.detach_(); })
      .def_property("data", &Tensor::detach, [](Tensor& t, const Tensor& src) {
        // Swap in src's storage and geometry, keeping autograd identity.
        auto* impl = t.impl();
        EMBER_CHECK(src.defined(), ValueError, "data: cannot assign an undefined tensor");
        impl->storage = src.storage();
        impl->shape = src.shape();
        impl->strides = src.strides();
        impl->offset = src.storage_offset();
        impl->dtype = src.dtype();
        // A leaf's accumulator checks gradients against the geometry it saw.
        if (auto* am = autograd::meta_if(t)) {
          if (auto acc = am->grad_accumulator.lock()) acc->outputs[0] = {src.shape(), src.dtype(), src.device()};
        }
      })
      .def("register_hook", [](const Tensor& t, py::function fn) {
        const int id = t.register_hook([fn](const Tensor& g) -> Tensor {
          py::gil_scoped_acquire gil;
          py::object r = fn(g);
          if (r.is_none()) return Tensor();
          EMBER_CHECK(py::isinstance<Tensor>(r), TypeError, "register_hook: the hook returned ", type_name(r),
                      "; a hook must return a Tensor or None");
          return r.cast<Tensor>();
        });
        return id;
      })
      .def("_remove_hook", [](const Tensor& t, int id) { t.remove_hook(id); })
      .def("_register_post_accumulate_grad_hook", [](py::object self, py::function fn) {
        // The hook gets the Python object itself (a Parameter stays one); held
        // weakly, since the tensor owns the hook.
        auto weak_self = std::make_shared<PyHeld>(py::weakref(self));
        auto hook = std::make_shared<PyHeld>(fn);
        return autograd::register_post_accumulate_grad_hook(
            self.cast<const Tensor&>(), [weak_self, hook](const Tensor& leaf) {
              py::gil_scoped_acquire gil;
              py::object obj = weak_self->obj();
              py::object r = hook->obj(obj.is_none() ? py::cast(leaf) : obj);
              EMBER_CHECK(r.is_none(), Error, "register_post_accumulate_grad_hook: the hook returned ",
                          type_name(r), "; a post accumulate grad hook must return None");
            });
      })
      .def("_remove_post_accumulate_grad_hook",
           [](const Tensor& t, int id) { autograd::remove_post_accumulate_grad_hook(t, id); });

  m.def("_queue_callback", [](py::function fn) {
    auto held = std::make_shared<PyHeld>(fn);
    autograd::queue_callback([held]() {
      py::gil_scoped_acquire gil;
      held->obj();
    });
  });

  m.def("is_grad_enabled", &autograd::grad_enabled);
  m.def("_set_grad_enabled", &autograd::set_grad_enabled);
  m.def("is_inference_mode_enabled", &autograd::inference_mode_enabled);
  py::class_<autograd::InferenceModeGuard>(m, "_InferenceModeGuard").def(py::init<bool>());

  m.def("_backward", [](py::object tensors, py::object grads, bool retain_graph, bool create_graph) {
    auto roots = tensor_list(tensors, "backward", "tensors");
    auto seeds = tensor_list(grads, "backward", "grad_tensors");
    py::gil_scoped_release release;
    autograd::backward(roots, seeds, retain_graph, create_graph);
  });
  // ember.autograd.Function: one node for the outputs, running `backward`.
  // Only the first n_hookable saved tensors go through saved-tensor hooks (-1: all).
  // materialize_grads=False: backward gets None, not zeros, for outputs the pass did not reach.
  m.def("_record_function", [](const std::string& name, py::object inputs, py::object outputs, py::object saved,
                               py::function backward, int64_t n_hookable, bool materialize_grads) {
    const char* op = name.c_str();
    auto outs = tensor_list(outputs, op, "outputs");
    autograd::record(op, tensor_list(inputs, op, "inputs"), outs, tensor_list(saved, op, "saved tensors"),
                     python_vjp(std::move(backward)), n_hookable < 0 ? SIZE_MAX : static_cast<size_t>(n_hookable));
    for (const auto& o : outs) {
      if (auto fn = o.grad_fn()) fn->materialize_grads = materialize_grads;
    }
  }, py::arg("name"), py::arg("inputs"), py::arg("outputs"), py::arg("saved"), py::arg("backward"),
     py::arg("n_hookable") = -1, py::arg("materialize_grads") = true);
  m.def("_check_inplace", [](const Tensor& self, const std::string& op) { autograd::check_inplace(self, op.c_str()); });
  m.def("_rebase_history", [](const Tensor& self, const Tensor& result) { autograd::rebase_history(self, result); });
  m.def("_next_sequence_nr", &autograd::next_sequence_nr);
  m.def("_graph_inputs", [](py::object outputs, py::object inputs, uint64_t since) {
    const char* op = "_graph_inputs";
    return graph_inputs(tensor_list(outputs, op, "outputs"), tensor_list(inputs, op, "inputs"), since);
  });
  m.def("_grad", [](py::object outputs, py::object inputs, py::object grad_outputs, bool retain_graph,
                    bool create_graph, bool allow_unused) {
    auto outs = tensor_list(outputs, "autograd.grad", "outputs");
    auto ins = tensor_list(inputs, "autograd.grad", "inputs");
    auto gs = tensor_list(grad_outputs, "autograd.grad", "grad_outputs");
    std::vector<Tensor> result;
    {
      py::gil_scoped_release release;
      result = autograd::grad(outs, ins, gs, retain_graph, create_graph, allow_unused);
    }
    py::list out;
    for (const auto& g : result) out.append(tensor_or_none(g));
    return out;
  });
}

}  // namespace ember::python
