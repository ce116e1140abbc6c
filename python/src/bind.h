// Shared pieces of the Python bindings: argument conversion between Python
// objects and ember types. One init_<area>() per file; module.cpp calls them.
#pragma once
#include <optional>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <ember/ember.h>

namespace py = pybind11;

// Undefined tensors (no .grad yet, unused inputs of autograd.grad) reach
// Python as None, as in torch. Every binding file includes this header, so
// all of them see the same caster.
namespace pybind11::detail {
template <>
struct type_caster<ember::Tensor> : type_caster_base<ember::Tensor> {
  template <class T>
  static handle cast(T&& t, return_value_policy policy, handle parent) {
    if (!t.defined()) return none().release();
    return type_caster_base<ember::Tensor>::cast(std::forward<T>(t), policy, parent);
  }
};
}  // namespace pybind11::detail

namespace ember::python {

// The Python type name of obj, for error messages.
inline std::string type_name(py::handle obj) { return py::str(py::type::handle_of(obj).attr("__name__")); }

// Argument `arg` of `op` as a T (an int, bool, float or str): pybind's cast,
// with a TypeError "op: arg must be <what>, got <type>" instead of its
// "Unable to cast ... to C++ type '?'".
template <class T>
T cast_arg(py::handle obj, const char* op, const char* arg, const char* what) {
  try {
    return obj.cast<T>();
  } catch (const py::cast_error&) {
    throw TypeError(str(op, ": ", arg, " must be ", what, ", got ", type_name(obj)));
  }
}

// A dtype as Python sees it: ember.float32 etc.
struct PyDType {
  DType value;
};

// ember dtype object for `t`.
py::object dtype_object(DType t);
// Accepts ember dtypes, numpy dtypes and Python types (float, int, bool).
DType to_dtype(py::handle obj);
std::optional<DType> to_optional_dtype(py::handle obj);
// Accepts "cpu", "cuda:0", ember.device and None (-> default).
Device to_device(py::handle obj, Device dflt = kCPU);

// A Tensor, or a Python number turned into a wrapped-number tensor.
Tensor to_tensor_arg(py::handle obj, const char* op);
// None (an undefined Tensor) or a Tensor; a TypeError naming op and arg otherwise.
Tensor optional_tensor_arg(py::handle obj, const char* op, const char* arg);
// A Python/numpy complex number or a complex tensor: the fill values the real
// Scalar path cannot carry. complex_fill_value gives it as a tensor to copy_
// from, or raises TypeError naming `op` when `target` is not complex.
bool is_complex_value(py::handle obj);
Tensor complex_fill_value(py::handle obj, DType target, const char* op);
// A Python number as a Scalar; throws TypeError naming `op` otherwise.
Scalar to_scalar(py::handle obj, const char* op);
// An int, or a sequence of ints (also varargs already packed in a tuple).
std::vector<int64_t> to_int_list(py::handle obj, const char* op);
// Shape from f(2, 3), f((2, 3)) or f([2, 3]).
Shape shape_from_args(const py::args& args, const char* op);
// dims: None -> {}, int -> {d}, sequence -> list.
Dims to_dims(py::handle obj, const char* op);

// Builds a tensor from nested lists / numbers / numpy arrays (a copy).
Tensor tensor_from_data(py::handle data, std::optional<DType> dtype, Device device);

using TensorClass = py::class_<Tensor>;
TensorClass& tensor_class();

void init_dtype(py::module_& m);
void init_tensor(py::module_& m);
void init_autograd(py::module_& m);
void init_factory(py::module_& m);
void init_copy(py::module_& m);
void init_unary(py::module_& m);
void init_binary(py::module_& m);
void init_float_checks(py::module_& m);  // isnan, isinf, isfinite, isclose, allclose
void init_reduce(py::module_& m);
void init_sort(py::module_& m);  // sort, argsort, topk, msort
void init_softmax(py::module_& m);
void init_matmul(py::module_& m);
void init_linalg(py::module_& m);  // ember._C._linalg, inverse, det, slogdet, ...
void init_shape(py::module_& m);
void init_index(py::module_& m);
void init_random(py::module_& m);
void init_print(py::module_& m);
void init_conv(py::module_& m);
void init_pool(py::module_& m);
void init_norm(py::module_& m);
void init_loss(py::module_& m);
void init_nn_misc(py::module_& m);  // embedding, dropout
void init_attention(py::module_& m);  // scaled_dot_product_attention, the sdp switches
void init_einsum(py::module_& m);     // einsum
void init_composites(py::module_& m);  // ops composed of others: movedim, tile, addcmul, cdist, ...
void init_optim(py::module_& m);
void init_autocast(py::module_& m);  // autocast state, GradScaler ops
void init_cuda(py::module_& m);
void init_distributed_store(py::module_& m);    // TCPStore, PrefixStore
void init_distributed_pg(py::module_& m);       // ProcessGroup, Work, collectives
void init_distributed_reducer(py::module_& m);  // DDP's gradient reducer

// ember._C._nn: the kernels behind ember.nn.functional (as torch._C._nn),
// bound there with torch.nn.functional's names and signatures.
inline py::module_ nn_module(py::module_& m) { return m.attr("_nn").cast<py::module_>(); }
// ember._C._distributed: what ember.distributed and DDP are built on.
inline py::module_ distributed_module(py::module_& m) { return m.attr("_distributed").cast<py::module_>(); }

}  // namespace ember::python
