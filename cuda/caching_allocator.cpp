#include <ember/cuda/caching_allocator.h>

#include <cstdio>
#include <vector>

#include <ember/core/error.h>
#include <ember/cuda/format.h>
#include <ember/cuda/memory_fraction.h>

namespace ember::cuda {

namespace {

// Each allocator's memory fraction (see memory_fraction.h), by allocator.
struct FractionCap {
  double fraction = 1.0;
  size_t limit = 0;
};

struct FractionCaps {
  std::mutex mutex;
  std::unordered_map<const CachingAllocator*, FractionCap> caps;
};

FractionCaps& fraction_caps() {
  static FractionCaps* caps = new FractionCaps();  // never destroyed: allocators may outlive static teardown
  return *caps;
}

// The allocator's cap, or {1.0, 0} when none is set.
FractionCap cap_of(const CachingAllocator* allocator) {
  FractionCaps& c = fraction_caps();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.caps.find(allocator);
  return it == c.caps.end() ? FractionCap{} : it->second;
}

}  // namespace

void set_allocator_memory_fraction(CachingAllocator& allocator, double fraction, size_t total_bytes) {
  EMBER_CHECK(fraction >= 0.0 && fraction <= 1.0, ValueError, "set_per_process_memory_fraction: invalid fraction ",
              fraction, "; it must be within [0, 1]");
  FractionCaps& c = fraction_caps();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.caps[&allocator] = FractionCap{fraction, static_cast<size_t>(fraction * static_cast<double>(total_bytes))};
}

double allocator_memory_fraction(const CachingAllocator& allocator) { return cap_of(&allocator).fraction; }

size_t allocator_memory_limit(const CachingAllocator& allocator) { return cap_of(&allocator).limit; }

// A piece of a segment. Blocks of one segment form a list in address order
// (prev/next), so a freed block can find and absorb free neighbours.
struct CachingAllocator::Block {
  char* ptr = nullptr;
  size_t size = 0;
  size_t requested = 0;  // what the caller asked for, while allocated
  StreamId stream = 0;
  Pool* pool = nullptr;
  bool allocated = false;  // also while pending: a pending block must not merge
  Block* prev = nullptr;
  Block* next = nullptr;
  std::vector<StreamId> stream_uses;  // other streams that used it (record_stream)
  std::vector<void*> events;          // while pending: one per stream use, not yet completed
};

// Free blocks ordered by (stream, size, address): lower_bound finds the
// smallest block of the stream that fits.
bool CachingAllocator::BlockOrder::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream) return a->stream < b->stream;
  if (a->size != b->size) return a->size < b->size;
  return a->ptr < b->ptr;
}

struct CachingAllocator::Pool {
  const char* name;
  bool small;
  std::set<Block*, BlockOrder> free;
  size_t segments = 0;
};

CachingAllocator::CachingAllocator(std::unique_ptr<AllocatorBackend> backend, int device)
    : backend_(std::move(backend)),
      device_(device),
      small_(new Pool{"small", true, {}}),
      large_(new Pool{"large", false, {}}) {}

CachingAllocator::~CachingAllocator() {
  {
    FractionCaps& c = fraction_caps();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.caps.erase(this);
  }
  try {
    wait_pending();
    release_cached();
  } catch (...) {
    // The device may already be gone at exit; nothing useful to do.
  }
  for (Pool* pool : {small_.get(), large_.get()}) {
    for (Block* b : pool->free) delete b;
  }
  for (auto& kv : live_) delete kv.second;
  for (Block* b : pending_) delete b;
}

size_t CachingAllocator::round_size(size_t nbytes) {
  if (nbytes < kRound) return kRound;
  return (nbytes + kRound - 1) / kRound * kRound;
}

size_t CachingAllocator::segment_size(size_t rounded) {
  if (rounded <= kSmallRequest) return kSmallSegment;
  if (rounded < kMidRequest) return kLargeSegment;
  return (rounded + kLargeRound - 1) / kLargeRound * kLargeRound;
}

void* CachingAllocator::allocate(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  process_pending();
  const size_t size = round_size(nbytes);
  Pool& pool = size <= kSmallRequest ? *small_ : *large_;
  Block* block = find_free(pool, size, stream);
  if (!block) block = new_segment(pool, size, stream, nbytes);
  split(block, size);
  block->allocated = true;
  block->requested = nbytes;
  live_[block->ptr] = block;
  stats_.allocated += block->size;
  stats_.requested += nbytes;
  stats_.active_blocks += 1;
  if (stats_.allocated > stats_.peak_allocated) stats_.peak_allocated = stats_.allocated;
  return block->ptr;
}

CachingAllocator::Block* CachingAllocator::find_free(Pool& pool, size_t size, StreamId stream) {
  Block key;
  key.stream = stream;
  key.size = size;
  auto it = pool.free.lower_bound(&key);
  if (it == pool.free.end() || (*it)->stream != stream) return nullptr;
  Block* block = *it;
  pool.free.erase(it);
  return block;
}

CachingAllocator::Block* CachingAllocator::new_segment(Pool& pool, size_t size, StreamId stream,
                                                       size_t requested) {
  const size_t seg = segment_size(size);
  const FractionCap cap = cap_of(this);
  if (cap.fraction < 1.0 && stats_.reserved + seg > cap.limit) {
    // Over the process's share: cached segments may make room.
    stats_.cache_flushes += 1;
    wait_pending();
    release_cached();
    if (stats_.reserved + seg > cap.limit) {
      stats_.ooms += 1;
      throw OutOfMemoryError(str(
          "CUDA out of memory on cuda:", device_, ": tried to allocate ", format_bytes(requested),
          seg > size ? str(" (as part of a new ", format_bytes(seg), " segment)") : std::string(),
          ", but this process may use only ", format_bytes(cap.limit), " of the device (memory fraction ",
          cap.fraction, " set by ember.cuda.set_per_process_memory_fraction), and ember already reserves ",
          format_bytes(stats_.reserved), " (", format_bytes(stats_.allocated),
          " allocated by tensors). Raise the fraction, or use a smaller batch size or model."));
    }
  }
  void* p = backend_->raw_alloc(seg);
  if (!p) {
    // Cached blocks of other sizes or streams may be what stands in the way.
    stats_.cache_flushes += 1;
    wait_pending();
    release_cached();
    p = backend_->raw_alloc(seg);
  }
  if (!p) raise_oom(requested, size, seg);
  stats_.raw_allocs += 1;
  stats_.reserved += seg;
  stats_.segments += 1;
  pool.segments += 1;
  if (stats_.reserved > stats_.peak_reserved) stats_.peak_reserved = stats_.reserved;
  Block* block = new Block;
  block->ptr = static_cast<char*>(p);
  block->size = seg;
  block->stream = stream;
  block->pool = &pool;
  return block;
}

void CachingAllocator::split(Block* block, size_t size) {
  const size_t rest = block->size - size;
  // Small remainders are worth keeping in the small pool; in the large pool a
  // remainder below 1 MiB would only feed small requests, which never look there.
  const bool worth_it = block->pool->small ? rest >= kRound : rest > kSmallRequest;
  if (!worth_it) return;
  Block* tail = new Block;
  tail->ptr = block->ptr + size;
  tail->size = rest;
  tail->stream = block->stream;
  tail->pool = block->pool;
  tail->prev = block;
  tail->next = block->next;
  if (block->next) block->next->prev = tail;
  block->next = tail;
  block->size = size;
  block->pool->free.insert(tail);
}

void CachingAllocator::free(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return;
  Block* block = it->second;
  live_.erase(it);
  stats_.allocated -= block->size;
  stats_.requested -= block->requested;
  stats_.active_blocks -= 1;
  block->requested = 0;
  if (!block->stream_uses.empty()) {
    // Work queued on those streams may still read or write the block: it is
    // reused once an event recorded on each of them now has completed.
    try {
      for (StreamId s : block->stream_uses) block->events.push_back(backend_->record_event(s));
    } catch (...) {
      // Without events there is no telling when the block is safe: keep it
      // out of the cache for good (it stays reserved) rather than risk reuse.
      for (void* e : block->events) {
        try {
          backend_->destroy_event(e);
        } catch (...) {
        }
      }
      block->events.clear();
      block->stream_uses.clear();
      return;
    }
    block->stream_uses.clear();
    pending_.push_back(block);
    stats_.pending_frees += 1;
    return;
  }
  free_block(block);
}

void CachingAllocator::record_stream(void* ptr, StreamId stream) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return;
  Block* block = it->second;
  if (stream == block->stream) return;
  for (StreamId s : block->stream_uses) {
    if (s == stream) return;
  }
  block->stream_uses.push_back(stream);
}

void CachingAllocator::process_pending() {
  for (size_t i = 0; i < pending_.size();) {
    Block* block = pending_[i];
    auto& events = block->events;
    for (size_t k = 0; k < events.size();) {
      if (backend_->event_done(events[k])) {
        backend_->destroy_event(events[k]);
        events[k] = events.back();
        events.pop_back();
      } else {
        ++k;
      }
    }
    if (!events.empty()) {
      ++i;
      continue;
    }
    pending_[i] = pending_.back();
    pending_.pop_back();
    stats_.pending_frees -= 1;
    free_block(block);
  }
}

void CachingAllocator::wait_pending() {
  for (Block* block : pending_) {
    for (void* e : block->events) backend_->wait_event(e);
  }
  process_pending();
}

void CachingAllocator::free_block(Block* block) {
  block->allocated = false;
  Pool& pool = *block->pool;
  if (Block* prev = block->prev; prev && !prev->allocated) {
    pool.free.erase(prev);
    block->ptr = prev->ptr;
    block->size += prev->size;
    block->prev = prev->prev;
    if (block->prev) block->prev->next = block;
    delete prev;
  }
  if (Block* next = block->next; next && !next->allocated) {
    pool.free.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (block->next) block->next->prev = block;
    delete next;
  }
  pool.free.insert(block);
}

void CachingAllocator::release_cached() {
  for (Pool* pool : {small_.get(), large_.get()}) {
    for (auto it = pool->free.begin(); it != pool->free.end();) {
      Block* b = *it;
      if (b->prev || b->next) {  // part of a segment that still holds live blocks
        ++it;
        continue;
      }
      backend_->raw_free(b->ptr);
      stats_.raw_frees += 1;
      stats_.reserved -= b->size;
      stats_.segments -= 1;
      pool->segments -= 1;
      it = pool->free.erase(it);
      delete b;
    }
  }
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  wait_pending();
  release_cached();
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_allocated = stats_.allocated;
  stats_.peak_reserved = stats_.reserved;
}

size_t CachingAllocator::block_size(void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(ptr);
  return it == live_.end() ? 0 : it->second->size;
}

void CachingAllocator::raise_oom(size_t requested, size_t rounded, size_t segment) {
  stats_.ooms += 1;
  AllocatorBackend::MemInfo info;
  try {
    info = backend_->mem_info();
  } catch (...) {
    // Keep the out-of-memory report even if the query fails too.
  }
  const size_t unused = stats_.reserved - stats_.allocated;
  throw OutOfMemoryError(str(
      "CUDA out of memory on cuda:", device_, ": tried to allocate ", format_bytes(requested),
      segment > rounded ? str(" (as part of a new ", format_bytes(segment), " segment)") : std::string(),
      ". The GPU has ", format_bytes(info.total), " in total, of which ", format_bytes(info.free),
      " is free. ember holds ", format_bytes(stats_.allocated), " allocated by tensors and ",
      format_bytes(stats_.reserved), " reserved (", format_bytes(unused),
      " of it cached but unused; ember already returned its fully free cached segments to the GPU and retried). "
      "To fix: use a smaller batch size or model; drop references to tensors you no longer need "
      "(e.g. losses kept with their graph: store loss.item() instead); look for other processes "
      "using this GPU (nvidia-smi); ember.cuda.memory_summary() shows where the memory is."));
}

std::string CachingAllocator::summary() const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto row = [](const char* name, const std::string& a, const std::string& b) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "| %-22s | %16s | %16s |\n", name, a.c_str(), b.c_str());
    return std::string(buf);
  };
  auto count = [](size_t n) { return std::to_string(n); };
  size_t cached_blocks[2] = {0, 0}, cached_bytes[2] = {0, 0};
  int i = 0;
  for (const Pool* pool : {small_.get(), large_.get()}) {
    for (const Block* b : pool->free) {
      cached_blocks[i] += 1;
      cached_bytes[i] += b->size;
    }
    ++i;
  }
  const std::string rule = "|" + std::string(24, '-') + "+" + std::string(18, '-') + "+" + std::string(18, '-') + "|\n";
  std::string s = str("ember.cuda memory summary, device ", device_, "\n", rule);
  s += row("", "current", "peak");
  s += rule;
  s += row("allocated (tensors)", format_bytes(stats_.allocated), format_bytes(stats_.peak_allocated));
  s += row("reserved (from GPU)", format_bytes(stats_.reserved), format_bytes(stats_.peak_reserved));
  s += row("requested (unrounded)", format_bytes(stats_.requested), "");
  s += rule;
  s += row("active blocks", count(stats_.active_blocks), "");
  s += row("segments small/large", count(small_->segments), count(large_->segments));
  s += row("cached blocks small", count(cached_blocks[0]), format_bytes(cached_bytes[0]));
  s += row("cached blocks large", count(cached_blocks[1]), format_bytes(cached_bytes[1]));
  s += rule;
  s += row("cudaMalloc / cudaFree", count(stats_.raw_allocs), count(stats_.raw_frees));
  s += row("cache flushes / OOMs", count(stats_.cache_flushes), count(stats_.ooms));
  s += rule;
  return s;
}

}  // namespace ember::cuda
