// The caching allocator of one CUDA device. cudaMalloc and cudaFree are slow
// and synchronize the device, so memory is requested from the device in large
// segments, cut into blocks, and kept when tensors free it: a training step
// that repeats the previous step's sizes never calls cudaMalloc.
//
// - Sizes are rounded up to 512 bytes. Requests up to 1 MiB come from the
//   small pool (2 MiB segments); larger ones from the large pool (20 MiB
//   segments below 10 MiB, a segment of their own rounded to 2 MiB above).
// - Blocks belong to the stream they were allocated on and are only reused by
//   that stream, so a freed block is never handed to a kernel on another
//   stream while work queued earlier may still use it.
// - A block that other streams used too (record_stream, as
//   Tensor.record_stream) is not reused when it is freed: the allocator
//   records an event on each of those streams then, and returns the block to
//   the cache once all of them have completed (queried at later allocations;
//   waited for by empty_cache and before giving up on a full device).
// - A block larger than the request is split; a freed block merges with free
//   neighbours of its segment.
// - When the device is out of memory, the cache is released and the request
//   retried once; then OutOfMemoryError says what was asked, what the GPU has
//   and what ember holds.
//
// The device is reached through AllocatorBackend only, so this file needs no
// CUDA headers and its tests run with a fake device on any machine.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace ember::cuda {

// A stream's identity (the cudaStream_t's value; 0 is the default stream).
using StreamId = uintptr_t;

// Raw device memory: cudaMalloc/cudaFree/cudaMemGetInfo in the CUDA build.
struct AllocatorBackend {
  virtual ~AllocatorBackend() = default;
  // nullptr when the device has no room; other failures throw.
  virtual void* raw_alloc(size_t nbytes) = 0;
  virtual void raw_free(void* ptr) = 0;
  struct MemInfo {
    size_t free = 0;
    size_t total = 0;
  };
  virtual MemInfo mem_info() = 0;
  // Events on streams (cudaEventRecord/Query/Synchronize/Destroy); the
  // handle is opaque to the allocator.
  virtual void* record_event(StreamId stream) = 0;
  virtual bool event_done(void* event) = 0;
  virtual void wait_event(void* event) = 0;
  virtual void destroy_event(void* event) = 0;
};

struct AllocatorStats {
  size_t allocated = 0;       // bytes in blocks handed to tensors (rounded sizes)
  size_t peak_allocated = 0;  // since creation or reset_peak_stats()
  size_t reserved = 0;        // bytes obtained from the device (allocated + cached)
  size_t peak_reserved = 0;
  size_t requested = 0;       // bytes asked for (unrounded) by live allocations
  size_t active_blocks = 0;
  size_t segments = 0;
  size_t raw_allocs = 0;      // cudaMalloc calls that succeeded
  size_t raw_frees = 0;
  size_t cache_flushes = 0;   // times an allocation released the cache to retry
  size_t ooms = 0;            // OutOfMemoryError raised
  size_t pending_frees = 0;   // freed blocks waiting for other streams' work (record_stream)
};

class CachingAllocator {
 public:
  static constexpr size_t kRound = 512;
  static constexpr size_t kSmallRequest = size_t{1} << 20;   // <= this: small pool
  static constexpr size_t kSmallSegment = size_t{2} << 20;
  static constexpr size_t kLargeSegment = size_t{20} << 20;  // for requests < kMidRequest
  static constexpr size_t kMidRequest = size_t{10} << 20;
  static constexpr size_t kLargeRound = size_t{2} << 20;

  CachingAllocator(std::unique_ptr<AllocatorBackend> backend, int device);
  ~CachingAllocator();  // returns cached segments; blocks still in use are leaked
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least nbytes for use on `stream` (nullptr for 0 bytes).
  void* allocate(size_t nbytes, StreamId stream = 0);
  // Returns a block from allocate() to the cache. Never throws.
  void free(void* ptr);
  // Marks the live block at ptr as used by `stream` too, so that free() holds
  // it back until the work queued on that stream by then has finished. No-op
  // for the block's own stream and for pointers that are not live blocks.
  void record_stream(void* ptr, StreamId stream);
  // Returns every fully free segment to the device.
  void empty_cache();
  AllocatorStats stats() const;
  void reset_peak_stats();
  // A text table of the stats, as ember.cuda.memory_summary() prints.
  std::string summary() const;
  // The rounded size of a live block (0 when ptr is not one).
  size_t block_size(void* ptr) const;

  static size_t round_size(size_t nbytes);
  // The segment size requested from the device for a rounded block size.
  static size_t segment_size(size_t rounded);

 private:
  struct Block;
  struct Pool;
  struct BlockOrder {
    bool operator()(const Block* a, const Block* b) const;
  };

  Block* find_free(Pool& pool, size_t size, StreamId stream);
  Block* new_segment(Pool& pool, size_t size, StreamId stream, size_t requested);
  void split(Block* block, size_t size);
  void free_block(Block* block);  // back into its pool, merged with free neighbours
  void process_pending();         // frees the pending blocks whose events completed
  void wait_pending();            // waits for every pending block's events, then frees them
  void release_cached();  // lock held
  [[noreturn]] void raise_oom(size_t requested, size_t rounded, size_t segment);

  std::unique_ptr<AllocatorBackend> backend_;
  int device_;
  mutable std::mutex mutex_;
  std::unique_ptr<Pool> small_;
  std::unique_ptr<Pool> large_;
  std::unordered_map<void*, Block*> live_;
  std::vector<Block*> pending_;  // freed, waiting for events on other streams
  AllocatorStats stats_;
};

}  // namespace ember::cuda
