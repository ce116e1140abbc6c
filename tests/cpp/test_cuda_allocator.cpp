// The CUDA backend's host-side logic, run without a GPU: the caching
// allocator against a fake device (a byte counter with a capacity), the
// architecture check, and the staged copies with host memory posing as the
// device's.
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>

#include <ember/core/tensor_impl.h>
#include <ember/cuda/arch_list.h>
#include <ember/cuda/caching_allocator.h>
#include <ember/cuda/format.h>
#include <ember/cuda/memory_fraction.h>
#include <ember/cuda/staged_copy.h>

#include "util.h"

using namespace ember;
using namespace ember::cuda;
using test::require_throws;
using test::require_values;
using test::to_vector;
using test::values;

namespace {

constexpr size_t MiB = size_t{1} << 20;

// A device with `capacity` bytes. Pointers are fake (never dereferenced) and
// segments are placed with gaps, so a merge across segments would show.
struct FakeDevice {
  size_t capacity;
  size_t used = 0;
  size_t allocs = 0;
  size_t frees = 0;
  uintptr_t next = 0x100000000;
  std::map<uintptr_t, size_t> live;
  // Events: id -> (stream, completed). finish(stream) completes that stream's
  // recorded events, as the GPU would once it runs the queued work.
  struct FakeEvent {
    StreamId stream;
    bool done;
  };
  std::map<uintptr_t, FakeEvent> events;
  uintptr_t next_event = 1;
  size_t event_waits = 0;
  size_t events_destroyed = 0;
  void finish(StreamId stream) {
    for (auto& kv : events) {
      if (kv.second.stream == stream) kv.second.done = true;
    }
  }
};

class FakeBackend : public AllocatorBackend {
 public:
  explicit FakeBackend(FakeDevice* dev) : dev_(dev) {}
  void* raw_alloc(size_t n) override {
    if (dev_->used + n > dev_->capacity) return nullptr;
    const uintptr_t p = dev_->next;
    dev_->next += n + 64 * MiB;
    dev_->live[p] = n;
    dev_->used += n;
    dev_->allocs += 1;
    return reinterpret_cast<void*>(p);
  }
  void raw_free(void* ptr) override {
    auto it = dev_->live.find(reinterpret_cast<uintptr_t>(ptr));
    REQUIRE(it != dev_->live.end());  // only segment starts go back to the device
    dev_->used -= it->second;
    dev_->live.erase(it);
    dev_->frees += 1;
  }
  MemInfo mem_info() override { return {dev_->capacity - dev_->used, dev_->capacity}; }
  void* record_event(StreamId stream) override {
    const uintptr_t id = dev_->next_event++;
    dev_->events[id] = {stream, false};
    return reinterpret_cast<void*>(id);
  }
  bool event_done(void* e) override { return event(e).done; }
  void wait_event(void* e) override {
    event(e).done = true;
    dev_->event_waits += 1;
  }
  void destroy_event(void* e) override {
    event(e);
    dev_->events.erase(reinterpret_cast<uintptr_t>(e));
    dev_->events_destroyed += 1;
  }

 private:
  FakeDevice::FakeEvent& event(void* e) {
    auto it = dev_->events.find(reinterpret_cast<uintptr_t>(e));
    if (it == dev_->events.end()) throw std::logic_error("unknown or destroyed fake event");
    return it->second;
  }
  FakeDevice* dev_;
};

CachingAllocator make(FakeDevice& dev) { return CachingAllocator(std::make_unique<FakeBackend>(&dev), 0); }

uintptr_t addr(void* p) { return reinterpret_cast<uintptr_t>(p); }

}  // namespace

TEST_CASE("allocator rounds sizes and picks segment sizes by pool", "[cuda_allocator]") {
  REQUIRE(CachingAllocator::round_size(1) == 512);
  REQUIRE(CachingAllocator::round_size(512) == 512);
  REQUIRE(CachingAllocator::round_size(513) == 1024);
  REQUIRE(CachingAllocator::segment_size(512) == 2 * MiB);
  REQUIRE(CachingAllocator::segment_size(MiB) == 2 * MiB);
  REQUIRE(CachingAllocator::segment_size(MiB + 512) == 20 * MiB);
  REQUIRE(CachingAllocator::segment_size(10 * MiB) == 10 * MiB);
  REQUIRE(CachingAllocator::segment_size(11 * MiB) == 12 * MiB);
}

TEST_CASE("allocator cuts small blocks from one 2 MiB segment", "[cuda_allocator]") {
  FakeDevice dev{1024 * MiB};
  auto alloc = make(dev);
  void* a = alloc.allocate(1000);
  void* b = alloc.allocate(1000);
  void* c = alloc.allocate(100);
  REQUIRE(dev.allocs == 1);
  REQUIRE(addr(b) == addr(a) + 1024);
  REQUIRE(addr(c) == addr(b) + 1024);
  REQUIRE(alloc.block_size(c) == 512);
  const AllocatorStats s = alloc.stats();
  REQUIRE(s.allocated == 2560);
  REQUIRE(s.requested == 2100);
  REQUIRE(s.reserved == 2 * MiB);
  REQUIRE(s.active_blocks == 3);
  REQUIRE(s.segments == 1);
  REQUIRE(alloc.allocate(0) == nullptr);
  alloc.free(nullptr);  // no-op
}

TEST_CASE("allocator merges freed neighbours and reuses the merged block", "[cuda_allocator]") {
  FakeDevice dev{1024 * MiB};
  auto alloc = make(dev);
  void* a = alloc.allocate(512 * 1024);
  void* b = alloc.allocate(512 * 1024);
  void* c = alloc.allocate(512 * 1024);
  REQUIRE(dev.allocs == 1);
  alloc.free(a);
  alloc.free(b);
  // a and b merged into one 1 MiB block at a's address: it fits exactly.
  void* d = alloc.allocate(MiB);
  REQUIRE(d == a);
  REQUIRE(dev.allocs == 1);
  // A segment that still holds a live block is not returned by empty_cache.
  alloc.free(d);
  alloc.empty_cache();
  REQUIRE(dev.frees == 0);
  REQUIRE(alloc.stats().reserved == 2 * MiB);
  // Once c is freed, every piece merges back into the whole segment.
  alloc.free(c);
  alloc.empty_cache();
  REQUIRE(dev.frees == 1);
  REQUIRE(dev.used == 0);
  REQUIRE(alloc.stats().reserved == 0);
  REQUIRE(alloc.stats().segments == 0);
}

TEST_CASE("allocator splits large segments and gives big requests their own", "[cuda_allocator]") {
  FakeDevice dev{1024 * MiB};
  auto alloc = make(dev);
  void* a = alloc.allocate(3 * MiB);  // from a 20 MiB segment
  void* b = alloc.allocate(3 * MiB);  // from the rest of it
  void* c = alloc.allocate(12 * MiB);  // fits in the 14 MiB left
  REQUIRE(dev.allocs == 1);
  REQUIRE(addr(b) == addr(a) + 3 * MiB);
  REQUIRE(addr(c) == addr(b) + 3 * MiB);
  void* d = alloc.allocate(12 * MiB);  // >= 10 MiB: a 12 MiB segment of its own
  REQUIRE(dev.allocs == 2);
  REQUIRE(dev.live.rbegin()->second == 12 * MiB);
  REQUIRE(alloc.stats().reserved == 32 * MiB);
  // A small request never takes a block from the large pool.
  void* e = alloc.allocate(4096);
  REQUIRE(dev.allocs == 3);
  for (void* p : {a, b, c, d, e}) alloc.free(p);
  REQUIRE(alloc.stats().allocated == 0);
}

TEST_CASE("allocator: a repeated step allocates nothing new from the device", "[cuda_allocator]") {
  FakeDevice dev{1024 * MiB};
  auto alloc = make(dev);
  const std::vector<size_t> sizes{100, 4096, 300 * 1024, 3 * MiB, 15 * MiB, 700, 5 * MiB + 3, 64};
  size_t allocs_after_first = 0;
  for (int step = 0; step < 10; ++step) {
    std::vector<void*> live;
    for (size_t n : sizes) live.push_back(alloc.allocate(n));
    // Free in an order different from allocation, with a temporary in between.
    alloc.free(live[2]);
    void* tmp = alloc.allocate(200 * 1024);
    alloc.free(live[4]);
    alloc.free(tmp);
    for (size_t i : {0, 1, 3, 5, 6, 7}) alloc.free(live[i]);
    if (step == 0) allocs_after_first = dev.allocs;
    REQUIRE(alloc.stats().allocated == 0);
  }
  REQUIRE(dev.allocs == allocs_after_first);
  REQUIRE(alloc.stats().raw_allocs == allocs_after_first);
}

TEST_CASE("allocator keeps blocks with the stream they were allocated on", "[cuda_allocator]") {
  FakeDevice dev{1024 * MiB};
  auto alloc = make(dev);
  void* a = alloc.allocate(4096, /*stream=*/1);
  alloc.free(a);
  void* b = alloc.allocate(4096, /*stream=*/2);
  REQUIRE(dev.allocs == 2);  // stream 2 does not take stream 1's cached block
  void* c = alloc.allocate(4096, /*stream=*/1);
  REQUIRE(c == a);
  REQUIRE(dev.allocs == 2);
  alloc.free(b);
  alloc.free(c);
}

TEST_CASE("allocator holds back a block used by another stream until its work is done", "[cuda_allocator]") {
  FakeDevice dev{1024 * MiB};
  auto alloc = make(dev);
  void* a = alloc.allocate(4096, /*stream=*/1);
  alloc.record_stream(a, /*stream=*/7);
  alloc.record_stream(a, /*stream=*/7);  // once per stream
  alloc.record_stream(a, /*stream=*/1);  // its own stream: nothing to wait for
  alloc.free(a);
  REQUIRE(dev.events.size() == 1);
  REQUIRE(dev.events.begin()->second.stream == 7);
  AllocatorStats s = alloc.stats();
  REQUIRE(s.allocated == 0);  // no tensor holds it any more
  REQUIRE(s.requested == 0);
  REQUIRE(s.active_blocks == 0);
  REQUIRE(s.pending_frees == 1);
  REQUIRE(s.reserved == 2 * MiB);
  REQUIRE(alloc.block_size(a) == 0);
  // While stream 7 may still use it, stream 1 gets other memory.
  void* b = alloc.allocate(4096, 1);
  REQUIRE(b != a);
  REQUIRE(alloc.stats().pending_frees == 1);
  alloc.free(b);
  dev.finish(7);
  // The next allocation finds the event completed and the block back in the cache.
  void* c = alloc.allocate(4096, 1);
  REQUIRE(c == a);
  s = alloc.stats();
  REQUIRE(s.pending_frees == 0);
  REQUIRE(s.allocated == 4096);
  REQUIRE(s.active_blocks == 1);
  REQUIRE(s.raw_allocs == 1);
  REQUIRE(dev.events.empty());
  REQUIRE(dev.events_destroyed == 1);
  REQUIRE(dev.event_waits == 0);  // found by querying, never by waiting
  // Freed again without a record_stream: back in the cache at once.
  alloc.free(c);
  REQUIRE(dev.events.empty());
  REQUIRE(alloc.allocate(4096, 1) == a);
}

TEST_CASE("allocator waits for every recorded stream before reusing a block", "[cuda_allocator]") {
  FakeDevice dev{1024 * MiB};
  auto alloc = make(dev);
  void* a = alloc.allocate(3 * MiB, /*stream=*/0);  // a 20 MiB large-pool segment
  alloc.record_stream(a, 5);
  alloc.record_stream(a, 6);
  alloc.free(a);
  REQUIRE(dev.events.size() == 2);
  dev.finish(5);
  void* b = alloc.allocate(3 * MiB, 0);  // stream 6 may still use a: cut from the rest of the segment
  REQUIRE(b != a);
  REQUIRE(alloc.stats().pending_frees == 1);
  REQUIRE(dev.events.size() == 1);  // stream 5's event is done and gone
  dev.finish(6);
  void* c = alloc.allocate(3 * MiB, 0);
  REQUIRE(c == a);
  REQUIRE(alloc.stats().pending_frees == 0);
  REQUIRE(dev.allocs == 1);
  alloc.free(b);
  alloc.free(c);
  alloc.empty_cache();
  REQUIRE(alloc.stats().reserved == 0);
  REQUIRE(dev.used == 0);
}

TEST_CASE("allocator: empty_cache waits for pending blocks, then returns their segments", "[cuda_allocator]") {
  FakeDevice dev{1024 * MiB};
  auto alloc = make(dev);
  void* a = alloc.allocate(4096, 1);
  void* big = alloc.allocate(12 * MiB, 1);  // a segment of its own
  alloc.record_stream(a, 2);
  alloc.record_stream(big, 3);
  alloc.free(a);
  alloc.free(big);
  REQUIRE(alloc.stats().pending_frees == 2);
  REQUIRE(alloc.stats().reserved == 14 * MiB);
  alloc.empty_cache();
  const AllocatorStats s = alloc.stats();
  REQUIRE(dev.event_waits == 2);
  REQUIRE(dev.events.empty());
  REQUIRE(s.pending_frees == 0);
  REQUIRE(s.reserved == 0);
  REQUIRE(s.segments == 0);
  REQUIRE(dev.used == 0);
  REQUIRE(dev.frees == 2);
}

TEST_CASE("allocator waits for pending blocks before giving up on a full device", "[cuda_allocator]") {
  FakeDevice dev{30 * MiB};
  auto alloc = make(dev);
  void* a = alloc.allocate(15 * MiB, 1);  // a 16 MiB segment
  alloc.record_stream(a, 2);
  alloc.free(a);
  void* b = alloc.allocate(20 * MiB, 1);  // no room: wait for stream 2, flush, retry
  REQUIRE(b != nullptr);
  const AllocatorStats s = alloc.stats();
  REQUIRE(dev.event_waits == 1);
  REQUIRE(s.pending_frees == 0);
  REQUIRE(s.cache_flushes == 1);
  REQUIRE(s.reserved == 20 * MiB);
  REQUIRE(s.ooms == 0);
  alloc.free(b);
}

TEST_CASE("allocator: a pending block does not merge with its freed neighbours", "[cuda_allocator]") {
  FakeDevice dev{1024 * MiB};
  auto alloc = make(dev);
  void* a = alloc.allocate(1024, 1);
  void* b = alloc.allocate(1024, 1);
  void* c = alloc.allocate(1024, 1);
  REQUIRE(addr(b) == addr(a) + 1024);
  alloc.record_stream(b, 9);
  alloc.free(b);
  alloc.free(a);
  alloc.free(c);
  // a and c are free but b between them is not: a 2 KiB request cannot use a's place.
  void* d = alloc.allocate(2048, 1);
  REQUIRE(addr(d) != addr(a));
  REQUIRE(addr(d) != addr(b));
  alloc.free(d);
  dev.finish(9);
  void* e = alloc.allocate(3072, 1);  // all merged again: the segment's start
  REQUIRE(e == a);
  alloc.free(e);
  alloc.record_stream(nullptr, 3);      // ignored
  alloc.record_stream(e, 3);            // not live any more: ignored
  alloc.free(alloc.allocate(512, 1));
  REQUIRE(dev.events.empty());
}

TEST_CASE("allocator tracks current and peak bytes", "[cuda_allocator]") {
  FakeDevice dev{1024 * MiB};
  auto alloc = make(dev);
  void* a = alloc.allocate(3 * MiB);
  void* b = alloc.allocate(1000);
  REQUIRE(alloc.stats().allocated == 3 * MiB + 1024);
  alloc.free(a);
  AllocatorStats s = alloc.stats();
  REQUIRE(s.allocated == 1024);
  REQUIRE(s.peak_allocated == 3 * MiB + 1024);
  REQUIRE(s.reserved == 22 * MiB);
  REQUIRE(s.peak_reserved == 22 * MiB);
  alloc.reset_peak_stats();
  REQUIRE(alloc.stats().peak_allocated == 1024);
  alloc.free(b);
  alloc.empty_cache();
  s = alloc.stats();
  REQUIRE(s.reserved == 0);
  REQUIRE(s.peak_reserved == 22 * MiB);  // reset_peak set it to the then-current 22 MiB
  REQUIRE(s.raw_allocs == 2);
  REQUIRE(s.raw_frees == 2);
  const std::string text = alloc.summary();
  REQUIRE(text.find("allocated") != std::string::npos);
  REQUIRE(text.find("22.00 MiB") != std::string::npos);
  REQUIRE(text.find("cudaMalloc") != std::string::npos);
}

TEST_CASE("allocator frees its cache and retries before running out of memory", "[cuda_allocator]") {
  FakeDevice dev{30 * MiB};
  auto alloc = make(dev);
  void* a = alloc.allocate(15 * MiB);  // a 16 MiB segment
  alloc.free(a);                        // cached
  void* b = alloc.allocate(20 * MiB);  // does not fit beside the cache: flush, retry
  REQUIRE(b != nullptr);
  AllocatorStats s = alloc.stats();
  REQUIRE(s.cache_flushes == 1);
  REQUIRE(s.raw_frees == 1);
  REQUIRE(s.reserved == 20 * MiB);
  REQUIRE(s.ooms == 0);
}

TEST_CASE("allocator raises OutOfMemoryError with the numbers and what to try", "[cuda_allocator]") {
  FakeDevice dev{30 * MiB};
  auto alloc = make(dev);
  void* held = alloc.allocate(4 * MiB);
  require_throws<OutOfMemoryError>([&] { alloc.allocate(100 * MiB); }, "tried to allocate 100.00 MiB");
  try {
    alloc.allocate(100 * MiB);
    FAIL("expected OutOfMemoryError");
  } catch (const Error& e) {  // an ember::Error: RuntimeError in Python
    const std::string msg = e.what();
    INFO(msg);
    REQUIRE(msg.find("CUDA out of memory on cuda:0") != std::string::npos);
    REQUIRE(msg.find("30.00 MiB in total") != std::string::npos);
    REQUIRE(msg.find("10.00 MiB is free") != std::string::npos);
    REQUIRE(msg.find("4.00 MiB allocated by tensors") != std::string::npos);
    REQUIRE(msg.find("20.00 MiB reserved") != std::string::npos);
    REQUIRE(msg.find("smaller batch size") != std::string::npos);
    REQUIRE(msg.find("memory_summary") != std::string::npos);
  }
  const AllocatorStats s = alloc.stats();
  REQUIRE(s.ooms == 2);
  REQUIRE(s.cache_flushes == 2);
  // The failed requests left everything as it was.
  REQUIRE(s.allocated == 4 * MiB);
  REQUIRE(alloc.block_size(held) == 4 * MiB);
  alloc.free(held);
}

TEST_CASE("format_bytes", "[cuda_allocator]") {
  REQUIRE(format_bytes(0) == "0 bytes");
  REQUIRE(format_bytes(512) == "512 bytes");
  REQUIRE(format_bytes(1536) == "1.50 KiB");
  REQUIRE(format_bytes(20 * MiB) == "20.00 MiB");
  REQUIRE(format_bytes(size_t{3} << 30) == "3.00 GiB");
}

// ---- architecture check

TEST_CASE("compiled architectures run on the GPUs CUDA allows", "[cuda_arch]") {
  REQUIRE(parse_arch_list("sm_80;sm_90;compute_90") == std::vector<std::string>{"sm_80", "sm_90", "compute_90"});
  REQUIRE(parse_arch_list("").empty());
  REQUIRE(arch_runs_on("sm_80", 8, 0));
  REQUIRE(arch_runs_on("sm_80", 8, 6));       // same major, newer minor
  REQUIRE_FALSE(arch_runs_on("sm_86", 8, 0));
  REQUIRE_FALSE(arch_runs_on("sm_80", 9, 0));  // SASS does not cross majors
  REQUIRE(arch_runs_on("compute_80", 9, 0));   // PTX is JIT-compiled for newer GPUs
  REQUIRE(arch_runs_on("compute_90", 12, 0));
  REQUIRE_FALSE(arch_runs_on("compute_90", 8, 9));
  REQUIRE(arch_runs_on("sm_90a", 9, 0));
  REQUIRE_FALSE(arch_runs_on("sm_90a", 10, 0));
  REQUIRE_FALSE(arch_runs_on("bogus", 9, 0));
}

TEST_CASE("an uncompiled GPU architecture gets the rebuild command", "[cuda_arch]") {
  const std::vector<std::string> build{"sm_80", "sm_86", "compute_86"};
  REQUIRE(arch_mismatch(0, "NVIDIA H200", 9, 0, build).empty());  // PTX 8.6 runs on 9.0
  const std::vector<std::string> sass_only{"sm_90"};
  const std::string msg = arch_mismatch(1, "Tesla T4", 7, 5, sass_only);
  REQUIRE(msg.find("GPU 1 (Tesla T4) has compute capability 7.5") != std::string::npos);
  REQUIRE(msg.find("sm_90") != std::string::npos);
  REQUIRE(msg.find("EMBER_CUDA_ARCHS=75 pip install .") != std::string::npos);
  REQUIRE(msg.find("no kernel image") != std::string::npos);
}

// ---- staged copies, with host memory posing as device memory

namespace {

struct FakeMemcpy : MemcpyBackend {
  int to_device_calls = 0, to_host_calls = 0, on_device_calls = 0;
  void to_device(void* dst, const void* src, size_t n) override {
    ++to_device_calls;
    std::memcpy(dst, src, n);
  }
  void to_host(void* dst, const void* src, size_t n) override {
    ++to_host_calls;
    std::memcpy(dst, src, n);
  }
  void on_device(void* dst, const void* src, size_t n) override {
    ++on_device_calls;
    std::memcpy(dst, src, n);
  }
};

// A "CUDA" tensor whose memory is the CPU tensor `backing`'s.
Tensor on_fake_device(const Tensor& backing, Shape shape, Strides strides, int64_t offset) {
  Storage s(backing.storage().data(), backing.storage().nbytes(), Device(DeviceType::CUDA, 0), backing.impl_ptr());
  return Tensor(std::make_shared<TensorImpl>(s, std::move(shape), std::move(strides), offset, backing.dtype()));
}

Tensor on_fake_device(const Tensor& backing) {
  return on_fake_device(backing, backing.shape(), backing.strides(), 0);
}

}  // namespace

TEST_CASE("staged copy: dense host-to-device is one memcpy", "[cuda_copy]") {
  FakeMemcpy mem;
  Tensor backing = values({0, 0, 0, 0, 0, 0}, {2, 3});
  Tensor dev = on_fake_device(backing);
  REQUIRE(dev.device().is_cuda());
  staged_copy(dev, values({1, 2, 3, 4, 5, 6}, {2, 3}), mem);
  REQUIRE(mem.to_device_calls == 1);
  REQUIRE(mem.to_host_calls == 0);
  require_values(backing, {1, 2, 3, 4, 5, 6});
}

TEST_CASE("staged copy: host-to-device casts and broadcasts on the host", "[cuda_copy]") {
  FakeMemcpy mem;
  Tensor backing = values({0, 0, 0, 0, 0, 0}, {2, 3});
  Tensor dev = on_fake_device(backing);
  staged_copy(dev, values({1.5, 2.5, 3.5}, {3}, DType::Float64), mem);
  REQUIRE(mem.to_device_calls == 1);
  require_values(backing, {1.5, 2.5, 3.5, 1.5, 2.5, 3.5});
}

TEST_CASE("staged copy: a strided device destination keeps the gaps", "[cuda_copy]") {
  FakeMemcpy mem;
  Tensor backing = values(std::vector<double>(12, -1), {3, 4});
  // Columns 1..2 of a 3x4 matrix: shape [3, 2], strides [4, 1], offset 1.
  Tensor dev = on_fake_device(backing, {3, 2}, {4, 1}, 1);
  staged_copy(dev, values({1, 2, 3, 4, 5, 6}, {3, 2}), mem);
  REQUIRE(mem.to_host_calls == 1);
  REQUIRE(mem.to_device_calls == 1);
  require_values(backing, {-1, 1, 2, -1, -1, 3, 4, -1, -1, 5, 6, -1});
}

TEST_CASE("staged copy: strided device source to the host", "[cuda_copy]") {
  FakeMemcpy mem;
  Tensor backing = values({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  Tensor dev_t = on_fake_device(backing, {4, 3}, {1, 4}, 0);  // the transpose
  Tensor host = empty({4, 3}, DType::Float64);
  staged_copy(host, dev_t, mem);
  REQUIRE(mem.to_host_calls == 1);
  require_values(host, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});

  Tensor dense = empty({3, 4}, DType::Float32);
  FakeMemcpy mem2;
  staged_copy(dense, on_fake_device(backing), mem2);
  REQUIRE(mem2.to_host_calls == 1);
  require_values(dense, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
}

TEST_CASE("staged copy: device to device, dense and strided with a cast", "[cuda_copy]") {
  FakeMemcpy mem;
  Tensor src_b = values({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor dst_b = values({0, 0, 0, 0, 0, 0}, {2, 3});
  Tensor dst = on_fake_device(dst_b);
  staged_copy(dst, on_fake_device(src_b), mem);
  REQUIRE(mem.on_device_calls == 1);
  require_values(dst_b, {1, 2, 3, 4, 5, 6});

  FakeMemcpy mem2;
  Tensor dst64_b = values({0, 0, 0, 0, 0, 0}, {3, 2}, DType::Float64);
  Tensor dst64 = on_fake_device(dst64_b);
  staged_copy(dst64, on_fake_device(src_b, {3, 2}, {1, 3}, 0), mem2);  // transpose, float32 -> float64
  REQUIRE(mem2.on_device_calls == 0);
  require_values(dst64_b, {1, 4, 2, 5, 3, 6});
}

TEST_CASE("staged copy: 0-d and empty tensors", "[cuda_copy]") {
  FakeMemcpy mem;
  Tensor backing = values({0}, {});
  Tensor dev = on_fake_device(backing);
  staged_copy(dev, values({7}, {}), mem);
  require_values(backing, {7});
  Tensor empty_backing = empty({0, 3});
  Tensor dev_empty = on_fake_device(empty_backing);
  FakeMemcpy mem2;
  staged_copy(dev_empty, empty({0, 3}), mem2);
  REQUIRE(mem2.to_device_calls + mem2.to_host_calls + mem2.on_device_calls == 0);
}

TEST_CASE("allocator: a memory fraction caps what it reserves, after flushing its cache", "[cuda_allocator]") {
  FakeDevice dev{100 * MiB};
  auto alloc = make(dev);
  REQUIRE(allocator_memory_fraction(alloc) == 1.0);
  set_allocator_memory_fraction(alloc, 0.25, 100 * MiB);  // 25 MiB for this process
  REQUIRE(allocator_memory_fraction(alloc) == 0.25);
  REQUIRE(allocator_memory_limit(alloc) == 25 * MiB);
  void* a = alloc.allocate(12 * MiB);  // a 12 MiB segment of its own
  void* b = alloc.allocate(12 * MiB);  // 24 MiB reserved: still within the cap
  require_throws<OutOfMemoryError>([&] { alloc.allocate(4 * MiB); }, "memory fraction 0.25");
  try {
    alloc.allocate(4 * MiB);
  } catch (const OutOfMemoryError& e) {
    const std::string msg = e.what();
    INFO(msg);
    REQUIRE(msg.find("tried to allocate 4.00 MiB (as part of a new 20.00 MiB segment)") != std::string::npos);
    REQUIRE(msg.find("may use only 25.00 MiB") != std::string::npos);
    REQUIRE(msg.find("set_per_process_memory_fraction") != std::string::npos);
  }
  // The device itself had room: only the cap refused.
  REQUIRE(dev.used == 24 * MiB);
  REQUIRE(alloc.stats().ooms == 2);
  // Freed blocks are cached; the cap flushes them to make room.
  alloc.free(a);
  alloc.free(b);
  void* c = alloc.allocate(20 * MiB);
  REQUIRE(c != nullptr);
  REQUIRE(alloc.stats().reserved == 20 * MiB);
  REQUIRE(dev.used == 20 * MiB);
  alloc.free(c);
  // Raising the fraction lifts the cap; 0 refuses everything.
  set_allocator_memory_fraction(alloc, 1.0, 100 * MiB);
  void* big = alloc.allocate(60 * MiB);
  REQUIRE(big != nullptr);
  alloc.free(big);
  alloc.empty_cache();
  set_allocator_memory_fraction(alloc, 0.0, 100 * MiB);
  require_throws<OutOfMemoryError>([&] { alloc.allocate(1); }, "may use only 0 bytes");
  require_throws<ValueError>([&] { set_allocator_memory_fraction(alloc, 1.5, 100 * MiB); },
                             "set_per_process_memory_fraction: invalid fraction 1.5");
  require_throws<ValueError>([&] { set_allocator_memory_fraction(alloc, -0.1, 100 * MiB); }, "within [0, 1]");
}

TEST_CASE("allocator: a memory fraction belongs to one allocator", "[cuda_allocator]") {
  FakeDevice dev{100 * MiB};
  auto capped = make(dev);
  set_allocator_memory_fraction(capped, 0.1, 100 * MiB);
  {
    auto other = make(dev);
    REQUIRE(allocator_memory_fraction(other) == 1.0);
    void* p = other.allocate(30 * MiB);
    other.free(p);
  }
  REQUIRE(allocator_memory_fraction(capped) == 0.1);
  // A new allocator (possibly at the same address) starts uncapped.
  auto fresh = make(dev);
  REQUIRE(allocator_memory_fraction(fresh) == 1.0);
}
