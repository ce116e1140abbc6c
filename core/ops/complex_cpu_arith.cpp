// + - * / and conj of complex tensors on the CPU as one elementwise loop over
// std::complex<float|double> (the TensorIterator is dtype-agnostic), with
// PyTorch's conjugate-based gradient formulas written with ember ops.
#include <complex>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/loops.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/complex.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/unary.h>
#include <ember/core/tensor_iterator.h>
#include <ember/core/type_promotion.h>

namespace ember::complex_ops {

namespace {

using autograd::TensorList;

// Written out rather than std::complex's operators: those go through
// __mulsc3 / __divsc3 (inf and NaN recovery) and do not vectorize; these are
// the formulas the composed (GPU) path computes.
template <class T>
void arith_loop(CpuArith op, Tensor& out, const Tensor& x, const Tensor& y, T alpha) {
  using C = std::complex<T>;
  TensorIterator it({out, x, y});
  switch (op) {
    case CpuArith::Add:
      cpu::map<C, C, C>(it, [alpha](C p, C q) { return C(p.real() + alpha * q.real(), p.imag() + alpha * q.imag()); });
      return;
    case CpuArith::Mul:
      cpu::map<C, C, C>(it, [](C p, C q) {
        return C(p.real() * q.real() - p.imag() * q.imag(), p.real() * q.imag() + p.imag() * q.real());
      });
      return;
    case CpuArith::Div:
      cpu::map<C, C, C>(it, [](C p, C q) {
        const T d = q.real() * q.real() + q.imag() * q.imag();
        return C((p.real() * q.real() + p.imag() * q.imag()) / d, (p.imag() * q.real() - p.real() * q.imag()) / d);
      });
      return;
  }
}

template <class T>
void conj_loop(Tensor& out, const Tensor& z) {
  using C = std::complex<T>;
  cpu::map<C, C>(TensorIterator({out, z}), [](C p) { return C(p.real(), -p.imag()); });
}

const char* name_of(CpuArith op) { return op == CpuArith::Add ? "add" : op == CpuArith::Mul ? "mul" : "div"; }

autograd::Vjp backward_of(CpuArith op, double alpha) {
  switch (op) {
    case CpuArith::Add:
      return [alpha](const TensorList& g, const TensorList&, const std::vector<bool>&) {
        return TensorList{g[0], alpha == 1.0 ? g[0] : ember::mul(g[0], scalar_tensor(alpha))};
      };
    case CpuArith::Mul:  // d(ab): g conj(b), g conj(a)
      return [](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
        return TensorList{need[0] ? ember::mul(g[0], conj(s[1])) : Tensor(),
                          need[1] ? ember::mul(g[0], conj(s[0])) : Tensor()};
      };
    case CpuArith::Div:  // d(a/b): g / conj(b), -g conj(a / b^2) = -g conj(out / b)
      return [](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
        return TensorList{need[0] ? ember::div(g[0], conj(s[1])) : Tensor(),
                          need[1] ? ember::neg(ember::mul(g[0], conj(ember::div(s[2], s[1])))) : Tensor()};
      };
  }
  throw Error("complex arithmetic: unknown op");
}

}  // namespace

bool cpu_arith_applies(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.device().is_cpu() && b.device().is_cpu() &&
         is_complex(result_type(a, b));
}

Tensor cpu_arith(CpuArith op, const Tensor& a, const Tensor& b, double alpha) {
  const char* name = name_of(op);
  const DType dt = result_type(a, b);
  Tensor out;
  {
    NoGradGuard no_grad;
    const Tensor x = a.to(dt), y = b.to(dt);
    out = empty(broadcast_shapes(a.shape(), b.shape(), name), dt, kCPU);
    if (dt == DType::Complex64) arith_loop<float>(op, out, x, y, static_cast<float>(alpha));
    else arith_loop<double>(op, out, x, y, alpha);
  }
  if (autograd::any_requires_grad({a, b})) {
    const char* node = op == CpuArith::Add ? "AddBackward0" : op == CpuArith::Mul ? "MulBackward0" : "DivBackward0";
    const TensorList saved = op == CpuArith::Add ? TensorList{} : TensorList{a, b, out};
    autograd::record(node, {a, b}, {out}, saved, backward_of(op, alpha));
  }
  return out;
}

Tensor cpu_conj(const Tensor& z) {
  Tensor out = empty(z.shape(), z.dtype(), kCPU);
  if (z.dtype() == DType::Complex64) conj_loop<float>(out, z);
  else conj_loop<double>(out, z);
  if (autograd::any_requires_grad({z})) {
    autograd::record("ConjBackward0", {z}, {out}, {}, [](const TensorList& g, const TensorList&, const std::vector<bool>&) {
      return TensorList{conj(g[0])};
    });
  }
  return out;
}

}  // namespace ember::complex_ops
