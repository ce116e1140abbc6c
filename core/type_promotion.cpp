#include <ember/core/type_promotion.h>

#include <ember/core/error.h>

namespace ember {

namespace {
int category(DType t) { return t == DType::Bool ? 0 : is_complex(t) ? 3 : is_floating(t) ? 2 : 1; }
}  // namespace

DType result_type(const std::vector<Tensor>& operands) {
  // Promote within each tier, then let a lower tier win only by category.
  bool have[3] = {false, false, false};
  DType tier[3] = {DType::Bool, DType::Bool, DType::Bool};
  for (const auto& t : operands) {
    if (!t.defined()) continue;
    const int k = t.impl()->wrapped_number ? 2 : t.dim() == 0 ? 1 : 0;
    DType d = t.dtype();
    if (k == 2) {  // a Python number: its default type
      d = d == DType::Bool          ? DType::Bool
          : is_complex(d)           ? complex_dtype_for(default_float_dtype())
          : is_floating(d)          ? default_float_dtype()
                                    : DType::Int64;
    }
    tier[k] = have[k] ? promote_types(tier[k], d) : d;
    have[k] = true;
  }
  DType result = DType::Bool;
  bool any = false;
  for (int k = 0; k < 3; ++k) {
    if (!have[k]) continue;
    if (!any) {
      result = tier[k];
      any = true;
    } else if (category(tier[k]) > category(result)) {
      // A complex scalar with float tensors takes their width, as in PyTorch:
      // float64 * 1j is complex128, float32 * (0-d complex128) complex64.
      result = is_complex(tier[k]) && is_floating(result) ? complex_dtype_for(result) : tier[k];
    }
  }
  return result;
}

Device common_device(const char* op, const std::vector<Tensor>& operands) {
  // PyTorch's rule: a 0-d CPU tensor (a number) goes with tensors on any
  // device; every other operand decides the device and must agree with the rest.
  const Tensor* lead = nullptr;
  for (const auto& t : operands) {
    if (!t.defined() || (t.device().is_cpu() && t.dim() == 0)) continue;
    if (!lead) {
      lead = &t;
      continue;
    }
    if (t.device() != lead->device()) {
      std::string where;
      for (size_t i = 0; i < operands.size(); ++i) {
        if (!operands[i].defined()) continue;
        where += str(where.empty() ? "" : ", ", "input ", i, " is on ", operands[i].device().str());
      }
      throw Error(str(op, ": expected all tensors to be on the same device, but ", where,
                      ". Move them with .to(device) first."));
    }
  }
  return lead ? lead->device() : kCPU;
}

}  // namespace ember
