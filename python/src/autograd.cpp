// Autograd from Python: backward, grad, grad modes, hooks, grad_fn.
#include <ember/autograd/engine.h>
#include <ember/autograd/meta.h>

#include "bind.h"

namespace ember::python {

namespace {
std::vector<Tensor> tensor_list(py::handle obj) {
  std::vector<Tensor> out;
  if (obj.is_none()) return out;
  if (py::isinstance<Tensor>(obj)) return {obj.cast<Tensor>()};
  for (auto item : obj) out.push_back(item.is_none() ? Tensor() : item.cast<Tensor>());
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
}  // namespace

void init_autograd(py::module_& m) {
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
      .def("requires_grad_", [](Tensor& t, bool v) { return t.requires_grad_(v); }, py::arg("requires_grad") = true)
      .def_property("grad", [](const Tensor& t) { return tensor_or_none(t.grad()); }, [](Tensor& t, py::object g) {
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
      .def("detach_", [](Tensor& t) { return t.detach_(); })
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
    auto roots = tensor_list(tensors);
    auto seeds = tensor_list(grads);
    py::gil_scoped_release release;
    autograd::backward(roots, seeds, retain_graph, create_graph);
  });
  m.def("_grad", [](py::object outputs, py::object inputs, py::object grad_outputs, bool retain_graph,
                    bool create_graph, bool allow_unused) {
    auto outs = tensor_list(outputs);
    auto ins = tensor_list(inputs);
    auto gs = tensor_list(grad_outputs);
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
