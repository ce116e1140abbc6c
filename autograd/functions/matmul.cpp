#include <ember/autograd/functions/matmul.h>

#include <ember/core/ops/binary.h>
#include <ember/core/ops/matmul.h>
#include <ember/core/ops/shape.h>

namespace ember::autograd::functions {

namespace {
Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }

bool column_major(const Tensor& t) {
  return t.dim() == 2 && t.size(0) > 1 && t.size(1) > 1 && t.stride(0) == 1 && t.stride(1) == t.size(0);
}

// a @ b for the gradient of `input`: computed as (b^T a^T)^T when input is a
// transposed matrix (a Linear weight's W.t()), so the gradient has input's
// layout and reaches W contiguous through the transpose's backward, instead
// of as a strided view that every accumulation into W.grad walks (torch
// does the same).
Tensor mm_like(const Tensor& a, const Tensor& b, const Tensor& input) {
  return column_major(input) ? mT(mm(mT(b), mT(a))) : mm(a, b);
}
}  // namespace

Vjp matmul_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    const Tensor& a = s[0];
    const Tensor& b = s[1];
    const bool a_vec = a.dim() == 1, b_vec = b.dim() == 1;
    // Give vectors back their matrix dims: a as a row, b as a column, and the
    // gradient the [..., M, N] shape of the full product.
    const Tensor A = a_vec ? unsqueeze(a, 0) : a;
    const Tensor B = b_vec ? unsqueeze(b, -1) : b;
    Tensor G = g[0];
    if (b_vec) G = unsqueeze(G, -1);
    if (a_vec) G = unsqueeze(G, -2);
    // dA = G B^T and dB = A^T G; the engine sums broadcast batch dims away.
    Tensor ga, gb;
    if (need[0]) {
      ga = A.dim() == 2 && B.dim() == 2 ? mm_like(G, mT(B), A) : matmul(G, mT(B));
      if (a_vec) ga = squeeze(ga, -2);
    }
    if (need[1]) {
      if (A.dim() == 2 && B.dim() == 2) {
        gb = mm_like(mT(A), G, B);
      } else if (B.dim() == 2 && A.dim() > 2) {
        // One matrix shared by the batch (a Linear layer's weight): fold the
        // batch into the inner dim, one gemm instead of a gemm per entry and a sum.
        const int64_t K = A.size(A.dim() - 1), N = G.size(G.dim() - 1);
        gb = mm_like(mT(reshape(A, {-1, K})), reshape(G, {-1, N}), B);
      } else {
        gb = matmul(mT(A), G);
      }
      if (b_vec) gb = squeeze(gb, -1);
    }
    return TensorList{ga, gb};
  };
}

Vjp addmm_backward(const Scalar& beta, const Scalar& alpha) {
  return [beta, alpha](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    auto scaled = [](const Tensor& t, const Scalar& k) { return k.to_double() == 1.0 ? t : mul(t, scalar_tensor(k)); };
    return TensorList{need[0] ? scaled(g[0], beta) : Tensor(),
                      need[1] ? scaled(mm_like(g[0], mT(s[1]), s[0]), alpha) : Tensor(),
                      need[2] ? scaled(mm_like(mT(s[0]), g[0], s[1]), alpha) : Tensor()};
  };
}

}  // namespace ember::autograd::functions
