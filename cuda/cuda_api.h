// The CUDA seam the core and the bindings call into. It needs no CUDA
// headers. A CUDA build implements it in cuda/*.cpp (cuda/device_api.cpp,
// cuda/stream.cpp, cuda/copy.cpp); a CPU build links cuda/no_cuda.cpp, where
// queries answer "no GPU" and everything else says ember was built without CUDA.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <ember/cuda/caching_allocator.h>

namespace ember {
class Tensor;
namespace cuda {

// ---- availability
bool is_available();
int device_count();
// Why CUDA cannot be used (built without CUDA, no driver, driver older than
// the runtime, no GPU), for error messages; empty when it can.
std::string unavailable_reason();
// Versions as CUDA encodes them (13000 = 13.0); 0 when absent.
int driver_version();
int runtime_version();
// The cuDNN library loaded at run time (90800 = 9.8.0); 0 without cuDNN.
int cudnn_version();

// ---- devices (index -1: the current device)
int current_device();
void set_device(int index);
struct DeviceProperties {
  std::string name;
  size_t total_memory = 0;
  int major = 0;
  int minor = 0;
  int multi_processor_count = 0;
};
// Queries the GPU without initialising ember's context on it, so it works even
// for a GPU this build has no code for.
DeviceProperties device_properties(int index);
// Empty when this build's GPU code runs on the device; otherwise why not and
// the rebuild command (what the device's first use would raise).
std::string arch_problem(int index);
// Waits for all work queued on the device.
void synchronize(int index = -1);

// ---- memory: the caching allocator of device `index`
std::shared_ptr<void> allocate(size_t nbytes, int index);
AllocatorStats memory_stats(int index = -1);
void reset_peak_memory_stats(int index = -1);
// Returns the cached, unused memory of every device to the GPU.
void empty_cache();
std::string memory_summary(int index = -1);
// Free and total bytes of the GPU (cudaMemGetInfo).
AllocatorBackend::MemInfo mem_get_info(int index = -1);

// Copies between any two devices: dst = src cast to dst's dtype and broadcast
// to its shape, where one or both are CUDA tensors. A copy between the CPU and
// a GPU waits for its stream unless non_blocking is set and the CPU side is
// pinned memory (then, as in PyTorch, the caller synchronizes before reading
// a result copied to the host).
void copy(Tensor& dst, const Tensor& src, bool non_blocking = false);

// ---- pinned (page-locked) host memory: Tensor.pin_memory() (cuda/host_allocator.h)
// Raises when no usable GPU is present.
std::shared_ptr<void> host_allocate(size_t nbytes);
// Whether ptr lies in page-locked host memory (ember's or pinned elsewhere).
bool is_pinned(const void* ptr);

// ---- streams and events
// A stream of a device; handle is the cudaStream_t (nullptr: the default
// stream). Streams come from a per-device pool and live as long as the process.
struct Stream {
  int device = 0;
  void* handle = nullptr;
  uint64_t id() const { return reinterpret_cast<uintptr_t>(handle); }
  bool operator==(const Stream& o) const { return device == o.device && handle == o.handle; }
};
Stream current_stream(int index = -1);
Stream default_stream(int index = -1);
// A stream from the device's pool (high priority: the pool of high-priority streams).
Stream new_stream(int index = -1, bool high_priority = false);
// Makes s the current stream of its device.
void set_current_stream(const Stream& s);
void stream_synchronize(const Stream& s);
// True when all work queued on s has finished.
bool stream_query(const Stream& s);
// Tells the caching allocator that t's memory is used by work on s too
// (Tensor.record_stream): once freed, it is not reused before the work queued
// on s by then has finished. t must be a CUDA tensor on s's device.
void record_stream(const Tensor& t, const Stream& s);

class Event {
 public:
  explicit Event(bool enable_timing = false, bool blocking = false);
  // The CUDA event is created at the first record, on the stream's device.
  void record(const Stream& s);
  // Makes future work on s wait for the recorded work.
  void wait(const Stream& s) const;
  bool query() const;
  void synchronize() const;
  // Milliseconds from this event to `end` (both recorded, timing enabled).
  float elapsed_time(const Event& end) const;
  bool recorded() const;
  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// Reads EMBER_LAUNCH_BLOCKING once: when "1", every kernel launch check
// synchronizes so asynchronous errors surface at the op that caused them.
bool launch_blocking();

}  // namespace cuda
}  // namespace ember
