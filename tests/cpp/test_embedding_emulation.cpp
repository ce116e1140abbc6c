// embedding's kernels (cuda/device/embedding_kernels.cuh) run on the CPU
// through tests/cpp/cuda_emulation.h, as cuda/nn_misc.cu launches them (a
// grid-stride loop over fewer blocks than elements), against brute force:
// the forward row gather and the backward's atomic row sums with repeated
// indices, in every dtype CUDA's embedding takes. Small integer values keep
// every partial sum exact, so the atomics' order cannot matter.
#include <cstdint>
#include <random>
#include <vector>

#include <ember/core/tensor.h>

#include "emulation_util.h"
#include "cuda_emulation.h"

#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/embedding_kernels.cuh>

namespace {

using namespace emu_test;
namespace kc = ember::cuda;

void embedding_case(int64_t rows, int64_t dim, int64_t n, DType dtype, unsigned seed) {
  INFO("embedding rows " << rows << " dim " << dim << " n " << n << " dtype " << ember::dtype_name(dtype));
  std::mt19937 rng(seed);
  auto ints = [&](int64_t count, int lo, int hi) {
    std::vector<double> v(static_cast<size_t>(count));
    for (double& x : v) x = std::uniform_int_distribution<int>(lo, hi)(rng);
    return v;
  };
  const std::vector<double> w = ints(rows * dim, -100, 100), g = ints(n * dim, -4, 4);
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t& i : idx) i = static_cast<int64_t>(rng() % static_cast<unsigned>(std::min<int64_t>(rows, 4)));  // repeats
  if (n > 0) idx[0] = rows - 1;
  const Tensor weight = tensor_of(w, {rows, dim}, dtype), grad_rows = tensor_of(g, {n, dim}, dtype);
  Tensor out = nan_tensor({n, dim}, dtype), grad_weight = tensor_of(std::vector<double>(rows * dim, 0.0), {rows, dim}, dtype);
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((n * dim + 63) / 64, 3));
  kc::dispatch_device(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch(blocks, 64, 0, [&] {
      kc::gather_rows_kernel<T>(static_cast<T*>(out.data_ptr()), static_cast<const T*>(weight.data_ptr()), idx.data(), n, dim);
    });
    launch(blocks, 64, 0, [&] {
      kc::scatter_add_rows_kernel<T>(static_cast<T*>(grad_weight.data_ptr()), static_cast<const T*>(grad_rows.data_ptr()),
                                     idx.data(), n, dim);
    });
  });
  std::vector<double> want_out(static_cast<size_t>(n * dim)), want_grad(static_cast<size_t>(rows * dim), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < dim; ++j) {
      want_out[i * dim + j] = w[idx[i] * dim + j];
      want_grad[idx[i] * dim + j] += g[i * dim + j];
    }
  require_close(values_of(out), want_out, 0, 0, "embedding forward");
  require_close(values_of(grad_weight), want_grad, 0, 0, "embedding backward");
}

}  // namespace

TEST_CASE("embedding kernels (host emulation): row gather and atomic row sums with repeats", "[emulation]") {
  unsigned seed = 1;
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    embedding_case(10, 7, 50, d, seed++);
    embedding_case(3, 33, 9, d, seed++);
    embedding_case(5, 1, 200, d, seed++);  // more elements than threads: grid-stride
  }
}
