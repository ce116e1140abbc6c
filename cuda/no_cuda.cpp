// Linked into CPU-only builds: queries answer "no GPU"; everything that needs
// a GPU says ember was built without CUDA and how to get it.
#include <cstdlib>
#include <cstring>

#include <ember/core/error.h>
#include <ember/cuda/cuda_api.h>

namespace ember::cuda {

namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw Error(str(what, ": ember was built without CUDA support, so tensors can only live on the CPU; "
                        "use device='cpu', or rebuild ember on a machine with the CUDA toolkit "
                        "(nvcc found, EMBER_CUDA not OFF)"));
}
}  // namespace

bool is_available() { return false; }
int device_count() { return 0; }
std::string unavailable_reason() { return "ember was built without CUDA support"; }
int driver_version() { return 0; }
int runtime_version() { return 0; }
int cudnn_version() { return 0; }

int current_device() { no_cuda("ember.cuda.current_device"); }
void set_device(int) { no_cuda("ember.cuda.set_device"); }
DeviceProperties device_properties(int) { no_cuda("ember.cuda.get_device_properties"); }
std::string arch_problem(int) { no_cuda("ember.cuda: the architecture check"); }
void synchronize(int) { no_cuda("ember.cuda.synchronize"); }

std::shared_ptr<void> allocate(size_t, int) { no_cuda("allocate on cuda"); }
AllocatorStats memory_stats(int) { return {}; }
void reset_peak_memory_stats(int) {}
void empty_cache() {}
std::string memory_summary(int) { no_cuda("ember.cuda.memory_summary"); }
AllocatorBackend::MemInfo mem_get_info(int) { no_cuda("ember.cuda.mem_get_info"); }
void copy(Tensor&, const Tensor&, bool) { no_cuda("copy to or from cuda"); }
std::shared_ptr<void> host_allocate(size_t) { no_cuda("pin_memory"); }
bool is_pinned(const void*) { return false; }

Stream current_stream(int) { no_cuda("ember.cuda.current_stream"); }
Stream default_stream(int) { no_cuda("ember.cuda.default_stream"); }
Stream new_stream(int, bool) { no_cuda("ember.cuda.Stream"); }
void set_current_stream(const Stream&) { no_cuda("ember.cuda.set_stream"); }
void stream_synchronize(const Stream&) { no_cuda("ember.cuda.Stream.synchronize"); }
bool stream_query(const Stream&) { no_cuda("ember.cuda.Stream.query"); }
void record_stream(const Tensor&, const Stream&) { no_cuda("Tensor.record_stream"); }

struct Event::Impl {};
Event::Event(bool, bool) { no_cuda("ember.cuda.Event"); }
void Event::record(const Stream&) { no_cuda("ember.cuda.Event.record"); }
void Event::wait(const Stream&) const { no_cuda("ember.cuda.Event.wait"); }
bool Event::query() const { no_cuda("ember.cuda.Event.query"); }
void Event::synchronize() const { no_cuda("ember.cuda.Event.synchronize"); }
float Event::elapsed_time(const Event&) const { no_cuda("ember.cuda.Event.elapsed_time"); }
bool Event::recorded() const { return false; }

bool launch_blocking() {
  const char* v = std::getenv("EMBER_LAUNCH_BLOCKING");
  return v && std::strcmp(v, "1") == 0;
}

}  // namespace ember::cuda
