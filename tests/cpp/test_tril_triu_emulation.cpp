// tril / triu's CUDA kernel (cuda/device/index_kernels.cuh) runs on the CPU
// through tests/cpp/cuda_emulation.h, driven as cuda/index.cu's tril_triu()
// drives it (the same geometry, one launch per element size, a grid-stride
// loop over fewer blocks than elements), against ember's CPU tril / triu:
// every dtype (the kernel moves 1-, 2-, 4- or 8-byte words), square and
// non-square matrices, batches of up to 3 dims, diagonals inside, at the
// edges of and far outside the matrix (and the int64 extremes), and inputs
// that are transposed, sliced (with an offset), batch-permuted or expanded
// views.
// Results must match bit for bit, zeros included.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <ember/core/ops/shape.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"
#include "cuda_emulation.h"

#include <ember/cuda/device/index_kernels.cuh>

namespace {

using namespace emu_test;
using ember::Dims;
namespace kc = ember::cuda;

// cuda/index.cu's tril_triu(): out is contiguous, of x's shape and dtype.
Tensor emulated_tril_triu(const Tensor& x, int64_t diagonal, bool lower) {
  Tensor out = ember::empty(x.shape(), x.dtype());
  const int64_t n = out.numel();
  std::memset(out.data_ptr(), 0x5A, static_cast<size_t>(n) * out.element_size());  // unwritten: garbage
  if (n == 0) return out;
  REQUIRE(x.dim() - 2 <= kc::kTriMaxBatchDims);
  const kc::TriGeometry g = kc::tri_geometry(x.shape(), x.strides());
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 3));  // grid-stride: fewer blocks
  auto run = [&](auto word) {
    using U = decltype(word);
    U* o = static_cast<U*>(out.data_ptr());
    const U* in = static_cast<const U*>(x.data_ptr());
    launch(blocks, 256, 0, [&] { kc::tril_triu_kernel<U>(o, in, g, n, diagonal, lower); });
  };
  switch (x.element_size()) {
    case 1: run(uint8_t{}); break;
    case 2: run(uint16_t{}); break;
    case 4: run(uint32_t{}); break;
    default: run(uint64_t{}); break;
  }
  return out;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  const Tensor c = b.contiguous();
  return a.numel() == c.numel() &&
         std::memcmp(a.data_ptr(), c.data_ptr(), static_cast<size_t>(a.numel()) * a.element_size()) == 0;
}

// Distinct nonzero values (so a kept element never looks like a zeroed one),
// of `shape` in `dtype`; bool gets a random pattern with mostly true.
Tensor values_of_shape(const Shape& shape, DType dtype, std::mt19937& rng) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double value = static_cast<double>(i % 100 + 1) * (i % 2 ? -1 : 1);
    v[static_cast<size_t>(i)] = dtype == DType::Bool ? (rng() % 5 != 0) : value;
  }
  if (dtype == DType::UInt8) {
    for (double& d : v) d = std::fabs(d);
  }
  return tensor_of(v, shape, dtype);
}

// Views with the given logical shape whose layout is not contiguous.
std::vector<std::pair<std::string, Tensor>> layouts(const Shape& shape, DType dtype, std::mt19937& rng) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  std::vector<std::pair<std::string, Tensor>> r;
  r.push_back({"contiguous", values_of_shape(shape, dtype, rng)});
  Shape swapped = shape;
  std::swap(swapped[nd - 2], swapped[nd - 1]);
  r.push_back({"transposed", values_of_shape(swapped, dtype, rng).transpose(nd - 2, nd - 1)});
  Shape wide = shape;
  wide[nd - 1] = 2 * shape[nd - 1] + 1;
  r.push_back({"sliced", ember::slice(values_of_shape(wide, dtype, rng), nd - 1, 1, std::nullopt, 2)});
  Shape tall = shape;  // every other row from the second: an offset and a row stride of 2 rows
  tall[nd - 2] = 2 * shape[nd - 2] + 1;
  r.push_back({"row-sliced", ember::slice(values_of_shape(tall, dtype, rng), nd - 2, 1, std::nullopt, 2)});
  if (nd >= 3) {
    Shape moved = shape;  // batch dim 0 stored innermost
    std::rotate(moved.begin(), moved.begin() + 1, moved.end());
    Dims back(static_cast<size_t>(nd));
    back[0] = nd - 1;
    for (int64_t d = 1; d < nd; ++d) back[static_cast<size_t>(d)] = d - 1;
    r.push_back({"batch-permuted", values_of_shape(moved, dtype, rng).permute(back)});
    Shape one = shape;
    one[0] = 1;
    r.push_back({"expanded", values_of_shape(one, dtype, rng).expand(shape)});
  }
  for (const auto& [name, t] : r) REQUIRE(t.shape() == shape);
  return r;
}

}  // namespace

TEST_CASE("tril / triu kernel (host emulation) matches the CPU: dtypes, shapes, diagonals, layouts",
          "[emulation][tril_emulation]") {
  std::mt19937 rng(5);
  const std::vector<Shape> shapes = {{5, 7}, {7, 5}, {1, 1}, {1, 9}, {9, 1}, {6, 6}, {3, 4, 6}, {2, 3, 5, 4},
                                     {2, 0, 3}, {33, 40}};
  const std::vector<int64_t> diagonals = {0, 1, -1, 2, -3, 6, -6, 8, -9, 100, -100,
                                          std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  const std::vector<DType> dtypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int64,
                                     DType::Int32, DType::Int8, DType::UInt8, DType::Bool};
  int compared = 0, mismatched = 0;
  for (DType dtype : dtypes) {
    for (const Shape& shape : shapes) {
      for (const auto& [layout, x] : layouts(shape, dtype, rng)) {
        for (int64_t diagonal : diagonals) {
          for (bool lower : {true, false}) {
            const Tensor want = lower ? ember::tril(x, diagonal) : ember::triu(x, diagonal);
            const Tensor got = emulated_tril_triu(x, diagonal, lower);
            if (!same_bytes(got, want) && ++mismatched <= 3) {  // report the first few
              INFO((lower ? "tril" : "triu") << " of " << ember::dtype_name(dtype) << " " << ember::shape_str(shape)
                                             << " (" << layout << "), diagonal " << diagonal);
              CHECK(values_of(got) == values_of(want));
              CHECK(same_bytes(got, want));
            }
            ++compared;
          }
        }
      }
    }
  }
  CHECK(mismatched == 0);
  REQUIRE(compared > 3000);
}
