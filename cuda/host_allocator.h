// The cache of pinned (page-locked) host memory behind Tensor.pin_memory().
// The GPU copies pinned memory by DMA without the host waiting, so a
// non_blocking copy from or to it returns at once; but then the block must not
// be reused while such a copy may still be running. So:
//
// - sizes are rounded up to a power of two (at least 512 bytes) and freed
//   blocks are kept by size: cudaHostAlloc is slow (it maps the pages for the
//   device), and a data loader pins a batch of the same size every step;
// - each asynchronous copy records an event on its stream for the block it
//   used (record_use, which also drops the block's finished events); a freed
//   block with such events goes back to the cache only once all of them have
//   completed (queried at later allocations);
// - when cudaHostAlloc fails, the cached blocks are released and the request
//   retried once, then OutOfMemoryError is raised.
//
// The memory and the events come through AllocatorBackend (raw_alloc is
// cudaHostAlloc there, raw_free cudaFreeHost; mem_info is unused), so this
// file needs no CUDA headers and its tests run on any machine.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <ember/cuda/caching_allocator.h>

namespace ember::cuda {

struct HostAllocatorStats {
  size_t allocated = 0;      // bytes in blocks handed out (rounded sizes)
  size_t reserved = 0;       // bytes pinned: handed out, cached and pending
  size_t raw_allocs = 0;     // successful cudaHostAlloc calls
  size_t pending_frees = 0;  // freed blocks waiting for their copies to finish
};

class HostAllocator {
 public:
  static constexpr size_t kMinBlock = 512;

  explicit HostAllocator(std::unique_ptr<AllocatorBackend> backend);
  ~HostAllocator();  // returns cached blocks; blocks in use are leaked
  HostAllocator(const HostAllocator&) = delete;
  HostAllocator& operator=(const HostAllocator&) = delete;

  // A block of at least nbytes (nullptr for 0 bytes).
  void* allocate(size_t nbytes);
  // Returns a block from allocate() to the cache, at once or once its copies
  // have finished. Never throws.
  void free(void* ptr);
  // Marks the block holding ptr (any address inside it) as used by work just
  // queued on `stream`. No-op for memory this allocator did not hand out.
  void record_use(const void* ptr, StreamId stream);
  // Whether ptr lies in a block this allocator handed out and has not freed.
  bool owns(const void* ptr) const;
  // Unpins every cached block (pending ones stay until their copies finish).
  void empty_cache();
  HostAllocatorStats stats() const;

  static size_t round_size(size_t nbytes);

 private:
  struct Block {
    size_t size = 0;
    bool in_use = false;
    std::vector<void*> events;  // copies that may still use the block
  };

  // Destroys the events whose copies have finished; true when none is left.
  bool drop_finished(std::vector<void*>& events);  // lock held
  void collect_pending();  // lock held
  void release_cached();   // lock held

  std::unique_ptr<AllocatorBackend> backend_;
  mutable std::mutex mutex_;
  std::map<uintptr_t, Block> blocks_;                  // every pinned block, by address
  std::multimap<size_t, uintptr_t> free_;             // cached blocks, by size
  std::vector<uintptr_t> pending_;                     // freed, copies still running
  HostAllocatorStats stats_;
};

}  // namespace ember::cuda
