// Linked into CPU-only builds: the CUDA elementwise, copy, reduction, softmax
// and random kernels. Nothing reaches them (no tensor can live on a GPU
// there); they exist so the front-ends' CUDA branches link.
#include <ember/core/error.h>
#include <ember/cuda/binary.h>
#include <ember/cuda/copy.h>
#include <ember/cuda/random.h>
#include <ember/cuda/reduce.h>
#include <ember/cuda/softmax.h>
#include <ember/cuda/unary.h>

namespace ember::cuda {

namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw Error(str(what, ": ember was built without CUDA support, so tensors can only live on the CPU"));
}
}  // namespace

void unary(UnaryOp, Tensor&, const Tensor&) { no_cuda("unary"); }
void softplus(Tensor&, const Tensor&, double, double) { no_cuda("softplus"); }
void clamp(Tensor&, const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&) { no_cuda("clamp"); }
void clamp_tensor(Tensor&, const Tensor&, const Tensor&, const Tensor&) { no_cuda("clamp"); }
void pow_scalar(Tensor&, const Tensor&, const Scalar&) { no_cuda("pow"); }
void pow(Tensor&, const Tensor&, const Tensor&) { no_cuda("pow"); }
void nan_to_num(Tensor&, const Tensor&, double, double, double) { no_cuda("nan_to_num"); }
void in_range_mask(Tensor&, const Tensor&, std::optional<double>, std::optional<double>) { no_cuda("in_range_mask"); }
void isfinite_mask(Tensor&, const Tensor&) { no_cuda("isfinite_mask"); }
void keep_where(Tensor&, const Tensor&, const Tensor&) { no_cuda("keep_where"); }
Tensor kernel_operand(const Tensor& t, const Tensor&) { return t; }

void binary(BinaryOp, Tensor&, const Tensor&, const Tensor&, const Scalar&) { no_cuda("binary"); }
void logical_not(Tensor&, const Tensor&) { no_cuda("logical_not"); }
void bitwise_not(Tensor&, const Tensor&) { no_cuda("bitwise_not"); }
void where(Tensor&, const Tensor&, const Tensor&, const Tensor&) { no_cuda("where"); }
void lerp(Tensor&, const Tensor&, const Tensor&, const Tensor&) { no_cuda("lerp"); }
void masked_fill(Tensor&, const Tensor&, const Tensor&, const Scalar&) { no_cuda("masked_fill"); }

void copy_on_device(Tensor&, const Tensor&) { no_cuda("copy"); }
void fill(Tensor&, const Scalar&) { no_cuda("fill_"); }

void reduce(ReduceOp, Tensor&, const Tensor&, int64_t, int64_t, int64_t) { no_cuda("reduce"); }
void var(Tensor&, const Tensor&, int64_t, int64_t, int64_t, double, bool) { no_cuda("var"); }
void logsumexp(Tensor&, const Tensor&, int64_t, int64_t, int64_t) { no_cuda("logsumexp"); }
void norm(Tensor&, const Tensor&, double, int64_t, int64_t, int64_t) { no_cuda("norm"); }
void prod_others(Tensor&, const Tensor&, int64_t, int64_t, int64_t) { no_cuda("prod"); }
void arg_reduce(bool, Tensor&, Tensor&, const Tensor&, int64_t, int64_t, int64_t) { no_cuda("argmax"); }
void cumsum(Tensor&, const Tensor&, int64_t, int64_t, int64_t) { no_cuda("cumsum"); }
void grad_coeff(GradCoeff, Tensor&, const Tensor&, const Tensor&, double) { no_cuda("grad_coeff"); }

void softmax(Tensor&, const Tensor&, int64_t, int64_t, int64_t, bool) { no_cuda("softmax"); }

void uniform(Tensor&, double, double, const PhiloxStream&) { no_cuda("uniform_"); }
void normal(Tensor&, double, double, const PhiloxStream&) { no_cuda("normal_"); }
void randint(Tensor&, int64_t, uint64_t, const PhiloxStream&) { no_cuda("random_"); }
void bernoulli(Tensor&, const Tensor&, const PhiloxStream&) { no_cuda("bernoulli_"); }
void bernoulli(Tensor&, double, const PhiloxStream&) { no_cuda("bernoulli_"); }
void exponential(Tensor&, double, const PhiloxStream&) { no_cuda("exponential_"); }

}  // namespace ember::cuda
