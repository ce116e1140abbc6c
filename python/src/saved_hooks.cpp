// Saved-tensor hooks from Python (ember.autograd.graph.saved_tensors_hooks):
// the C++ stack (autograd/saved_hooks.h) holds callables that call back into
// the Python pack and unpack hooks under the GIL.
#include <ember/autograd/saved_hooks.h>

#include "bind.h"

namespace ember::python {

namespace {
// Python objects the C++ side holds and may drop on a thread without the GIL
// (backward frees packed values with the GIL released).
void drop_with_gil(py::object* obj) {
  if (!Py_IsInitialized()) {
    obj->release();  // the interpreter is gone: leak the reference rather than touch it
    delete obj;
    return;
  }
  py::gil_scoped_acquire gil;
  delete obj;
}

std::shared_ptr<py::object> held(py::object obj) {
  return std::shared_ptr<py::object>(new py::object(std::move(obj)), drop_with_gil);
}

std::shared_ptr<const autograd::SavedTensorHooks> python_hooks(py::object pack_hook, py::object unpack_hook) {
  EMBER_CHECK(PyCallable_Check(pack_hook.ptr()) && PyCallable_Check(unpack_hook.ptr()), TypeError,
              "saved_tensors_hooks: pack_hook and unpack_hook must be callable, got ", type_name(pack_hook), " and ",
              type_name(unpack_hook));
  auto hooks = std::make_shared<autograd::SavedTensorHooks>();
  hooks->pack = [pack = held(std::move(pack_hook))](const Tensor& t) -> autograd::PackedValue {
    py::gil_scoped_acquire gil;
    return held((*pack)(t));
  };
  hooks->unpack = [unpack = held(std::move(unpack_hook))](const autograd::PackedValue& v) -> Tensor {
    py::gil_scoped_acquire gil;
    py::object r = (*unpack)(*static_cast<const py::object*>(v.get()));
    EMBER_CHECK(py::isinstance<Tensor>(r), TypeError,
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of type ", type_name(r));
    return r.cast<Tensor>();
  };
  return hooks;
}
}  // namespace

void init_saved_hooks(py::module_& m) {
  m.def("_push_saved_tensors_default_hooks", [](py::object pack_hook, py::object unpack_hook) {
    autograd::push_saved_tensor_hooks(python_hooks(std::move(pack_hook), std::move(unpack_hook)));
  });
  m.def("_pop_saved_tensors_default_hooks", &autograd::pop_saved_tensor_hooks);
  // A scope without hooks, allowed even while hooks are disabled (checkpoint).
  m.def("_push_no_saved_tensors_hooks", [] { autograd::push_saved_tensor_hooks(nullptr); });
  m.def("_saved_tensors_hooks_disable", &autograd::disable_saved_tensor_hooks);
  m.def("_saved_tensors_hooks_enable", &autograd::enable_saved_tensor_hooks);
  m.def("_saved_tensors_hooks_get_disabled_error_message", &autograd::saved_tensor_hooks_disabled_message);
  m.def("_saved_tensors_hooks_active", [] { return autograd::current_saved_tensor_hooks() != nullptr; });
}

}  // namespace ember::python
