// CPU kernels for reductions. The front-end lays the input out as a
// contiguous [outer, reduced, inner] block; kernels reduce the middle axis
// and write `out` contiguous with outer*inner elements.
#pragma once
#include <ember/core/tensor.h>

namespace ember {

enum class ReduceOp { Sum, Mean, Prod, Max, Min, All, Any };

// Which coefficient grad_coeff computes for a backward formula.
enum class GradCoeff {
  EqMask,    // a == b ? 1 : 0 (ties of a max/min with its broadcast result)
  AbsEqMask, // |a| == b ? 1 : 0 (ties of an inf-norm)
  Sign,      // sign(a)
  NormPow,   // sign(a) * |a|^(p-1) / b^(p-1), 0 where b == 0 (b: the norm, broadcast)
};

namespace cpu {

// Sum/Mean/Prod/Max/Min: out has x's dtype. All/Any: out is bool, x any dtype.
void reduce(ReduceOp op, Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner);

// ---- core/cpu/reduce_stats.cpp (float32/float64 inputs)
// Variance with Bessel-style `correction`; standard deviation when take_sqrt.
void var(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner, double correction,
         bool take_sqrt);
// Vector p-norm: p = 0 counts non-zeros, +-inf is max/min of |x|.
void norm(Tensor& out, const Tensor& x, double p, int64_t outer, int64_t reduced, int64_t inner);
// log(sum(exp(x))) computed as max + log(sum(exp(x - max))).
void logsumexp(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner);

// ---- core/cpu/reduce_index.cpp
// Index (int64) of the first maximum (or minimum); a NaN counts as the extreme.
// `values` may be undefined when only the index is wanted. reduced > 0.
void arg_reduce(bool is_max, Tensor& values, Tensor& indices, const Tensor& x, int64_t outer, int64_t reduced,
                int64_t inner);
// Inclusive running sum along the middle axis; out has x's shape and dtype.
void cumsum(Tensor& out, const Tensor& x, int64_t outer, int64_t length, int64_t inner);
// For backward of prod: out[o, r, i] = product of x[o, r', i] over r' != r.
void prod_others(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner);
// Elementwise coefficient for backward formulas; a and b broadcast to out (floating).
void grad_coeff(GradCoeff kind, Tensor& out, const Tensor& a, const Tensor& b, double p);

}  // namespace cpu
}  // namespace ember
