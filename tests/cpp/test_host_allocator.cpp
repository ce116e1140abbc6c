// The pinned host memory cache (cuda/host_allocator.h) against a fake: plain
// malloc'd memory for the pinned pages and events that complete when told.
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include <ember/core/error.h>
#include <ember/cuda/host_allocator.h>

#include "catch.h"

using namespace ember;
using namespace ember::cuda;

namespace {

struct FakeHost {
  size_t capacity = size_t{1} << 30;
  size_t used = 0;
  size_t allocs = 0;
  size_t frees = 0;
  std::map<uintptr_t, bool> events;  // id -> completed
  uintptr_t next_event = 1;
  size_t destroyed = 0;
  void finish_all() {
    for (auto& kv : events) kv.second = true;
  }
};

class FakeBackend : public AllocatorBackend {
 public:
  explicit FakeBackend(FakeHost* host) : host_(host) {}
  void* raw_alloc(size_t n) override {
    if (host_->used + n > host_->capacity) return nullptr;
    void* p = std::malloc(n);
    sizes_[p] = n;
    host_->used += n;
    host_->allocs += 1;
    return p;
  }
  void raw_free(void* p) override {
    host_->used -= sizes_.at(p);
    sizes_.erase(p);
    host_->frees += 1;
    std::free(p);
  }
  MemInfo mem_info() override { return {}; }
  void* record_event(StreamId) override {
    const uintptr_t id = host_->next_event++;
    host_->events[id] = false;
    return reinterpret_cast<void*>(id);
  }
  bool event_done(void* e) override { return host_->events.at(reinterpret_cast<uintptr_t>(e)); }
  void wait_event(void* e) override { host_->events.at(reinterpret_cast<uintptr_t>(e)) = true; }
  void destroy_event(void* e) override {
    host_->events.erase(reinterpret_cast<uintptr_t>(e));
    host_->destroyed += 1;
  }

 private:
  FakeHost* host_;
  std::map<void*, size_t> sizes_;
};

}  // namespace

TEST_CASE("host allocator: power-of-two sizes, reuse of freed blocks", "[host_allocator]") {
  FakeHost host;
  HostAllocator alloc(std::make_unique<FakeBackend>(&host));
  CHECK(HostAllocator::round_size(1) == 512);
  CHECK(HostAllocator::round_size(512) == 512);
  CHECK(HostAllocator::round_size(513) == 1024);
  CHECK(HostAllocator::round_size(802816) == (size_t{1} << 20));
  CHECK(alloc.allocate(0) == nullptr);
  void* a = alloc.allocate(1000);
  REQUIRE(a != nullptr);
  CHECK(alloc.owns(a));
  CHECK(alloc.owns(static_cast<char*>(a) + 1023));
  CHECK_FALSE(alloc.owns(static_cast<char*>(a) + 1024));
  CHECK(alloc.stats().allocated == 1024);
  alloc.free(a);
  CHECK_FALSE(alloc.owns(a));
  CHECK(alloc.stats().allocated == 0);
  CHECK(alloc.stats().reserved == 1024);
  void* b = alloc.allocate(900);  // same rounded size: the cached block, no new pinning
  CHECK(b == a);
  CHECK(host.allocs == 1);
  void* c = alloc.allocate(3000);  // another size: pinned anew
  CHECK(c != a);
  CHECK(host.allocs == 2);
  alloc.free(b);
  alloc.free(c);
  alloc.empty_cache();
  CHECK(host.frees == 2);
  CHECK(alloc.stats().reserved == 0);
}

TEST_CASE("host allocator: a block is not reused before its asynchronous copies finished", "[host_allocator]") {
  FakeHost host;
  HostAllocator alloc(std::make_unique<FakeBackend>(&host));
  void* a = alloc.allocate(4096);
  alloc.record_use(static_cast<char*>(a) + 100, /*stream=*/7);  // a view's address inside the block
  alloc.free(a);
  CHECK(alloc.stats().pending_frees == 1);
  void* b = alloc.allocate(4096);
  CHECK(b != a);  // the copy may still read a
  CHECK(host.allocs == 2);
  host.finish_all();
  alloc.free(b);
  void* c = alloc.allocate(4096);  // now a is back in the cache
  CHECK((c == a || c == b));
  CHECK(alloc.stats().pending_frees == 0);
  CHECK(host.destroyed == 1);
  alloc.free(c);
}

TEST_CASE("host allocator: a buffer reused every step keeps no finished events", "[host_allocator]") {
  FakeHost host;
  HostAllocator alloc(std::make_unique<FakeBackend>(&host));
  void* a = alloc.allocate(1 << 20);
  for (int step = 0; step < 50; ++step) {  // no other allocation in between
    alloc.record_use(a, 1);
    host.finish_all();
  }
  CHECK(host.events.size() == 1);  // the last copy's
  CHECK(host.destroyed == 49);
  alloc.free(alloc.allocate(100));  // an allocation collects it too
  CHECK(host.events.empty());
  alloc.free(a);
  CHECK(alloc.stats().pending_frees == 0);
}

TEST_CASE("host allocator: memory this allocator did not hand out is ignored", "[host_allocator]") {
  FakeHost host;
  HostAllocator alloc(std::make_unique<FakeBackend>(&host));
  int local = 0;
  alloc.record_use(&local, 1);
  CHECK(host.events.empty());
  CHECK_FALSE(alloc.owns(&local));
  alloc.free(&local);  // not ours: nothing happens
  CHECK(alloc.stats().reserved == 0);
}

TEST_CASE("host allocator: out of pinned memory releases the cache, retries, then raises", "[host_allocator]") {
  FakeHost host;
  host.capacity = 4096;
  HostAllocator alloc(std::make_unique<FakeBackend>(&host));
  void* a = alloc.allocate(2048);
  alloc.free(a);  // cached: 2048 of the 4096 stay pinned
  void* b = alloc.allocate(4096);  // fits only once the cache is released
  REQUIRE(b != nullptr);
  CHECK(host.frees == 1);
  bool raised = false;
  std::string message;
  try {
    alloc.allocate(8192);
  } catch (const OutOfMemoryError& e) {
    raised = true;
    message = e.what();
  }
  CHECK(raised);
  CHECK(message.find("pin_memory: could not allocate 8192 bytes of page-locked host memory") != std::string::npos);
  alloc.free(b);
}
