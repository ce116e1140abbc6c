// Linked into CPU-only builds: the linalg family's CUDA kernels say that
// ember was built without CUDA. The front-ends only call them for CUDA
// tensors, which such a build cannot create, so this is a safety net.
#include <ember/core/error.h>
#include <ember/cuda/linalg.h>

namespace ember::cuda {

namespace {
[[noreturn]] void no_cuda_linalg(const char* op) {
  throw Error(str("linalg.", op, ": ember was built without CUDA support; rebuild it on a machine with the CUDA toolkit"));
}
}  // namespace

void lu_factor(const Tensor&, const Tensor&, const Tensor&) { no_cuda_linalg("lu_factor"); }
void lu_solve(const Tensor&, const Tensor&, const Tensor&, bool) { no_cuda_linalg("lu_solve"); }
void cholesky(const Tensor&, bool, const Tensor&) { no_cuda_linalg("cholesky"); }
void triangular_solve(const Tensor&, const Tensor&, bool, bool) { no_cuda_linalg("solve_triangular"); }
void geqrf(const Tensor&, const Tensor&) { no_cuda_linalg("qr"); }
void orgqr(const Tensor&, const Tensor&) { no_cuda_linalg("qr"); }
void eigh(const Tensor&, const Tensor&, bool, bool, const Tensor&) { no_cuda_linalg("eigh"); }
void svd(const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool, bool, const Tensor&) { no_cuda_linalg("svd"); }

}  // namespace ember::cuda
