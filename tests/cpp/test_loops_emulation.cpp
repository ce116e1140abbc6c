// The elementwise kernels (cuda/device/loops_kernels.cuh: the contiguous
// path with vector loads and its scalar tails, and the strided path's byte
// offsets in 32- and 64-bit index types) run on the CPU through
// tests/cpp/cuda_emulation.h against direct loops: lengths around the vector
// width, misaligned pointers, fewer blocks than the data needs (grid-stride),
// transposed, broadcast (stride 0), flipped (negative stride) and sliced
// operands, mixed element types. Elements outside the output stay untouched.
#include <cstdint>
#include <cstring>
#include <vector>

#include <ember/core/ops/factory.h>
#include <ember/core/tensor.h>
#include <ember/core/tensor_iterator.h>

#include "catch.h"
#include "cuda_emulation.h"

#pragma GCC diagnostic ignored "-Wunknown-pragmas"  // #pragma unroll
#include <ember/cuda/device/loops_kernels.cuh>

namespace {

namespace kc = ember::cuda;

struct AxpyInt {  // the functor: float out = 2 * a + b (a float, b int32)
  float operator()(float a, int32_t b) const { return 2.0f * a + static_cast<float>(b); }
};
using AxpyOp = kc::detail::Op<float, AxpyInt, float, int32_t>;

constexpr float kSentinel = -12345.f;

void contiguous_case(int64_t n, int misalign, unsigned grid) {
  INFO("contiguous n " << n << " misalign " << misalign << " grid " << grid);
  // Buffers from new[] are 16-byte aligned; `misalign` elements shift them off.
  std::vector<float> out(n + 16, kSentinel), a(n + 16);
  std::vector<int32_t> b(n + 16);
  for (int64_t i = 0; i < n + 16; ++i) a[i] = 0.5f * static_cast<float>(i), b[i] = static_cast<int32_t>(i % 7) - 3;
  float* o = out.data() + misalign;
  const float* pa = a.data() + misalign;
  const int32_t* pb = b.data() + misalign;
  auto aligned16 = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool aligned = aligned16(o) && aligned16(pa) && aligned16(pb);  // as launch_contiguous decides
  REQUIRE(aligned == (misalign == 0));
  kc::detail::Pointers<3> p{{reinterpret_cast<char*>(o), reinterpret_cast<char*>(const_cast<float*>(pa)),
                             reinterpret_cast<char*>(const_cast<int32_t*>(pb))}};
  launch(grid, kc::kThreads, 0,
         [&] { kc::detail::contiguous_kernel<AxpyOp>(p, n, aligned, AxpyOp{AxpyInt{}}, kc::Scalars<3>{}); });
  for (int64_t i = 0; i < n + 16 - misalign; ++i) {
    const float want = i < n ? 2.0f * pa[i] + static_cast<float>(pb[i]) : kSentinel;
    if (o[i] != want) {
      INFO("element " << i << ": got " << o[i] << ", want " << want);
      REQUIRE(o[i] == want);
    }
  }
  for (int j = 0; j < misalign; ++j) REQUIRE(out[j] == kSentinel);
}

// A strided case: shape, and per operand its buffer offset and element strides.
struct Layout {
  int64_t offset;
  std::vector<int64_t> strides;
};

template <class Index>
void strided_case(const std::vector<int64_t>& shape, const Layout& lo, const Layout& la, const Layout& lb, unsigned grid) {
  INFO("strided ndim " << shape.size() << " index bits " << 8 * sizeof(Index) << " grid " << grid);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  const size_t buf = 4096;
  std::vector<float> out(buf, kSentinel), a(buf);
  std::vector<int32_t> b(buf);
  for (size_t i = 0; i < buf; ++i) a[i] = 0.25f * static_cast<float>(i), b[i] = static_cast<int32_t>(i % 11) - 5;
  kc::Geometry<3> g;
  g.ndim = static_cast<int>(shape.size());
  g.data[0] = reinterpret_cast<char*>(out.data() + lo.offset);
  g.data[1] = reinterpret_cast<char*>(a.data() + la.offset);
  g.data[2] = reinterpret_cast<char*>(b.data() + lb.offset);
  for (int d = 0; d < g.ndim; ++d) {
    g.shape[d] = shape[d];
    g.strides[0][d] = lo.strides[d] * 4;  // bytes
    g.strides[1][d] = la.strides[d] * 4;
    g.strides[2][d] = lb.strides[d] * 4;
  }
  launch(grid, kc::kThreads, 0, [&] {
    kc::detail::strided_kernel<Index, AxpyOp>(g, static_cast<Index>(n), AxpyOp{AxpyInt{}}, kc::Scalars<3>{});
  });
  std::vector<float> want(buf, kSentinel);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {  // odometer over the shape, last dim fastest
    int64_t oo = lo.offset, oa = la.offset, ob = lb.offset;
    for (size_t d = 0; d < shape.size(); ++d) {
      oo += idx[d] * lo.strides[d], oa += idx[d] * la.strides[d], ob += idx[d] * lb.strides[d];
    }
    want[oo] = 2.0f * a[oa] + static_cast<float>(b[ob]);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0 && ++idx[d] == shape[d]; --d) idx[d] = 0;
  }
  for (size_t i = 0; i < buf; ++i) {
    if (out[i] != want[i]) {
      INFO("buffer element " << i << ": got " << out[i] << ", want " << want[i]);
      REQUIRE(out[i] == want[i]);
    }
  }
}

// b is one value for all n elements: either "device" memory read through its
// pointer (a broadcast scalar) or bits inlined in the launch arguments (a CPU
// number; its pointer then points nowhere and must never be read).
void scalar_b_case(int64_t n, int misalign, bool inlined, bool strided) {
  INFO("scalar b: n " << n << " misalign " << misalign << " inlined " << inlined << " strided " << strided);
  std::vector<float> out(n + 16, kSentinel), a(n + 16);
  for (int64_t i = 0; i < n + 16; ++i) a[i] = 0.5f * static_cast<float>(i) - 3.f;
  int32_t b_value = -7;
  float* o = out.data() + misalign;
  float* pa = a.data() + misalign;
  kc::Scalars<3> s;
  s.mask = 1u << 2;
  char* pb = reinterpret_cast<char*>(&b_value);
  if (inlined) {
    s.inline_mask = 1u << 2;
    std::memcpy(&s.bits[2], &b_value, sizeof b_value);
    pb = nullptr;  // a host address in real launches: never dereferenced
  }
  const unsigned grid = 2;
  if (strided) {
    kc::Geometry<3> g;
    g.ndim = 1;
    g.shape[0] = n;
    g.strides[0][0] = g.strides[1][0] = 4;
    g.strides[2][0] = 0;
    g.data[0] = reinterpret_cast<char*>(o), g.data[1] = reinterpret_cast<char*>(pa), g.data[2] = pb;
    launch(grid, kc::kThreads, 0, [&] {
      kc::detail::strided_kernel<uint32_t, AxpyOp>(g, static_cast<uint32_t>(n), AxpyOp{AxpyInt{}}, s);
    });
  } else {
    // Alignment is decided over the non-scalar operands only, as launch_contiguous does.
    const bool aligned = misalign == 0;
    kc::detail::Pointers<3> p{{reinterpret_cast<char*>(o), reinterpret_cast<char*>(pa), pb}};
    launch(grid, kc::kThreads, 0, [&] { kc::detail::contiguous_kernel<AxpyOp>(p, n, aligned, AxpyOp{AxpyInt{}}, s); });
  }
  for (int64_t i = 0; i < n + 16 - misalign; ++i) {
    const float want = i < n ? 2.0f * pa[i] + static_cast<float>(b_value) : kSentinel;
    if (o[i] != want) {
      INFO("element " << i << ": got " << o[i] << ", want " << want);
      REQUIRE(o[i] == want);
    }
  }
}

}  // namespace

TEST_CASE("elementwise kernels (host emulation): a scalar input, inlined or broadcast from memory", "[emulation]") {
  for (int64_t n : {1, 3, 4, 5, 1027}) {
    for (int misalign : {0, 1}) {
      for (bool inlined : {false, true}) {
        scalar_b_case(n, misalign, inlined, /*strided=*/false);
        scalar_b_case(n, misalign, inlined, /*strided=*/true);
      }
    }
  }
}

TEST_CASE("elementwise contiguous kernel (host emulation): vector path, tails, misalignment", "[emulation]") {
  for (int64_t n : {1, 3, 4, 5, 8, 1023, 1024, 1027, 3001}) {
    for (int misalign : {0, 1, 2}) {
      contiguous_case(n, misalign, 1);                                           // grid-stride over everything
      contiguous_case(n, misalign, static_cast<unsigned>((n + 4 * 256 - 1) / (4 * 256)));  // one pass
    }
  }
}

TEST_CASE("elementwise strided kernel (host emulation): transposed, broadcast, flipped, sliced", "[emulation]") {
  for (unsigned grid : {1u, 3u}) {
    // out [5, 7] contiguous; a transposed from a [7, 5] buffer; b broadcast along dim 0.
    strided_case<uint32_t>({5, 7}, {0, {7, 1}}, {0, {1, 5}}, {0, {0, 1}}, grid);
    strided_case<int64_t>({5, 7}, {0, {7, 1}}, {0, {1, 5}}, {0, {0, 1}}, grid);
    // flipped a (negative stride from its last element, the 64-bit path), sliced out (every other column).
    strided_case<int64_t>({4, 9}, {3, {20, 2}}, {35, {-9, -1}}, {100, {9, 1}}, grid);
    // 3-D with a size-1 dim and a scalar-like b (all strides 0).
    strided_case<uint32_t>({3, 1, 300}, {10, {300, 0, 1}}, {0, {1, 0, 3}}, {17, {0, 0, 0}}, grid);
  }
}

// The launch's host-side choices on real iterators (CPU tensors, with `host`
// flags standing for which operands a CUDA launch would see on the CPU), then
// the kernel they pick, end to end: out = 2 * a + b with b a number.
TEST_CASE("elementwise launch plan (host): number inputs inline, contiguity, alignment", "[emulation]") {
  using ember::DType;
  using ember::Tensor;
  const int64_t sizes[3] = {4, 4, 4};
  const int64_t n = 1027;
  Tensor out = ember::full({n}, -1.0, DType::Float32), a = ember::arange(0, n, 1, DType::Float32);
  Tensor b = ember::full({}, -7, DType::Int32);  // a 0-d "CPU number"
  const bool number_on_host[3] = {false, false, true};
  {
    const ember::TensorIterator it({out, a, b});
    const kc::Scalars<3> s = kc::detail::scalar_inputs<3>(it, sizes, number_on_host);
    REQUIRE(s.mask == (1u << 2));
    REQUIRE(s.inline_mask == (1u << 2));
    int32_t inlined = 0;
    std::memcpy(&inlined, &s.bits[2], 4);
    REQUIRE(inlined == -7);
    REQUIRE(kc::detail::contiguous_layout<3>(it, sizes, s));
    const bool aligned = kc::detail::vector_aligned<3>(it, sizes, s);
    REQUIRE(aligned == (reinterpret_cast<uintptr_t>(out.data_ptr()) % 16 == 0 &&
                        reinterpret_cast<uintptr_t>(a.data_ptr()) % 16 == 0));
    kc::detail::Pointers<3> p{{it.data(0), it.data(1), nullptr}};  // b's pointer must not be read
    launch(2, kc::kThreads, 0, [&] { kc::detail::contiguous_kernel<AxpyOp>(p, n, aligned, AxpyOp{AxpyInt{}}, s); });
    const float* o = static_cast<const float*>(out.data_ptr());
    for (int64_t i = 0; i < n; ++i) {
      if (o[i] != 2.0f * static_cast<float>(i) - 7.0f) REQUIRE(o[i] == 2.0f * static_cast<float>(i) - 7.0f);
    }
  }
  {  // a device scalar (broadcast, not on the host): read through its pointer
    const bool none_on_host[3] = {false, false, false};
    const ember::TensorIterator it({out, a, b});
    const kc::Scalars<3> s = kc::detail::scalar_inputs<3>(it, sizes, none_on_host);
    REQUIRE(s.mask == (1u << 2));
    REQUIRE(s.inline_mask == 0);
    REQUIRE(kc::detail::contiguous_layout<3>(it, sizes, s));
  }
  {  // an input off by one element: contiguous, but no vector loads
    const Tensor a2 = ember::arange(0, n + 1, 1, DType::Float32).narrow(0, 1, n);
    const ember::TensorIterator it({out, a2, b});
    const kc::Scalars<3> s = kc::detail::scalar_inputs<3>(it, sizes, number_on_host);
    REQUIRE(kc::detail::contiguous_layout<3>(it, sizes, s));
    REQUIRE_FALSE(kc::detail::vector_aligned<3>(it, sizes, s));
  }
  {  // every other element: the strided kernel
    const Tensor a2 = ember::arange(0, 2 * n, 1, DType::Float32).slice(0, 0, 2 * n, 2);
    const ember::TensorIterator it({out, a2, b});
    const kc::Scalars<3> s = kc::detail::scalar_inputs<3>(it, sizes, number_on_host);
    REQUIRE_FALSE(kc::detail::contiguous_layout<3>(it, sizes, s));
  }
  // A CPU operand that is not a number, or whose dtype is not the kernel's: refused.
  const bool inputs_on_host[3] = {false, true, true};
  REQUIRE_THROWS_AS(kc::detail::scalar_inputs<3>(ember::TensorIterator({out, a, b}), sizes, inputs_on_host),
                    ember::Error);
  const Tensor wide = ember::full({}, 2.0, DType::Float64);
  REQUIRE_THROWS_AS(kc::detail::scalar_inputs<3>(ember::TensorIterator({out, a, wide}), sizes, number_on_host),
                    ember::Error);
}
