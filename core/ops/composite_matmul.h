// Matmul-family composites, built of mm/bmm/matmul, views and sums (every
// device, differentiable): baddbmm, addbmm, tensordot, kron, cdist.
#pragma once
#include <string>

#include <ember/core/tensor.h>

namespace ember {

// beta * input + alpha * bmm(batch1, batch2); input broadcasts to [B, N, P];
// with beta = 0 input is ignored (its NaNs too), as PyTorch.
Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
               const Scalar& alpha = 1);
// beta * input + alpha * sum_b batch1[b] @ batch2[b] (one mm over the joined batch); input broadcasts to [N, P].
Tensor addbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
              const Scalar& alpha = 1);
// In place: self = beta * self + alpha * (...); the product's shape must be self's.
Tensor& baddbmm_(Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
                 const Scalar& alpha = 1);
Tensor& addbmm_(Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
                const Scalar& alpha = 1);
// beta * input + alpha * mv(mat, vec), and in place; input broadcasts to [N].
Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, const Scalar& beta = 1,
             const Scalar& alpha = 1);
Tensor& addmv_(Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta = 1, const Scalar& alpha = 1);
// beta * input + alpha * outer(vec1, vec2), and in place; input broadcasts to [N, M].
Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1,
            const Scalar& alpha = 1);
Tensor& addr_(Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1, const Scalar& alpha = 1);
// Sums over the last dims of a and b (0-d: a product): [a..., b...] without the last dims.
Tensor inner(const Tensor& a, const Tensor& b);
// The dot product of two 1-D tensors (real dtypes: nothing to conjugate).
Tensor vdot(const Tensor& a, const Tensor& b);
// Contracts dims_a of a with dims_b of b (pairwise) as one mm; free dims of a, then of b.
Tensor tensordot(const Tensor& a, const Tensor& b, const Dims& dims_a, const Dims& dims_b);
// The last `dims` dims of a with the first `dims` of b.
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims = 2);
// The Kronecker product (shapes padded with leading 1s to the same ndim).
Tensor kron(const Tensor& a, const Tensor& b);
// p-norm distances between the rows of x1 [..., P, M] and x2 [..., R, M] (batch dims broadcast):
// [..., P, R]. p = 2 runs as |x|^2 - 2 x.y + |y|^2 through matmul when compute_mode allows it
// ("use_mm_for_euclid_dist_if_necessary": P or R above 25, "use_mm_for_euclid_dist",
// "donot_use_mm_for_euclid_dist"); otherwise exactly, through the differences.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0,
             const std::string& compute_mode = "use_mm_for_euclid_dist_if_necessary");

}  // namespace ember
