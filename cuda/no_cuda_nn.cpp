// Linked into CPU-only builds: the nn-side CUDA kernels (matmul, ...) say that
// ember was built without CUDA. The front-ends only call them for CUDA
// tensors, which such a build cannot create, so this is a safety net.
#include <ember/core/error.h>
#include <ember/cuda/conv.h>
#include <ember/cuda/loss.h>
#include <ember/cuda/matmul.h>
#include <ember/cuda/nn_misc.h>
#include <ember/cuda/norm.h>
#include <ember/cuda/optim.h>
#include <ember/cuda/pool.h>

namespace ember::cuda {

namespace {
[[noreturn]] void no_cuda_nn(const char* op) {
  throw Error(str(op, ": ember was built without CUDA support; rebuild it on a machine with the CUDA toolkit"));
}
}  // namespace

void matmul(const Tensor&, const Tensor&, const Tensor&, double, double) { no_cuda_nn("matmul"); }
bool matmul_bias(const Tensor&, const Tensor&, const Tensor&, const Tensor&, double) { no_cuda_nn("addmm"); }
void row_norm(Tensor&, Tensor&, Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t, double, bool) {
  no_cuda_nn("layer_norm");
}

void cross_entropy_forward(Tensor&, Tensor&, Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t,
                           int64_t, int64_t) {
  no_cuda_nn("cross_entropy");
}
void cross_entropy_backward(Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                            int64_t, int64_t, int64_t, int64_t) {
  no_cuda_nn("cross_entropy");
}

void nll_forward(Tensor&, Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t, int64_t, int64_t) {
  no_cuda_nn("nll_loss");
}
void nll_backward(Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t, int64_t, int64_t) {
  no_cuda_nn("nll_loss");
}
void embedding_forward(Tensor&, const Tensor&, const Tensor&) { no_cuda_nn("embedding"); }
void embedding_backward(Tensor&, const Tensor&, const Tensor&) { no_cuda_nn("embedding"); }
void native_dropout(Tensor&, Tensor&, const Tensor&, uint64_t, double, const PhiloxStream&) {
  no_cuda_nn("native_dropout");
}
void native_dropout_backward(Tensor&, const Tensor&, const Tensor&, double) { no_cuda_nn("native_dropout_backward"); }

void conv2d(Tensor&, const Tensor&, const Tensor&, const Tensor&, const cpu::ConvGeom&) { no_cuda_nn("conv2d"); }
void conv_transpose2d(Tensor&, const Tensor&, const Tensor&, const Tensor&, const cpu::ConvGeom&) {
  no_cuda_nn("conv_transpose2d");
}
void conv2d_weight(Tensor&, const Tensor&, const Tensor&, const cpu::ConvGeom&) { no_cuda_nn("conv2d"); }
size_t conv_plan_count(int) { return 0; }

void max_pool2d(Tensor&, Tensor&, const Tensor&, const cpu::PoolGeom&) { no_cuda_nn("max_pool2d"); }
void max_pool2d_backward(Tensor&, const Tensor&, const Tensor&, int64_t, int64_t, int64_t) {
  no_cuda_nn("max_pool2d");
}
void avg_pool2d(Tensor&, const Tensor&, const cpu::PoolGeom&) { no_cuda_nn("avg_pool2d"); }
void avg_pool2d_backward(Tensor&, const Tensor&, const cpu::PoolGeom&) { no_cuda_nn("avg_pool2d"); }

void row_norm_backward(Tensor&, Tensor&, Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                       const Tensor&, int64_t, int64_t, bool) {
  no_cuda_nn("layer_norm");
}
void channel_moments(Tensor&, Tensor&, const Tensor&, int64_t, int64_t, int64_t) { no_cuda_nn("batch_norm"); }
void channel_affine(Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t, int64_t) {
  no_cuda_nn("batch_norm");
}
void channel_norm_backward(Tensor&, Tensor&, Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                           const Tensor&, int64_t, int64_t, int64_t, bool) {
  no_cuda_nn("batch_norm");
}

void sgd(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<bool>&,
         const SgdOptions&) {
  no_cuda_nn("sgd");
}
void adam(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>&,
          const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<double>&, const AdamOptions&) {
  no_cuda_nn("adam");
}
void rmsprop(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>&,
             const std::vector<Tensor>&, const std::vector<Tensor>&, const RmspropOptions&) {
  no_cuda_nn("rmsprop");
}
void adagrad(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>&,
             const std::vector<double>&, const AdagradOptions&) {
  no_cuda_nn("adagrad");
}

}  // namespace ember::cuda
