#include <ember/cuda/host_allocator.h>

#include <algorithm>

#include <ember/core/error.h>

namespace ember::cuda {

namespace {
// The block of `blocks` (by address) that holds p and is handed out, or null.
template <class Blocks>
auto live_block(Blocks& blocks, uintptr_t p) -> decltype(&blocks.begin()->second) {
  auto it = blocks.upper_bound(p);
  if (it == blocks.begin()) return nullptr;
  --it;
  return p < it->first + it->second.size && it->second.in_use ? &it->second : nullptr;
}
}  // namespace

HostAllocator::HostAllocator(std::unique_ptr<AllocatorBackend> backend) : backend_(std::move(backend)) {}

HostAllocator::~HostAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached();
}

size_t HostAllocator::round_size(size_t nbytes) {
  size_t size = kMinBlock;
  while (size < nbytes) size <<= 1;
  return size;
}

void* HostAllocator::allocate(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  const size_t size = round_size(nbytes);
  std::lock_guard<std::mutex> lock(mutex_);
  collect_pending();
  if (auto it = free_.find(size); it != free_.end()) {
    const uintptr_t p = it->second;
    free_.erase(it);
    blocks_[p].in_use = true;
    stats_.allocated += size;
    return reinterpret_cast<void*>(p);
  }
  void* p = backend_->raw_alloc(size);
  if (!p) {
    release_cached();
    p = backend_->raw_alloc(size);
  }
  if (!p) {
    throw OutOfMemoryError(str("pin_memory: could not allocate ", nbytes, " bytes of page-locked host memory (",
                               stats_.reserved >> 20, " MiB already pinned by ember). Free pinned tensors, use ",
                               "smaller batches, or leave pin_memory off"));
  }
  Block& b = blocks_[reinterpret_cast<uintptr_t>(p)];
  b.size = size;
  b.in_use = true;
  stats_.allocated += size;
  stats_.reserved += size;
  stats_.raw_allocs += 1;
  return p;
}

void HostAllocator::free(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == blocks_.end() || !it->second.in_use) return;
  Block& b = it->second;
  b.in_use = false;
  stats_.allocated -= b.size;
  if (b.events.empty()) {
    free_.emplace(b.size, it->first);
  } else {
    pending_.push_back(it->first);
    stats_.pending_frees = pending_.size();
  }
}

void HostAllocator::record_use(const void* ptr, StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  Block* b = live_block(blocks_, reinterpret_cast<uintptr_t>(ptr));
  if (!b) return;
  // A buffer pinned once and copied from every step would otherwise gather
  // one event per copy.
  drop_finished(b->events);
  b->events.push_back(backend_->record_event(stream));
}

bool HostAllocator::owns(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_block(blocks_, reinterpret_cast<uintptr_t>(ptr)) != nullptr;
}

void HostAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  collect_pending();
  release_cached();
}

HostAllocatorStats HostAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

bool HostAllocator::drop_finished(std::vector<void*>& events) {
  events.erase(std::remove_if(events.begin(), events.end(),
                              [this](void* e) {
                                if (!backend_->event_done(e)) return false;
                                backend_->destroy_event(e);
                                return true;
                              }),
               events.end());
  return events.empty();
}

void HostAllocator::collect_pending() {
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [this](uintptr_t p) {
                                  Block& b = blocks_[p];
                                  if (!drop_finished(b.events)) return false;
                                  free_.emplace(b.size, p);
                                  return true;
                                }),
                 pending_.end());
  // Blocks still in use drop the events of copies that have finished too.
  for (auto& [p, b] : blocks_) {
    if (b.in_use) drop_finished(b.events);
  }
  stats_.pending_frees = pending_.size();
}

void HostAllocator::release_cached() {
  for (const auto& [size, p] : free_) {
    backend_->raw_free(reinterpret_cast<void*>(p));
    stats_.reserved -= size;
    blocks_.erase(p);
  }
  free_.clear();
}

}  // namespace ember::cuda
