// ember._C: the extension module. Each area binds itself in its own file.
#include "bind.h"

namespace ember::python {

void init_determinism(py::module_& m);  // python/src/determinism.cpp
void init_strided(py::module_& m);       // python/src/strided.cpp
void init_complex(py::module_& m);       // python/src/complex.cpp
void init_fft(py::module_& m);           // python/src/fft.cpp

namespace {
PyObject* out_of_memory_error = nullptr;  // ember.OutOfMemoryError, a RuntimeError
}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "ember's C++ core";
  out_of_memory_error = py::exception<OutOfMemoryError>(m, "OutOfMemoryError", PyExc_RuntimeError).ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(out_of_memory_error, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  m.def_submodule("_nn", "kernels behind ember.nn.functional");
  m.def_submodule("_distributed", "stores, process groups and the DDP reducer behind ember.distributed");
  init_dtype(m);
  init_tensor(m);
  init_autograd(m);
  init_factory(m);
  init_copy(m);
  init_unary(m);
  init_binary(m);
  init_float_checks(m);
  init_reduce(m);
  init_sort(m);
  init_softmax(m);
  init_matmul(m);
  init_linalg(m);
  init_shape(m);
  init_index(m);
  init_random(m);
  init_print(m);
  init_conv(m);
  init_pool(m);
  init_norm(m);
  init_loss(m);
  init_nn_misc(m);
  init_attention(m);
  init_einsum(m);
  init_composites(m);
  init_optim(m);
  init_autocast(m);
  init_determinism(m);
  init_strided(m);
  init_complex(m);
  init_fft(m);
  init_cuda(m);
  init_distributed_store(m);
  init_distributed_pg(m);
  init_distributed_reducer(m);
}

}  // namespace ember::python
