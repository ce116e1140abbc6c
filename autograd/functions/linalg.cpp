#include <ember/autograd/functions/linalg.h>

#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/linalg.h>
#include <ember/core/ops/matmul.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/shape.h>
#include <ember/core/ops/unary.h>

namespace ember::autograd::functions {

namespace {

Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }

Tensor eye_like(int64_t n, const Tensor& like) { return eye(n, n, like.dtype(), like.device()); }

// diag(v) for a batch of vectors [..., n] -> [..., n, n] (differentiable).
Tensor diag_embed(const Tensor& v) { return mul(unsqueeze(v, -1), eye_like(v.size(v.dim() - 1), v)); }

// The diagonals of [..., n, n] -> [..., n] (differentiable).
Tensor diagonal(const Tensor& m) { return sum(mul(m, eye_like(m.size(m.dim() - 1), m)), {-1}); }

Tensor scaled(const Tensor& t, double k) { return mul(t, scalar_tensor(k)); }

// [..., n] -> [..., 1, 1], to scale whole matrices.
Tensor per_matrix(const Tensor& v) { return unsqueeze(unsqueeze(v, -1), -1); }

// F[i, j] = 1 / (v[j] - v[i]) off the diagonal, 0 on it; v holds distinct
// values (eigenvalues, squared singular values). The identity added to the
// differences keeps the diagonal finite, so no inf * 0 enters the graph.
Tensor inverse_gaps(const Tensor& v) {
  const Tensor I = eye_like(v.size(v.dim() - 1), v);
  const Tensor gaps = sub(unsqueeze(v, -2), unsqueeze(v, -1));
  return mul(reciprocal(add(gaps, I)), sub(scalar_tensor(1.0), I));
}

// B R^-T for upper triangular R: (R^-1 B^T)^T.
Tensor times_inverse_transpose(const Tensor& B, const Tensor& R) {
  return mT(linalg::solve_triangular(R, mT(B), /*upper=*/true));
}

}  // namespace

// X = A^-1: dX = -X dA X, so gA = -X^T g X^T.
Vjp inv_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor Xt = mT(s[0]);
    return TensorList{neg(matmul(matmul(Xt, g[0]), Xt))};
  };
}

// X = A^-1 B: gB = A^-T g, gA = -gB X^T.
Vjp solve_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    const Tensor gB = linalg::solve(mT(s[0]), g[0]);
    return TensorList{need[0] ? neg(matmul(gB, mT(s[1]))) : Tensor(), need[1] ? gB : Tensor()};
  };
}

// As solve's, with A^T's triangle for gB, and gA kept to the triangle A is
// read from (strictly, when its diagonal is taken as ones).
Vjp solve_triangular_backward(bool upper, bool unitriangular) {
  return [upper, unitriangular](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    const Tensor gB = linalg::solve_triangular(mT(s[0]), g[0], !upper, true, unitriangular);
    Tensor gA;
    if (need[0]) {
      const Tensor full = neg(matmul(gB, mT(s[1])));
      const int64_t offset = unitriangular ? 1 : 0;
      gA = upper ? triu(full, offset) : tril(full, -offset);
    }
    return TensorList{gA, need[1] ? gB : Tensor()};
  };
}

// d det = det tr(A^-1 dA): gA = g det A^-T.
Vjp det_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    // inv_ex: no error for a singular matrix, whose gradient is zeros here, as PyTorch's.
    const Tensor inverse = std::get<0>(linalg::inv_ex(s[0]));
    const Tensor grad = mul(per_matrix(mul(g[0], s[1])), mT(inverse));
    return TensorList{where(eq(per_matrix(s[1]), scalar_tensor(0.0)), zeros_like(grad), grad)};
  };
}

// d log|det| = tr(A^-1 dA); the sign is piecewise constant.
Vjp slogdet_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    // A singular matrix's inverse from inv_ex is infinite: infinite gradients, as PyTorch's.
    return TensorList{mul(per_matrix(g[1]), mT(std::get<0>(linalg::inv_ex(s[0]))))};
  };
}

namespace {
// gA for A = P L U (square) from the gradients of L (unit lower) and U (upper):
// with X = L^-1 P^T dA U^-1, dL = L tril(X, -1) and dU = triu(X) U, so
//   gA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T.
Tensor lu_grad(const Tensor& L, const Tensor& U, const Tensor& P, const Tensor& gL, const Tensor& gU) {
  const Tensor M = add(tril(matmul(mT(L), gL), -1), triu(matmul(gU, mT(U))));
  const Tensor left = linalg::solve_triangular(mT(L), M, /*upper=*/true, /*left=*/true, /*unitriangular=*/true);
  return matmul(P, linalg::solve_triangular(mT(U), left, /*upper=*/false, /*left=*/false));
}

void check_square_lu(const Tensor& L, const Tensor& U, const char* op) {
  EMBER_CHECK(L.size(L.dim() - 2) == U.size(U.dim() - 1), NotImplementedError, op,
              ": the derivative is implemented for square matrices only, got ", L.size(L.dim() - 2), " x ",
              U.size(U.dim() - 1));
}
}  // namespace

Vjp lu_backward(bool compact) {
  return [compact](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor &L = s[0], &U = s[1], &P = s[2];
    check_square_lu(L, U, compact ? "linalg.lu_factor" : "linalg.lu");
    // The compact LU holds L's strict lower part and U: split its gradient.
    const Tensor gL = compact ? tril(g[0], -1) : g[0];
    const Tensor gU = compact ? triu(g[0]) : g[1];
    return TensorList{lu_grad(L, U, P, gL, gU)};
  };
}

// X = A^-1 B (A^-T B when adjoint), A = P L U given as (LU, pivots):
// gB = A^-T g (A^-1 g), gA = -gB X^T (-X gB^T), and LU's gradient is gA
// pulled back through A = P L U: gL = tril(P^T gA U^T, -1), gU = triu(L^T P^T gA).
Vjp lu_solve_backward(bool adjoint) {
  return [adjoint](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    const Tensor &LU = s[0], &pivots = s[1], &X = s[2];
    const Tensor gB = linalg::lu_solve(LU, pivots, g[0], /*left=*/true, !adjoint);
    Tensor gLU;
    if (need[0]) {
      const Tensor &L = s[3], &U = s[4], &P = s[5];
      const Tensor gA = neg(adjoint ? matmul(X, mT(gB)) : matmul(gB, mT(X)));
      const Tensor PtgA = matmul(mT(P), gA);
      gLU = add(tril(matmul(PtgA, mT(U)), -1), triu(matmul(mT(L), PtgA)));
    }
    return TensorList{gLU, need[1] ? gB : Tensor()};
  };
}

// A = L L^T. With S = L^-1 dA L^-T, dL = L phi(S), phi keeping the lower
// triangle with the diagonal halved; phi is self-adjoint, so
// gA = L^-T phi(L^T gL) L^-1, symmetrized (A is symmetric).
Vjp cholesky_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& L = s[0];
    const Tensor M = matmul(mT(L), g[0]);
    const Tensor phi = sub(tril(M), scaled(diag_embed(diagonal(M)), 0.5));
    // L^-T phi L^-1, as two triangular solves.
    const Tensor right = linalg::solve_triangular(L, phi, /*upper=*/false, /*left=*/false);  // phi L^-1
    const Tensor gA = linalg::solve_triangular(mT(L), right, /*upper=*/true);
    return TensorList{scaled(add(gA, mT(gA)), 0.5)};
  };
}

// A = Q R with m >= n (Q^T Q = I, R upper). Writing dQ and dR through
// C = Q^T dQ (skew) and X = Q^T dA R^-1 gives
//   gA = (gQ + Q sym(M)) R^-T,  M = gR R^T - Q^T gQ,
// where sym(M) copies M's upper triangle onto its lower one.
Vjp qr_backward(const std::string& mode) {
  return [mode](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& Q = s[0];
    const Tensor& R = s[1];
    EMBER_CHECK(mode != "r", Error,
                "linalg.qr: The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
    const int64_t m = Q.size(Q.dim() - 2), n = R.size(R.dim() - 1);
    EMBER_CHECK(m >= n && (mode == "reduced" || m == n), NotImplementedError,
                "linalg.qr: the derivative is implemented for mode='reduced' (or square inputs) with rows >= "
                "columns, got ", m, " x ", n, " with mode='", mode, "'");
    const Tensor M = sub(matmul(g[1], mT(R)), matmul(mT(Q), g[0]));
    const Tensor sym = add(triu(M), mT(triu(M, 1)));
    return TensorList{times_inverse_transpose(add(g[0], matmul(Q, sym)), R)};
  };
}

// A = V diag(w) V^T: gA = V (diag(gw) + F o skew(V^T gV)) V^T with
// F[i, j] = 1 / (w[j] - w[i]); only the skew part of V^T gV moves V.
Vjp eigh_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& w = s[0];
    const Tensor& V = s[1];
    const Tensor E = matmul(mT(V), g[1]);
    const Tensor skew = scaled(sub(E, mT(E)), 0.5);
    const Tensor inner = add(diag_embed(g[0]), mul(inverse_gaps(w), skew));
    return TensorList{matmul(matmul(V, inner), mT(V))};
  };
}

// A = U diag(S) Vh (k = min(m, n) singular values, distinct and nonzero),
// after Townsend, "Differentiating the Singular Value Decomposition" (2016):
//   gA = U [(F o (U^T gU - gU^T U)) S + diag(gS) + S (F o (V^T gV - gV^T V))] V^T
//        + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T),
// F[i, j] = 1 / (s[j]^2 - s[i]^2). With full_matrices only U's and Vh's
// first k columns / rows enter, as in PyTorch.
Vjp svd_backward(bool full_matrices) {
  return [full_matrices](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& S = s[1];
    const int64_t k = S.size(S.dim() - 1);
    Tensor U = s[0], Vh = s[2], gU = g[0], gVh = g[2];
    if (full_matrices) {
      U = narrow(U, -1, 0, k);
      gU = narrow(gU, -1, 0, k);
      Vh = narrow(Vh, -2, 0, k);
      gVh = narrow(gVh, -2, 0, k);
    }
    const Tensor& gS = g[1];
    const Tensor V = mT(Vh), gV = mT(gVh);
    const Tensor F = inverse_gaps(mul(S, S));
    const Tensor rows = unsqueeze(S, -1), cols = unsqueeze(S, -2);  // S X scales rows, X S columns
    const Tensor UtgU = matmul(mT(U), gU), VtgV = matmul(Vh, gV);
    const Tensor J = mul(mul(F, sub(UtgU, mT(UtgU))), cols);
    const Tensor K = mul(rows, mul(F, sub(VtgV, mT(VtgV))));
    Tensor gA = matmul(matmul(U, add(add(J, diag_embed(gS)), K)), Vh);
    // The parts of gU and gVh outside the spans of U and V.
    const Tensor gU_perp = sub(gU, matmul(U, UtgU));
    gA = add(gA, matmul(div(gU_perp, cols), Vh));
    const Tensor gVh_scaled = div(gVh, rows);
    const Tensor gVh_perp = sub(gVh_scaled, matmul(matmul(gVh_scaled, V), Vh));
    gA = add(gA, matmul(U, gVh_perp));
    return TensorList{gA};
  };
}

}  // namespace ember::autograd::functions
