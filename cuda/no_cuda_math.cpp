// Linked into CPU-only builds: the extra math functions' CUDA kernels. Nothing
// reaches them (no tensor can live on a GPU there); they exist so the
// front-end's CUDA branch links.
#include <ember/core/error.h>
#include <ember/cuda/unary_math.h>

namespace ember::cuda {

void unary_math(MathOp, Tensor&, const Tensor&) {
  throw Error("unary_math: ember was built without CUDA support, so tensors can only live on the CPU");
}

void binary_math(MathOp2, Tensor&, const Tensor&, const Tensor&) {
  throw Error("binary_math: ember was built without CUDA support, so tensors can only live on the CPU");
}

}  // namespace ember::cuda
