// Linked into CPU-only builds: the CUDA kernels of the index family. Nothing
// reaches them (no tensor can live on a GPU there); they exist so the
// front-ends' CUDA branches link.
#include <ember/core/error.h>
#include <ember/cuda/index.h>

namespace ember::cuda {

namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw Error(str(what, ": ember was built without CUDA support, so tensors can only live on the CPU"));
}
}  // namespace

void index_gather(Tensor&, const Tensor&, const std::vector<Tensor>&, const std::vector<int64_t>&,
                  const std::vector<int64_t>&) {
  no_cuda("index_gather");
}
void index_scatter(Tensor&, const Tensor&, const std::vector<Tensor>&, const std::vector<int64_t>&,
                   const std::vector<int64_t>&, bool, const char* op) {
  no_cuda(op);
}
void check_index_range(const Tensor&, int64_t, int64_t, const char* op, bool, cpu::RangeError) { no_cuda(op); }
std::pair<int64_t, int64_t> min_max(const Tensor&) { no_cuda("min_max"); }
int64_t count_nonzero(const Tensor&) { no_cuda("count_nonzero"); }
Tensor nonzero(const Tensor&) { no_cuda("nonzero"); }
void tril_triu(Tensor&, const Tensor&, int64_t, bool lower) { no_cuda(lower ? "tril" : "triu"); }

}  // namespace ember::cuda
