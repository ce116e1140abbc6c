// Backward formulas of the linalg family, written with ember ops (linalg's
// own included) so that they run on any device and double backward works.
// Matrices are real; formulas for symmetric inputs (cholesky, eigh) return
// symmetric gradients, as PyTorch's do.
#pragma once
#include <string>

#include <ember/autograd/node.h>

namespace ember::autograd::functions {

Vjp inv_backward();                           // saved: X = A^-1
Vjp solve_backward();                         // saved: A, X (inputs A, B; B a batch of matrices)
Vjp solve_triangular_backward(bool upper, bool unitriangular);  // saved: A, X (left)
Vjp det_backward();                           // saved: A, det
Vjp slogdet_backward();                       // saved: A (outputs sign, logabsdet)
Vjp lu_backward(bool compact);                // saved: L, U, P (grads: LU when compact, else L and U)
Vjp lu_solve_backward(bool adjoint);          // saved: LU, pivots, X, and L, U, P when LU needs a gradient
Vjp cholesky_backward();                      // saved: L (lower)
Vjp qr_backward(const std::string& mode);     // saved: Q, R
Vjp eigh_backward();                          // saved: eigenvalues, eigenvectors
Vjp svd_backward(bool full_matrices);         // saved: U, S, Vh

}  // namespace ember::autograd::functions
