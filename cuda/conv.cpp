// Convolutions on the GPU through cuDNN's convolution API (libcudnn_cnn,
// still shipped by cuDNN 9): forward, backward data (= transposed conv) and
// backward filter.
//
// Each distinct convolution (direction, dtype, shapes, geometry and the
// ember.backends.cudnn flags) gets a plan once per GPU: its descriptors and
// the algorithm chosen for it, cached in the device's context, so later calls
// only look the plan up and run it. The choice follows the flags:
// - benchmark: cudnnFind*AlgorithmEx times the algorithms on the call's data
//   (workspace from the caching allocator) and the fastest usable one is kept;
//   otherwise cuDNN's heuristics rank them and the first usable one is kept;
// - deterministic: only algorithms cuDNN reports as deterministic;
// - allow_tf32 False: float32 convolutions use CUDNN_FMA_MATH (no TF32 tensor
//   cores); otherwise the math type cuDNN reports with the algorithm;
// - enabled False: CUDA convolutions raise, as ember has no other GPU conv.
// The workspace of each run comes from the caching allocator.
#include <ember/cuda/conv.h>

#include <ember/core/determinism.h>
#include <ember/core/error.h>
#include <ember/core/ops/conv.h>

namespace ember::cuda {
namespace {
void require_enabled(const char* op) {
  EMBER_CHECK(cudnn_flags().enabled, NotImplementedError, op,
              ": ember.backends.cudnn.enabled is False, but ember has no CUDA convolution kernel other than "
              "cuDNN's; set ember.backends.cudnn.enabled = True, or run the convolution on the CPU");
}
}  // namespace
}  // namespace ember::cuda

#ifdef EMBER_HAS_CUDNN
#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <ember/cuda/context.h>
#include <ember/cuda/cuda_api.h>
#include <ember/cuda/cudnn_common.h>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

// Benchmarking offers the algorithms at most this much workspace.
constexpr size_t kMaxBenchmarkWorkspace = size_t{1} << 30;

class FilterDescriptor {
 public:
  FilterDescriptor(DType dtype, const Tensor& w, const char* op) {
    EMBER_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d_));
    EMBER_CUDNN_CHECK(cudnnSetFilter4dDescriptor(d_, cudnn_data_type(dtype, op), CUDNN_TENSOR_NCHW,
                                                 static_cast<int>(w.size(0)), static_cast<int>(w.size(1)),
                                                 static_cast<int>(w.size(2)), static_cast<int>(w.size(3))));
  }
  ~FilterDescriptor() { cudnnDestroyFilterDescriptor(d_); }
  FilterDescriptor(const FilterDescriptor&) = delete;
  FilterDescriptor& operator=(const FilterDescriptor&) = delete;
  cudnnFilterDescriptor_t get() const { return d_; }

 private:
  cudnnFilterDescriptor_t d_ = nullptr;
};

class ConvDescriptor {
 public:
  ConvDescriptor(DType dtype, const cpu::ConvGeom& g) {
    EMBER_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d_));
    EMBER_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        d_, static_cast<int>(g.pad_h), static_cast<int>(g.pad_w), static_cast<int>(g.stride_h),
        static_cast<int>(g.stride_w), static_cast<int>(g.dil_h), static_cast<int>(g.dil_w), CUDNN_CROSS_CORRELATION,
        cudnn_compute_type(dtype)));
    EMBER_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d_, static_cast<int>(g.groups)));
  }
  ~ConvDescriptor() { cudnnDestroyConvolutionDescriptor(d_); }
  ConvDescriptor(const ConvDescriptor&) = delete;
  ConvDescriptor& operator=(const ConvDescriptor&) = delete;
  cudnnConvolutionDescriptor_t get() const { return d_; }

 private:
  cudnnConvolutionDescriptor_t d_ = nullptr;
};

TensorDescriptor nchw(const Tensor& t, const char* op) {
  return TensorDescriptor(t.dtype(), t.size(0), t.size(1), t.size(2), t.size(3), op);
}

// One convolution's descriptors and chosen algorithm. The two tensors are, by
// direction: forward (x, y), backward data (dy, dx), backward filter (x, dy);
// the filter is w, or dw for backward filter. Read-only once chosen.
struct ConvPlan {
  ConvPlan(DType dt, const Tensor& a, const Tensor& b, const Tensor& f, const cpu::ConvGeom& g, const char* op)
      : first(nchw(a, op)), second(nchw(b, op)), filter(dt, f, op), conv(dt, g) {}
  TensorDescriptor first, second;
  FilterDescriptor filter;
  ConvDescriptor conv;
  int algo = 0;
  size_t workspace = 0;
};

// The data pointers of one call, in ConvPlan's order (benchmarking runs on them).
struct Operands {
  const void* first;
  void* second;
  void* filter;
};

// The cuDNN calls of each direction, so that choosing an algorithm is written once.
struct ForwardCalls {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  using Algo = cudnnConvolutionFwdAlgo_t;
  static constexpr int kCount = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  static constexpr int kDirection = 0;
  static cudnnStatus_t heuristics(cudnnHandle_t h, const ConvPlan& p, int* got, Perf* perf) {
    return cudnnGetConvolutionForwardAlgorithm_v7(h, p.first.get(), p.filter.get(), p.conv.get(), p.second.get(),
                                                  kCount, got, perf);
  }
  static cudnnStatus_t find(cudnnHandle_t h, const ConvPlan& p, const Operands& o, int* got, Perf* perf, void* ws,
                            size_t bytes) {
    return cudnnFindConvolutionForwardAlgorithmEx(h, p.first.get(), o.first, p.filter.get(), o.filter, p.conv.get(),
                                                  p.second.get(), o.second, kCount, got, perf, ws, bytes);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const ConvPlan& p, Algo a, size_t* bytes) {
    return cudnnGetConvolutionForwardWorkspaceSize(h, p.first.get(), p.filter.get(), p.conv.get(), p.second.get(), a,
                                                   bytes);
  }
};

struct BackwardDataCalls {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  using Algo = cudnnConvolutionBwdDataAlgo_t;
  static constexpr int kCount = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
  static constexpr int kDirection = 1;
  static cudnnStatus_t heuristics(cudnnHandle_t h, const ConvPlan& p, int* got, Perf* perf) {
    return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, p.filter.get(), p.first.get(), p.conv.get(),
                                                       p.second.get(), kCount, got, perf);
  }
  static cudnnStatus_t find(cudnnHandle_t h, const ConvPlan& p, const Operands& o, int* got, Perf* perf, void* ws,
                            size_t bytes) {
    return cudnnFindConvolutionBackwardDataAlgorithmEx(h, p.filter.get(), o.filter, p.first.get(), o.first,
                                                       p.conv.get(), p.second.get(), o.second, kCount, got, perf, ws,
                                                       bytes);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const ConvPlan& p, Algo a, size_t* bytes) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, p.filter.get(), p.first.get(), p.conv.get(),
                                                        p.second.get(), a, bytes);
  }
};

struct BackwardFilterCalls {
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  using Algo = cudnnConvolutionBwdFilterAlgo_t;
  static constexpr int kCount = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
  static constexpr int kDirection = 2;
  static cudnnStatus_t heuristics(cudnnHandle_t h, const ConvPlan& p, int* got, Perf* perf) {
    return cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, p.first.get(), p.second.get(), p.conv.get(),
                                                         p.filter.get(), kCount, got, perf);
  }
  static cudnnStatus_t find(cudnnHandle_t h, const ConvPlan& p, const Operands& o, int* got, Perf* perf, void* ws,
                            size_t bytes) {
    return cudnnFindConvolutionBackwardFilterAlgorithmEx(h, p.first.get(), o.first, p.second.get(), o.second,
                                                         p.conv.get(), p.filter.get(), o.filter, kCount, got, perf,
                                                         ws, bytes);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const ConvPlan& p, Algo a, size_t* bytes) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, p.first.get(), p.second.get(), p.conv.get(),
                                                          p.filter.get(), a, bytes);
  }
};

std::shared_ptr<void> workspace(size_t bytes, int index) {
  return bytes ? allocate(bytes, index) : std::shared_ptr<void>();
}

bool uses_tensor_ops(cudnnMathType_t m) {
  return m == CUDNN_TENSOR_OP_MATH || m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

// Times every algorithm on the call's data; returns how many results cuDNN wrote.
template <class Calls>
int benchmark(const ConvPlan& plan, cudnnHandle_t h, const Operands& o, typename Calls::Perf* perf, int index) {
  size_t most = 0;
  for (int a = 0; a < Calls::kCount; ++a) {
    size_t bytes = 0;
    if (Calls::workspace(h, plan, static_cast<typename Calls::Algo>(a), &bytes) == CUDNN_STATUS_SUCCESS) {
      most = std::max(most, bytes);
    }
  }
  most = std::min(most, kMaxBenchmarkWorkspace);
  std::shared_ptr<void> ws;
  try {
    ws = workspace(most, index);
  } catch (const OutOfMemoryError&) {
    most = 0;  // time the algorithms that need no workspace
  }
  int got = 0;
  EMBER_CUDNN_CHECK(Calls::find(h, plan, o, &got, perf, ws.get(), most));
  return got;
}

// Picks plan's algorithm (and its math type) under the flags.
template <class Calls>
void choose(ConvPlan& plan, cudnnHandle_t h, const Operands& o, DType dt, const CudnnFlags& flags, int index,
            const char* op) {
  const bool fma_only = dt == DType::Float32 && !flags.allow_tf32;
  // The math type set before the search is what cuDNN's heuristics and Find
  // consider: half types get TENSOR_OP_MATH so tensor-core algorithms are
  // among the candidates (with DEFAULT_MATH they may not be; PyTorch sets it
  // for the same reason). Each candidate's own math type is set below.
  const cudnnMathType_t search_math = fma_only ? CUDNN_FMA_MATH
                                      : (dt == DType::Float16 || dt == DType::BFloat16) ? CUDNN_TENSOR_OP_MATH
                                                                                        : CUDNN_DEFAULT_MATH;
  EMBER_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.conv.get(), search_math));
  std::array<typename Calls::Perf, Calls::kCount> perf{};
  int got = 0;
  if (flags.benchmark) {
    got = benchmark<Calls>(plan, h, o, perf.data(), index);
  } else {
    EMBER_CUDNN_CHECK(Calls::heuristics(h, plan, &got, perf.data()));
  }
  // Both lists come ranked, best first.
  for (int i = 0; i < std::min(got, Calls::kCount); ++i) {
    const auto& p = perf[i];
    if (p.status != CUDNN_STATUS_SUCCESS) continue;
    if (flags.deterministic && p.determinism != CUDNN_DETERMINISTIC) continue;
    if (fma_only && uses_tensor_ops(p.mathType)) continue;
    EMBER_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.conv.get(), fma_only ? CUDNN_FMA_MATH : p.mathType));
    size_t bytes = 0;
    if (Calls::workspace(h, plan, p.algo, &bytes) != CUDNN_STATUS_SUCCESS) continue;
    plan.algo = static_cast<int>(p.algo);
    plan.workspace = bytes;
    return;
  }
  if (flags.deterministic) {
    throw Error(str(op, ": cuDNN has no deterministic algorithm for this convolution; set "
                        "ember.backends.cudnn.deterministic = False and ember.use_deterministic_algorithms(False)"));
  }
  throw Error(str(op, ": cuDNN found no algorithm for this convolution (shapes, dtype or GPU unsupported)"));
}

// What identifies a plan: direction, dtype, the three shapes, the geometry
// and the flags that change the choice.
using PlanKey = std::array<int64_t, 24>;

struct PlanKeyHash {
  size_t operator()(const PlanKey& k) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t v : k) h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

PlanKey plan_key(int direction, DType dt, const Tensor& a, const Tensor& b, const Tensor& f, const cpu::ConvGeom& g,
                 const CudnnFlags& flags) {
  PlanKey k{};
  size_t i = 0;
  k[i++] = direction;
  k[i++] = static_cast<int64_t>(dt);
  for (const Tensor* t : {&a, &b, &f}) {
    for (int d = 0; d < 4; ++d) k[i++] = t->size(d);
  }
  for (int64_t v : {g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dil_h, g.dil_w, g.groups}) k[i++] = v;
  k[i++] = (flags.benchmark ? 1 : 0) | (flags.deterministic ? 2 : 0) | (flags.allow_tf32 ? 4 : 0);
  return k;
}

struct PlanCache {
  std::mutex mutex;
  std::unordered_map<PlanKey, std::shared_ptr<const ConvPlan>, PlanKeyHash> plans;
};

PlanCache& plan_cache(int index) {
  DeviceContext& ctx = Registry::get().device(index);
  std::lock_guard<std::mutex> lock(ctx.mutex);
  if (!ctx.conv_plans) ctx.conv_plans = std::make_shared<PlanCache>();
  return *static_cast<PlanCache*>(ctx.conv_plans.get());
}

// The cached plan of this convolution, made (and its algorithm chosen) at the
// first call. The cache's lock is held while choosing, so concurrent first
// calls of one shape benchmark once.
template <class Calls>
std::shared_ptr<const ConvPlan> plan_for(cudnnHandle_t h, int index, const Tensor& a, const Tensor& b,
                                         const Tensor& f, const Operands& o, const cpu::ConvGeom& g,
                                         const char* op) {
  const DType dt = a.dtype();
  CudnnFlags flags = cudnn_flags();
  flags.deterministic = flags.deterministic || deterministic_algorithms();  // either switch asks for it
  const PlanKey key = plan_key(Calls::kDirection, dt, a, b, f, g, flags);
  PlanCache& cache = plan_cache(index);
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto it = cache.plans.find(key);
  if (it != cache.plans.end()) return it->second;
  auto plan = std::make_shared<ConvPlan>(dt, a, b, f, g, op);
  choose<Calls>(*plan, h, o, dt, flags, index, op);
  cache.plans.emplace(key, plan);
  return plan;
}

// out += bias broadcast over [N, C, H, W], with ember's own broadcasting add
// (as PyTorch adds a convolution's bias): cudnnAddTensor, the alternative, is
// deprecated in cuDNN 9 and documents no list of the data types it takes
// (bfloat16 among them or not).
void add_bias(Tensor& out, const Tensor& bias) {
  if (!bias.defined()) return;
  out.add_(bias.reshape({1, bias.numel(), 1, 1}));
}

}  // namespace

void conv2d(Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const cpu::ConvGeom& g) {
  const char* op = "conv2d";
  require_enabled(op);
  if (out.numel() == 0) return;
  const int index = x.device().index;
  DeviceGuard guard(index);
  cudnnHandle_t h = cudnn_handle(index);
  const DType dt = x.dtype();
  const auto plan =
      plan_for<ForwardCalls>(h, index, x, out, w, Operands{x.data_ptr(), out.data_ptr(), w.data_ptr()}, g, op);
  const auto ws = workspace(plan->workspace, index);
  const ScalingFactor one(1.0), zero(0.0);
  EMBER_CUDNN_CHECK(cudnnConvolutionForward(h, one.get(dt), plan->first.get(), x.data_ptr(), plan->filter.get(),
                                            w.data_ptr(), plan->conv.get(),
                                            static_cast<cudnnConvolutionFwdAlgo_t>(plan->algo), ws.get(),
                                            plan->workspace, zero.get(dt), plan->second.get(), out.data_ptr()));
  add_bias(out, bias);
}

void conv_transpose2d(Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const cpu::ConvGeom& g) {
  const char* op = "conv_transpose2d";
  require_enabled(op);
  if (out.numel() == 0) return;
  const int index = x.device().index;
  DeviceGuard guard(index);
  cudnnHandle_t h = cudnn_handle(index);
  const DType dt = x.dtype();
  if (x.numel() == 0) {  // nothing flows back: zeros (+ bias)
    EMBER_CUDA_CHECK(cudaMemsetAsync(out.data_ptr(), 0, out.numel() * itemsize(dt), current_cuda_stream(index)));
    add_bias(out, bias);
    return;
  }
  // The forward conv whose input gradient this is maps out's space to x's.
  const auto plan = plan_for<BackwardDataCalls>(h, index, x, out, w,
                                                Operands{x.data_ptr(), out.data_ptr(), w.data_ptr()}, g, op);
  const auto ws = workspace(plan->workspace, index);
  const ScalingFactor one(1.0), zero(0.0);
  EMBER_CUDNN_CHECK(cudnnConvolutionBackwardData(h, one.get(dt), plan->filter.get(), w.data_ptr(), plan->first.get(),
                                                 x.data_ptr(), plan->conv.get(),
                                                 static_cast<cudnnConvolutionBwdDataAlgo_t>(plan->algo), ws.get(),
                                                 plan->workspace, zero.get(dt), plan->second.get(), out.data_ptr()));
  add_bias(out, bias);
}

void conv2d_weight(Tensor& gw, const Tensor& x, const Tensor& gy, const cpu::ConvGeom& g) {
  const char* op = "conv2d_weight";
  require_enabled(op);
  if (gw.numel() == 0) return;
  const int index = x.device().index;
  DeviceGuard guard(index);
  const DType dt = x.dtype();
  if (x.numel() == 0 || gy.numel() == 0) {  // an empty batch: zero gradient
    EMBER_CUDA_CHECK(cudaMemsetAsync(gw.data_ptr(), 0, gw.numel() * itemsize(dt), current_cuda_stream(index)));
    return;
  }
  cudnnHandle_t h = cudnn_handle(index);
  const auto plan = plan_for<BackwardFilterCalls>(h, index, x, gy, gw,
                                                  Operands{x.data_ptr(), gy.data_ptr(), gw.data_ptr()}, g, op);
  const auto ws = workspace(plan->workspace, index);
  const ScalingFactor one(1.0), zero(0.0);
  EMBER_CUDNN_CHECK(cudnnConvolutionBackwardFilter(h, one.get(dt), plan->first.get(), x.data_ptr(), plan->second.get(),
                                                   gy.data_ptr(), plan->conv.get(),
                                                   static_cast<cudnnConvolutionBwdFilterAlgo_t>(plan->algo), ws.get(),
                                                   plan->workspace, zero.get(dt), plan->filter.get(), gw.data_ptr()));
}

size_t conv_plan_count(int index) {
  DeviceContext* ctx = Registry::get().existing(index);
  if (!ctx) return 0;
  std::shared_ptr<void> plans;
  {
    std::lock_guard<std::mutex> lock(ctx->mutex);
    plans = ctx->conv_plans;
  }
  if (!plans) return 0;
  PlanCache& cache = *static_cast<PlanCache*>(plans.get());
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.plans.size();
}

}  // namespace ember::cuda

#else  // no cuDNN in this CUDA build

namespace ember::cuda {

namespace {
[[noreturn]] void no_cudnn(const char* op) {
  throw NotImplementedError(str(op, ": convolutions on CUDA need cuDNN, which this build of ember lacks; install "
                                    "cuDNN 9 (e.g. pip install nvidia-cudnn-cu13, or the cudnn9-cuda-13 package) "
                                    "and rebuild ember"));
}
}  // namespace

void conv2d(Tensor&, const Tensor&, const Tensor&, const Tensor&, const cpu::ConvGeom&) {
  require_enabled("conv2d");
  no_cudnn("conv2d");
}
void conv_transpose2d(Tensor&, const Tensor&, const Tensor&, const Tensor&, const cpu::ConvGeom&) {
  require_enabled("conv_transpose2d");
  no_cudnn("conv_transpose2d");
}
void conv2d_weight(Tensor&, const Tensor&, const Tensor&, const cpu::ConvGeom&) {
  require_enabled("conv2d");
  no_cudnn("conv2d");
}
size_t conv_plan_count(int) { return 0; }

}  // namespace ember::cuda

#endif  // EMBER_HAS_CUDNN
