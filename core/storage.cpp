#include <ember/core/storage.h>

#include <sys/mman.h>

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <ember/core/error.h>
#include <ember/cuda/cuda_api.h>

namespace ember {

namespace {

// Large CPU blocks (activations, gradients) are 2 MiB-aligned, backed by huge
// pages, and kept in a bounded cache when freed: a training step frees and
// re-requests the same sizes, and fresh memory from the OS costs a page fault
// per page on first touch, which dominated elementwise ops on big tensors.
constexpr size_t kLargeBlock = size_t{1} << 20;
constexpr size_t kHugePage = size_t{2} << 20;

class LargeBlockCache {
 public:
  LargeBlockCache() {
    const char* env = std::getenv("EMBER_CPU_CACHE_MB");
    limit_ = (env ? std::strtoull(env, nullptr, 10) : 512) << 20;
  }
  ~LargeBlockCache() { clear(); }

  void* take(size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(size);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    cached_ -= size;
    return p;
  }

  void give(void* p, size_t size) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_ + size <= limit_) {
        free_[size].push_back(p);
        cached_ += size;
        return;
      }
    }
    std::free(p);
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [size, blocks] : free_) {
      for (void* p : blocks) std::free(p);
    }
    free_.clear();
    cached_ = 0;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t cached_ = 0;
  size_t limit_ = 0;
};

LargeBlockCache& large_blocks() {
  static auto* cache = new LargeBlockCache();  // leaked: tensors may be freed during exit
  return *cache;
}

[[noreturn]] void cpu_oom(size_t nbytes) {
  throw Error(str("out of memory: could not allocate ", nbytes, " bytes (", nbytes >> 20, " MiB) on the CPU"));
}

}  // namespace

std::shared_ptr<void> cpu_allocate(size_t nbytes) {
  if (nbytes < kLargeBlock) {
    void* p = std::aligned_alloc(64, ((nbytes ? nbytes : 1) + 63) / 64 * 64);
    if (!p) cpu_oom(nbytes);
    return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  }
  const size_t size = (nbytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = large_blocks().take(size);
  if (!p) {
    p = std::aligned_alloc(kHugePage, size);
    if (!p) {
      large_blocks().clear();
      p = std::aligned_alloc(kHugePage, size);
    }
    if (!p) cpu_oom(nbytes);
    madvise(p, size, MADV_HUGEPAGE);  // a hint: fine if transparent huge pages are off
  }
  return std::shared_ptr<void>(p, [size](void* q) { large_blocks().give(q, size); });
}

void cpu_empty_cache() { large_blocks().clear(); }

Storage::Storage(size_t nbytes, Device device) : impl_(std::make_shared<StorageImpl>()) {
  impl_->data = device.is_cpu() ? cpu_allocate(nbytes) : cuda::allocate(nbytes, device.index);
  impl_->nbytes = nbytes;
  impl_->device = device;
}

Storage::Storage(void* data, size_t nbytes, Device device, std::shared_ptr<void> owner)
    : impl_(std::make_shared<StorageImpl>()) {
  impl_->data = std::shared_ptr<void>(owner, data);  // aliasing constructor: owner keeps data alive
  impl_->nbytes = nbytes;
  impl_->device = device;
}

}  // namespace ember
