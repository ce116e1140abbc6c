// Streams and events (CUDA build). Streams come from fixed per-device pools,
// as in PyTorch, so they are never destroyed while a tensor's cached block
// may still be tied to them.
#include <ember/core/error.h>
#include <ember/core/tensor.h>
#include <ember/cuda/context.h>
#include <ember/cuda/cuda_api.h>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

cudaStream_t raw(const Stream& s) { return static_cast<cudaStream_t>(s.handle); }

void create_pools(DeviceContext& ctx) {
  DeviceGuard guard(ctx.index);
  int least = 0, greatest = 0;
  EMBER_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  for (int i = 0; i < DeviceContext::kPoolSize; ++i) {
    EMBER_CUDA_CHECK(cudaStreamCreateWithPriority(&ctx.streams[i], cudaStreamNonBlocking, least));
    EMBER_CUDA_CHECK(cudaStreamCreateWithPriority(&ctx.high_priority_streams[i], cudaStreamNonBlocking, greatest));
  }
  ctx.streams_created = true;
}

}  // namespace

Stream current_stream(int index) {
  DeviceContext& ctx = Registry::get().device(index);
  return Stream{ctx.index, ctx.current_stream.load()};
}

Stream default_stream(int index) { return Stream{Registry::get().device(index).index, nullptr}; }

Stream new_stream(int index, bool high_priority) {
  DeviceContext& ctx = Registry::get().device(index);
  std::lock_guard<std::mutex> lock(ctx.mutex);
  if (!ctx.streams_created) create_pools(ctx);
  unsigned& next = high_priority ? ctx.next_high_priority : ctx.next_stream;
  auto& pool = high_priority ? ctx.high_priority_streams : ctx.streams;
  cudaStream_t s = pool[next++ % DeviceContext::kPoolSize];
  return Stream{ctx.index, s};
}

void set_current_stream(const Stream& s) { Registry::get().device(s.device).current_stream.store(raw(s)); }

void stream_synchronize(const Stream& s) {
  DeviceGuard guard(s.device);
  EMBER_CUDA_CHECK(cudaStreamSynchronize(raw(s)));
}

bool stream_query(const Stream& s) {
  DeviceGuard guard(s.device);
  const cudaError_t err = cudaStreamQuery(raw(s));
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  EMBER_CUDA_CHECK(err);
  return true;
}

void record_stream(const Tensor& t, const Stream& s) {
  EMBER_CHECK(t.device().is_cuda(), Error, "record_stream: expected a CUDA tensor, got one on ", t.device().str());
  EMBER_CHECK(t.device().index == s.device, Error, "record_stream: the tensor is on ", t.device().str(),
              " but the stream on cuda:", s.device);
  if (!t.storage().defined() || !t.storage().data()) return;  // empty tensors hold no block
  Registry::get().device(s.device).allocator->record_stream(t.storage().data(),
                                                            reinterpret_cast<StreamId>(s.handle));
}

struct Event::Impl {
  bool timing = false;
  bool blocking = false;
  int device = -1;
  cudaEvent_t event = nullptr;
  ~Impl() {
    if (event) cudaEventDestroy(event);
  }
};

Event::Event(bool enable_timing, bool blocking) : impl_(std::make_shared<Impl>()) {
  impl_->timing = enable_timing;
  impl_->blocking = blocking;
}

void Event::record(const Stream& s) {
  DeviceGuard guard(s.device);
  if (!impl_->event) {
    unsigned flags = (impl_->timing ? cudaEventDefault : cudaEventDisableTiming) |
                     (impl_->blocking ? cudaEventBlockingSync : 0u);
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&impl_->event, flags));
    impl_->device = s.device;
  }
  EMBER_CHECK(impl_->device == s.device, ValueError, "Event.record: the event belongs to cuda:", impl_->device,
              " but the stream to cuda:", s.device);
  EMBER_CUDA_CHECK(cudaEventRecord(impl_->event, raw(s)));
}

void Event::wait(const Stream& s) const {
  if (!impl_->event) return;  // nothing recorded: nothing to wait for
  DeviceGuard guard(s.device);
  EMBER_CUDA_CHECK(cudaStreamWaitEvent(raw(s), impl_->event, 0));
}

bool Event::query() const {
  if (!impl_->event) return true;
  const cudaError_t err = cudaEventQuery(impl_->event);
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  EMBER_CUDA_CHECK(err);
  return true;
}

void Event::synchronize() const {
  if (impl_->event) EMBER_CUDA_CHECK(cudaEventSynchronize(impl_->event));
}

float Event::elapsed_time(const Event& end) const {
  EMBER_CHECK(impl_->timing && end.impl_->timing, ValueError,
              "Event.elapsed_time: both events must be created with enable_timing=True");
  EMBER_CHECK(impl_->event && end.impl_->event, ValueError,
              "Event.elapsed_time: both events must be recorded before measuring the time between them");
  float ms = 0;
  EMBER_CUDA_CHECK(cudaEventElapsedTime(&ms, impl_->event, end.impl_->event));
  return ms;
}

bool Event::recorded() const { return impl_->event != nullptr; }

}  // namespace ember::cuda
