// The FFT on the GPU: cuFFT plans over cufftMakePlanMany64's advanced
// layout (so any stride and batch distance runs without a copy), executed on
// the device's current stream.
//
// Plans are cached per (device, type, n, batch, layout): creating one costs
// far more than running it. cuFFT's own workspace allocation is switched off;
// each execution takes its workspace from ember's caching allocator on the
// stream it runs on, so the memory is counted with ember's and two streams
// sharing a plan never share a workspace. A plan's stream and workspace are
// set and its execution queued under the plan's lock, since both are state of
// the plan object.
#include <ember/cuda/fft.h>

#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>

#include <cuda_runtime_api.h>
#include <cufft.h>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

const char* cufft_status_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "an unknown cuFFT status";
  }
}

[[noreturn]] void raise_cufft_error(cufftResult r, const char* call, int line) {
  const std::string msg = str("cuFFT error: ", call, " returned ", cufft_status_name(r), " (",
                              static_cast<int>(r), ") at cuda/fft.cpp:", line);
  if (r == CUFFT_ALLOC_FAILED) throw OutOfMemoryError(msg + ". The GPU is out of memory.");
  throw Error(msg);
}

#define EMBER_CUFFT_CHECK(call)                                                    \
  do {                                                                             \
    const cufftResult ember_fft_status_ = (call);                                  \
    if (ember_fft_status_ != CUFFT_SUCCESS) raise_cufft_error(ember_fft_status_, #call, __LINE__); \
  } while (0)

struct PlanKey {
  int device;
  cufftType type;
  int64_t n, batch, in_stride, in_dist, out_stride, out_dist;
  bool operator<(const PlanKey& o) const {
    return std::tie(device, type, n, batch, in_stride, in_dist, out_stride, out_dist) <
           std::tie(o.device, o.type, o.n, o.batch, o.in_stride, o.in_dist, o.out_stride, o.out_dist);
  }
};

// One cuFFT plan, destroyed (on its device) with the last user.
struct Plan {
  cufftHandle handle = 0;
  bool created = false;
  int device = 0;
  size_t work_bytes = 0;
  std::mutex mutex;  // guards the stream and workspace set on handle
  ~Plan() {
    if (!created) return;
    DeviceGuard guard(device);
    cufftDestroy(handle);  // nothing to report from a destructor
  }
};

// Complex element counts of one transform's input and output.
int64_t input_length(cufftType type, int64_t n) {
  return type == CUFFT_C2R || type == CUFFT_Z2D ? n / 2 + 1 : n;
}
int64_t output_length(cufftType type, int64_t n) {
  return type == CUFFT_R2C || type == CUFFT_D2Z ? n / 2 + 1 : n;
}

std::shared_ptr<Plan> make_plan(const PlanKey& k) {
  DeviceGuard guard(k.device);
  auto plan = std::make_shared<Plan>();
  plan->device = k.device;
  EMBER_CUFFT_CHECK(cufftCreate(&plan->handle));
  plan->created = true;
  EMBER_CUFFT_CHECK(cufftSetAutoAllocation(plan->handle, 0));
  // Non-null embeds select the advanced layout (for rank 1 only the strides
  // and dists are read from it).
  long long n = k.n, in_embed = input_length(k.type, k.n), out_embed = output_length(k.type, k.n);
  size_t work = 0;
  EMBER_CUFFT_CHECK(cufftMakePlanMany64(plan->handle, 1, &n, &in_embed, k.in_stride, k.in_dist, &out_embed,
                                        k.out_stride, k.out_dist, k.type, k.batch, &work));
  plan->work_bytes = work;
  return plan;
}

// The 64 plans used last; the oldest goes first.
class PlanCache {
 public:
  std::shared_ptr<Plan> get(const PlanKey& key) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = plans_.find(key);
      if (it != plans_.end()) {
        order_.splice(order_.end(), order_, it->second.second);
        return it->second.first;
      }
    }
    std::shared_ptr<Plan> plan = make_plan(key);  // slow: outside the lock
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second.first;  // another thread was quicker
    order_.push_back(key);
    plans_.emplace(key, std::make_pair(plan, std::prev(order_.end())));
    if (plans_.size() > kCapacity) {
      plans_.erase(order_.front());
      order_.pop_front();
    }
    return plan;
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    plans_.clear();
    order_.clear();
  }

 private:
  static constexpr size_t kCapacity = 64;
  std::mutex mutex_;
  std::list<PlanKey> order_;
  std::map<PlanKey, std::pair<std::shared_ptr<Plan>, std::list<PlanKey>::iterator>> plans_;
};

PlanCache& plan_cache() {
  static PlanCache* cache = new PlanCache();  // never destroyed: plans may outlive the CUDA runtime at exit
  return *cache;
}

// A block of the caching allocator for work queued on `stream`.
struct Workspace {
  CachingAllocator* allocator = nullptr;
  void* ptr = nullptr;
  Workspace(DeviceContext& ctx, size_t bytes, cudaStream_t stream) : allocator(ctx.allocator.get()) {
    ptr = bytes == 0 ? nullptr : allocator->allocate(bytes, reinterpret_cast<StreamId>(stream));
  }
  ~Workspace() {
    if (ptr) allocator->free(ptr);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
};

void check_layout(const char* op, int64_t n, int64_t batch, int64_t in_stride, int64_t in_dist,
                  int64_t out_stride, int64_t out_dist) {
  EMBER_CHECK(n >= 1, ValueError, op, ": invalid transform length ", n);
  EMBER_CHECK(batch >= 0, ValueError, op, ": invalid batch size ", batch);
  EMBER_CHECK(in_stride >= 0 && in_dist >= 0 && out_stride >= 0 && out_dist >= 0, ValueError, op,
              ": cuFFT takes non-negative strides and distances, got input (", in_stride, ", ", in_dist,
              "), output (", out_stride, ", ", out_dist, ")");
}

// Queues the transform of `key` on the current stream of key.device; `exec`
// makes the cufftExec* call on the plan's handle (and may take more workspace
// from the device's allocator on that stream).
template <class Exec>
void run(PlanKey key, const Exec& exec) {
  key.device = Registry::get().resolve(key.device);
  std::shared_ptr<Plan> plan = plan_cache().get(key);
  DeviceContext& ctx = Registry::get().device(key.device);
  DeviceGuard guard(key.device);
  const cudaStream_t stream = ctx.current_stream.load();
  Workspace work(ctx, plan->work_bytes, stream);
  std::lock_guard<std::mutex> lock(plan->mutex);
  EMBER_CUFFT_CHECK(cufftSetStream(plan->handle, stream));
  EMBER_CUFFT_CHECK(cufftSetWorkArea(plan->handle, work.ptr));
  exec(plan->handle, stream, ctx);
}

template <class T>
constexpr bool kDouble = std::is_same_v<T, double>;

}  // namespace

template <class T>
void fft_c2c(const std::complex<T>* in, int64_t in_stride, int64_t in_dist, std::complex<T>* out,
             int64_t out_stride, int64_t out_dist, int64_t n, int64_t batch, bool inverse, int device) {
  check_layout("fft_c2c", n, batch, in_stride, in_dist, out_stride, out_dist);
  if (batch == 0) return;
  EMBER_CHECK(static_cast<const void*>(in) != out || (in_stride == out_stride && in_dist == out_dist), ValueError,
              "fft_c2c: an in-place transform needs the same layout in and out");
  const PlanKey key{device, kDouble<T> ? CUFFT_Z2Z : CUFFT_C2C, n, batch, in_stride, in_dist, out_stride, out_dist};
  const int direction = inverse ? CUFFT_INVERSE : CUFFT_FORWARD;
  // cuFFT does not write the input of an out-of-place complex transform.
  void* src = const_cast<std::complex<T>*>(in);
  run(key, [&](cufftHandle h, cudaStream_t, DeviceContext&) {
    if constexpr (kDouble<T>) {
      EMBER_CUFFT_CHECK(cufftExecZ2Z(h, static_cast<cufftDoubleComplex*>(src),
                                     reinterpret_cast<cufftDoubleComplex*>(out), direction));
    } else {
      EMBER_CUFFT_CHECK(cufftExecC2C(h, static_cast<cufftComplex*>(src), reinterpret_cast<cufftComplex*>(out),
                                     direction));
    }
  });
}

template <class T>
void fft_r2c(const T* in, int64_t in_stride, int64_t in_dist, std::complex<T>* out, int64_t out_stride,
             int64_t out_dist, int64_t n, int64_t batch, int device) {
  check_layout("fft_r2c", n, batch, in_stride, in_dist, out_stride, out_dist);
  if (batch == 0) return;
  const PlanKey key{device, kDouble<T> ? CUFFT_D2Z : CUFFT_R2C, n, batch, in_stride, in_dist, out_stride, out_dist};
  T* src = const_cast<T*>(in);  // an out-of-place real-to-complex transform keeps its input
  run(key, [&](cufftHandle h, cudaStream_t, DeviceContext&) {
    if constexpr (kDouble<T>) {
      EMBER_CUFFT_CHECK(cufftExecD2Z(h, src, reinterpret_cast<cufftDoubleComplex*>(out)));
    } else {
      EMBER_CUFFT_CHECK(cufftExecR2C(h, src, reinterpret_cast<cufftComplex*>(out)));
    }
  });
}

template <class T>
void fft_c2r(const std::complex<T>* in, int64_t in_stride, int64_t in_dist, T* out, int64_t out_stride,
             int64_t out_dist, int64_t n, int64_t batch, int device) {
  check_layout("fft_c2r", n, batch, in_stride, in_dist, out_stride, out_dist);
  if (batch == 0) return;
  const PlanKey key{device, kDouble<T> ? CUFFT_Z2D : CUFFT_C2R, n, batch, in_stride, in_dist, out_stride, out_dist};
  // cuFFT overwrites a complex-to-real transform's input: it runs on a copy
  // of the input's whole extent (same layout, gaps included).
  const int64_t extent = (batch - 1) * in_dist + (n / 2) * in_stride + 1;
  const size_t bytes = static_cast<size_t>(extent) * sizeof(std::complex<T>);
  run(key, [&](cufftHandle h, cudaStream_t stream, DeviceContext& ctx) {
    Workspace copy(ctx, bytes, stream);
    EMBER_CUDA_CHECK(cudaMemcpyAsync(copy.ptr, in, bytes, cudaMemcpyDeviceToDevice, stream));
    if constexpr (kDouble<T>) {
      EMBER_CUFFT_CHECK(cufftExecZ2D(h, static_cast<cufftDoubleComplex*>(copy.ptr), out));
    } else {
      EMBER_CUFFT_CHECK(cufftExecC2R(h, static_cast<cufftComplex*>(copy.ptr), out));
    }
  });
}

void fft_clear_plan_cache() { plan_cache().clear(); }

EMBER_CUDA_FFT_INSTANTIATE(float)
EMBER_CUDA_FFT_INSTANTIATE(double)

}  // namespace ember::cuda
