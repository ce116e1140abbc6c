#include <ember/cuda/context.h>

#include <cstdlib>

#include <ember/core/error.h>
#include <ember/cuda/arch_list.h>
#include <ember/cuda/build_info.h>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

// cudaMalloc/cudaFree/cudaMemGetInfo and the events of one device, for the
// caching allocator.
class RuntimeMemory : public AllocatorBackend {
 public:
  explicit RuntimeMemory(int device) : device_(device) {}
  void* raw_alloc(size_t nbytes) override {
    DeviceGuard guard(device_);
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, nbytes);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return nullptr;
    }
    EMBER_CUDA_CHECK(err);
    return p;
  }
  void raw_free(void* ptr) override {
    DeviceGuard guard(device_);
    EMBER_CUDA_CHECK(cudaFree(ptr));
  }
  MemInfo mem_info() override {
    DeviceGuard guard(device_);
    MemInfo info;
    EMBER_CUDA_CHECK(cudaMemGetInfo(&info.free, &info.total));
    return info;
  }
  void* record_event(StreamId stream) override {
    DeviceGuard guard(device_);
    cudaEvent_t e = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    const cudaError_t err = cudaEventRecord(e, reinterpret_cast<cudaStream_t>(stream));
    if (err != cudaSuccess) cudaEventDestroy(e);
    EMBER_CUDA_CHECK(err);
    return e;
  }
  bool event_done(void* event) override {
    DeviceGuard guard(device_);
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (err == cudaErrorNotReady) {
      cudaGetLastError();  // "not ready" is an answer, not an error to report later
      return false;
    }
    EMBER_CUDA_CHECK(err);
    return true;
  }
  void wait_event(void* event) override {
    DeviceGuard guard(device_);
    EMBER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
  }
  void destroy_event(void* event) override {
    DeviceGuard guard(device_);
    EMBER_CUDA_CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(event)));
  }

 private:
  int device_;
};

std::string version_str(int v) { return str(v / 1000, ".", (v % 1000) / 10); }

}  // namespace

DeviceGuard::DeviceGuard(int index) {
  EMBER_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ == index) {
    previous_ = -1;
  } else {
    EMBER_CUDA_CHECK(cudaSetDevice(index));
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

Registry& Registry::get() {
  static auto* registry = new Registry();  // leaked: tensors may be freed during exit
  return *registry;
}

void Registry::probe() {
  int driver = 0, runtime = 0, count = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaSuccess && count > 0) {
    count_ = count;
    devices_.resize(count);
    ready_.reset(new std::atomic<DeviceContext*>[count]);
    for (int i = 0; i < count; ++i) ready_[i].store(nullptr);
    return;
  }
  cudaGetLastError();
  count_ = 0;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (driver == 0) {
    reason_ = "no NVIDIA driver was found (libcuda.so.1 is missing): install the NVIDIA driver; "
              "nvidia-smi should then list the GPU";
  } else if (err == cudaErrorInsufficientDriver || driver < runtime) {
    reason_ = str("the NVIDIA driver supports CUDA up to ", version_str(driver),
                  " but ember was built with the CUDA ", version_str(runtime),
                  " runtime: update the driver, or rebuild ember with a CUDA toolkit no newer than ",
                  version_str(driver));
  } else if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0)) {
    reason_ = "the NVIDIA driver found no CUDA GPU";
    if (visible) reason_ += str(" (CUDA_VISIBLE_DEVICES='", visible, "' may hide it)");
  } else {
    reason_ = str("CUDA failed to initialise: ", cudaGetErrorString(err), " (", cudaGetErrorName(err), ")");
  }
}

int Registry::device_count() {
  std::call_once(probed_, [this] { probe(); });
  return count_;
}

const std::string& Registry::unavailable_reason() {
  device_count();
  return reason_;
}

int Registry::resolve(int index) {
  const int n = device_count();
  EMBER_CHECK(n > 0, Error, "ember.cuda: no CUDA GPU is available: ", reason_);
  int i = index;
  if (i < 0) EMBER_CUDA_CHECK(cudaGetDevice(&i));
  EMBER_CHECK(i < n, Error, "ember.cuda: invalid device cuda:", i, ": this machine has ", n, " CUDA GPU",
              n == 1 ? "" : "s", " (cuda:0", n > 1 ? str(" to cuda:", n - 1) : std::string(), ")");
  return i;
}

DeviceContext& Registry::device(int index) {
  const int i = resolve(index);
  if (DeviceContext* ready = ready_[i].load(std::memory_order_acquire)) return *ready;
  std::lock_guard<std::mutex> lock(mutex_);
  if (devices_[i]) return *devices_[i];
  auto ctx = std::make_unique<DeviceContext>();
  ctx->index = i;
  EMBER_CUDA_CHECK(cudaGetDeviceProperties(&ctx->props, i));
  const std::string mismatch = arch_mismatch(i, ctx->props.name, ctx->props.major, ctx->props.minor, compiled_archs());
  EMBER_CHECK(mismatch.empty(), Error, mismatch);
  const cudaError_t probe = probe_kernel_image(i);
  if (probe == cudaErrorNoKernelImageForDevice) {
    // The list says yes but CUDA says no (e.g. PTX newer than the driver can JIT).
    throw Error(str(arch_mismatch(i, ctx->props.name, ctx->props.major, ctx->props.minor, {}),
                    " [CUDA found no usable kernel image: ", cudaGetErrorString(probe), "]"));
  }
  EMBER_CUDA_CHECK(probe);
  ctx->allocator = std::make_unique<CachingAllocator>(std::make_unique<RuntimeMemory>(i), i);
  devices_[i] = std::move(ctx);
  ready_[i].store(devices_[i].get(), std::memory_order_release);
  return *devices_[i];
}

DeviceContext* Registry::existing(int index) {
  if (device_count() == 0) return nullptr;
  return ready_[resolve(index)].load(std::memory_order_acquire);
}

std::vector<DeviceContext*> Registry::all_existing() {
  std::vector<DeviceContext*> out;
  if (device_count() == 0) return out;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& d : devices_) {
    if (d) out.push_back(d.get());
  }
  return out;
}

cudaStream_t current_cuda_stream(int index) {
  return Registry::get().device(index).current_stream.load();
}

cublasHandle_t cublas_handle(int index) {
  DeviceContext& ctx = Registry::get().device(index);
  std::lock_guard<std::mutex> lock(ctx.mutex);
  if (!ctx.cublas) {
    DeviceGuard guard(ctx.index);
    EMBER_CUBLAS_CHECK(cublasCreate(&ctx.cublas));
  }
  const cudaStream_t stream = ctx.current_stream.load();
  EMBER_CUBLAS_CHECK(cublasSetStream(ctx.cublas, stream));
  // cublasSetStream also puts cuBLAS back on a workspace it cudaMallocs itself,
  // outside ember's memory statistics: hand it the stream's block from the
  // caching allocator instead (the size cuBLAS recommends: 32 MiB on Hopper
  // and newer, 4 MiB before).
  const size_t workspace = (ctx.props.major >= 9 ? size_t{32} : size_t{4}) << 20;
  std::shared_ptr<void>& block = ctx.cublas_workspaces[stream];
  if (!block) {
    void* p = ctx.allocator->allocate(workspace, reinterpret_cast<StreamId>(stream));
    CachingAllocator* allocator = ctx.allocator.get();
    block = std::shared_ptr<void>(p, [allocator](void* q) { allocator->free(q); });
  }
  EMBER_CUBLAS_CHECK(cublasSetWorkspace(ctx.cublas, block.get(), workspace));
  return ctx.cublas;
}

}  // namespace ember::cuda
