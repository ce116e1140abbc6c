// Tensor::str(): PyTorch-style printing.
#include <cmath>
#include <cstdio>

#include <ember/autograd/node.h>
#include <ember/core/tensor.h>

namespace ember {

namespace {

std::string format_value(double v, bool floating) {
  if (!floating) return std::to_string(static_cast<int64_t>(v));
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

void print_rec(std::string& out, const Tensor& t, int64_t dim, int64_t offset, int indent) {
  if (dim == t.dim()) {
    const double v = dispatch(t.dtype(), "print", [&](auto tag) -> double {
      using T = typename decltype(tag)::type;
      const T x = reinterpret_cast<const T*>(t.storage().data())[offset];
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return static_cast<float>(x);
      else return static_cast<double>(x);
    });
    out += t.dtype() == DType::Bool ? (v != 0 ? "True" : "False") : format_value(v, t.is_floating_point());
    return;
  }
  out += "[";
  for (int64_t i = 0; i < t.shape()[dim]; ++i) {
    if (i) {
      out += ",";
      out += dim + 1 == t.dim() ? " " : "\n" + std::string(indent + 1, ' ');
    }
    print_rec(out, t, dim + 1, offset + i * t.strides()[dim], indent + 1);
  }
  out += "]";
}

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  Tensor c = device().is_cpu() ? *this : cpu();
  std::string out = "tensor(";
  print_rec(out, c, 0, c.storage_offset(), 7);
  if (dtype() != DType::Float32 && dtype() != DType::Int64 && dtype() != DType::Bool) {
    out += std::string(", dtype=ember.") + dtype_name(dtype());
  }
  if (requires_grad()) out += grad_fn() ? ", grad_fn=<" + grad_fn()->name() + ">" : std::string(", requires_grad=True");
  return out + ")";
}

}  // namespace ember
