// The CUDA seam from C++ (cuda/cuda_api.h), in every build: without a usable
// GPU it must refuse clearly; with one, tensors round-trip through the device
// and the allocator, streams and events work. The GPU cases return early
// (with a warning saying why) on machines without a GPU.

#include "cuda_util.h"
#include "util.h"

using namespace ember;
using test::have_gpu;
using test::kCuda0;
using test::require_throws;
using test::require_values;
using test::values;

TEST_CASE("without a GPU the seam answers queries and refuses allocations clearly", "[cuda_device]") {
  if (cuda::is_available()) return;
  REQUIRE(cuda::device_count() == 0);
  const std::string reason = cuda::unavailable_reason();
  REQUIRE_FALSE(reason.empty());
  require_throws<Error>([] { empty({2, 3}, DType::Float32, kCuda0); }, reason);
  require_throws<Error>([] { values({1, 2}, {2}).to(kCuda0); }, reason);
  REQUIRE(cuda::memory_stats().allocated == 0);
  cuda::empty_cache();  // harmless
}

TEST_CASE("cuda: tensors round-trip through the GPU in any layout and dtype", "[cuda_device]") {
  if (!have_gpu()) return;
  Tensor x = values({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = x.to(kCuda0);
  REQUIRE(y.device() == kCuda0);
  require_values(y.cpu(), {1, 2, 3, 4, 5, 6});
  require_values(y.transpose(0, 1).cpu(), {1, 4, 2, 5, 3, 6});          // strided source
  require_values(x.t().to(kCuda0).cpu(), {1, 4, 2, 5, 3, 6});           // strided host source
  require_values(y.to(DType::Float64).cpu(), {1, 2, 3, 4, 5, 6});       // cast on the device
  require_values(y.clone().cpu(), {1, 2, 3, 4, 5, 6});                  // device to device
  Tensor z = values({0, 0, 0, 0, 0, 0}, {3, 2}).to(kCuda0);
  Tensor zt = z.t();
  zt.copy_(x);  // into a strided device tensor
  require_values(z.cpu(), {1, 4, 2, 5, 3, 6});
}

TEST_CASE("cuda: the allocator counts and reuses device memory", "[cuda_device]") {
  if (!have_gpu()) return;
  cuda::synchronize();
  const size_t before = cuda::memory_stats(0).allocated;
  {
    Tensor a = empty({1000}, DType::Float32, kCuda0);  // 4000 bytes -> 4096
    REQUIRE(cuda::memory_stats(0).allocated == before + 4096);
  }
  REQUIRE(cuda::memory_stats(0).allocated == before);
  const size_t mallocs = cuda::memory_stats(0).raw_allocs;
  for (int i = 0; i < 5; ++i) Tensor b = empty({1000}, DType::Float32, kCuda0);
  REQUIRE(cuda::memory_stats(0).raw_allocs == mallocs);
  const auto info = cuda::mem_get_info(0);
  REQUIRE(info.free <= info.total);
  require_throws<OutOfMemoryError>([&] { empty({static_cast<int64_t>(info.total)}, DType::Float32, kCuda0); },
                                   "CUDA out of memory on cuda:0");
  REQUIRE(cuda::memory_summary(0).find("allocated") != std::string::npos);
}

TEST_CASE("cuda: streams, events and timing", "[cuda_device]") {
  if (!have_gpu()) return;
  const cuda::Stream original = cuda::current_stream(0);
  const cuda::Stream s = cuda::new_stream(0);
  REQUIRE_FALSE(s == original);
  cuda::set_current_stream(s);
  cuda::Event start(/*enable_timing=*/true), end(/*enable_timing=*/true);
  start.record(s);
  Tensor y = values({1, 2, 3}, {3}).to(kCuda0);
  end.record(s);
  end.synchronize();
  REQUIRE(end.query());
  REQUIRE(start.elapsed_time(end) >= 0);
  cuda::stream_synchronize(s);
  REQUIRE(cuda::stream_query(s));
  cuda::set_current_stream(original);
  require_values(y.cpu(), {1, 2, 3});
  const auto props = cuda::device_properties(0);
  REQUIRE(props.major >= 1);
  REQUIRE(props.total_memory > 0);
}
