// ember.einsum: the equation form einsum("ij,jk->ik", a, b) (operands also as
// one list) and the sublist form einsum(a, [0, 1], b, [1, 2], [0, 2]).
#include "bind.h"

namespace ember::python {

namespace {

Tensor operand(py::handle obj, size_t i) {
  EMBER_CHECK(py::isinstance<Tensor>(obj), TypeError, "einsum: expected a Tensor as operand ", i, ", but got ",
              type_name(obj));
  return obj.cast<Tensor>();
}

// A sublist ([0, 1, Ellipsis]) as equation letters: 0-25 are A-Z, 26-51 a-z.
std::string sublist_term(py::handle sub) {
  EMBER_CHECK(py::isinstance<py::sequence>(sub) && !py::isinstance<py::str>(sub), TypeError,
              "einsum: expected a list of subscripts after each operand, but got ", type_name(sub));
  std::string s;
  for (py::handle h : sub) {
    if (h.is(py::ellipsis())) {
      s += "...";
      continue;
    }
    std::optional<int64_t> sub_v;
    if (PyIndex_Check(h.ptr())) {
      try {
        sub_v = h.cast<int64_t>();
      } catch (const py::cast_error&) {  // a tensor that is not one integer
      }
    }
    EMBER_CHECK(sub_v, TypeError, "einsum: subscripts must be ints or Ellipsis, but got ", type_name(h));
    const int64_t v = *sub_v;
    EMBER_CHECK(v >= 0 && v < 52, ValueError, "einsum: subscript ", v,
                " in the subscript list is not within the valid range [0, 52)");
    s += static_cast<char>(v < 26 ? 'A' + v : 'a' + v - 26);
  }
  return s;
}

Tensor einsum_any(const py::args& args) {
  EMBER_CHECK(args.size() >= 1, TypeError, "einsum: must specify the equation string and at least one operand, "
              "or at least one operand and its subscripts list");
  std::vector<Tensor> operands;
  if (py::isinstance<py::str>(args[0])) {
    const std::string equation = args[0].cast<std::string>();
    // einsum(eq, [a, b]) takes the operands as one list, as PyTorch does.
    if (args.size() == 2 && !py::isinstance<Tensor>(args[1]) && py::isinstance<py::sequence>(args[1])) {
      for (py::handle h : args[1].cast<py::sequence>()) operands.push_back(operand(h, operands.size()));
    } else {
      for (size_t i = 1; i < args.size(); ++i) operands.push_back(operand(args[i], i - 1));
    }
    return einsum(equation, operands);
  }
  // Sublist form: operand, sublist, operand, sublist, ..., [output sublist].
  std::string lhs;
  size_t i = 0;
  for (; i + 1 < args.size(); i += 2) {
    operands.push_back(operand(args[i], operands.size()));
    lhs += (i ? "," : "") + sublist_term(args[i + 1]);
  }
  if (i < args.size()) lhs += "->" + sublist_term(args[i]);
  return einsum(lhs, operands);
}

}  // namespace

void init_einsum(py::module_& m) {
  m.def("einsum", &einsum_any,
        "einsum(equation, *operands): Einstein summation; also einsum(op0, sublist0, op1, sublist1, ..., [out])");
}

}  // namespace ember::python
