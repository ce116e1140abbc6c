// Complex tensors (complex64, complex128). A complex tensor stores (real,
// imaginary) pairs; view_as_real shows them as a float tensor with a last
// dimension of 2. The ops that take complex inputs are written with real ops on
// those parts, so they run on every device, and autograd differentiates them
// with PyTorch's convention (the gradient of a real loss L with respect to
// z = x + iy is dL/dx + i dL/dy).
#pragma once
#include <ember/core/tensor.h>

namespace ember {

// Views sharing memory with their input.
Tensor view_as_real(const Tensor& z);     // complex [..] -> float [.., 2]
Tensor view_as_complex(const Tensor& x);  // float [.., 2], last stride 1 -> complex [..]
Tensor real(const Tensor& z);             // a view; a real tensor is returned as is
Tensor imag(const Tensor& z);             // a view; complex tensors only

Tensor complex(const Tensor& real, const Tensor& imag);  // broadcast, float32 or float64
Tensor polar(const Tensor& abs, const Tensor& angle);    // abs * (cos(angle) + i sin(angle))
Tensor conj(const Tensor& z);                            // a copy for complex z; real z as is
Tensor angle(const Tensor& z);                           // atan2(imag, real); 0 or pi for reals

namespace complex_ops {
// The complex forms of ops whose front-ends send complex inputs here.
bool any_complex(const std::vector<Tensor>& ts);
// The two-operand form the binary front-ends call on every op: no vector, no refcounting.
inline bool any_complex(const Tensor& a, const Tensor& b) {
  return (a.defined() && is_complex(a.dtype())) || (b.defined() && is_complex(b.dtype()));
}
Tensor add(const Tensor& a, const Tensor& b, double alpha);
Tensor sub(const Tensor& a, const Tensor& b, double alpha);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& z);
Tensor abs(const Tensor& z);
Tensor sgn(const Tensor& z);  // z / |z|, 0 at 0
Tensor exp(const Tensor& z);
Tensor log(const Tensor& z);
Tensor sqrt(const Tensor& z);
Tensor reciprocal(const Tensor& z);
Tensor square(const Tensor& z);
Tensor sin(const Tensor& z);
Tensor cos(const Tensor& z);
Tensor tan(const Tensor& z);
Tensor sinh(const Tensor& z);
Tensor cosh(const Tensor& z);
Tensor tanh(const Tensor& z);
Tensor sigmoid(const Tensor& z);
Tensor pow(const Tensor& z, double exponent);
Tensor pow(const Tensor& z, const Tensor& exponent);
Tensor sum(const Tensor& z, const std::vector<int64_t>& dims, bool keepdim);
Tensor mean(const Tensor& z, const std::vector<int64_t>& dims, bool keepdim);
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);
// Element copies between tensors of which at least one is complex, with the
// casts PyTorch does (a real source gets a zero imaginary part; a real
// destination takes the real part).
void copy(Tensor& dst, const Tensor& src, bool non_blocking);
void fill(Tensor& z, double value);

// The CPU's single-loop form of + - * / (a + alpha * b for Add), used when
// cpu_arith_applies: both operands on the CPU, the result complex64/complex128.
enum class CpuArith { Add, Mul, Div };
bool cpu_arith_applies(const Tensor& a, const Tensor& b);
Tensor cpu_arith(CpuArith op, const Tensor& a, const Tensor& b, double alpha);
Tensor cpu_conj(const Tensor& z);
}  // namespace complex_ops

}  // namespace ember
