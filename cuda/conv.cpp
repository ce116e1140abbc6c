// Convolutions on the GPU through cuDNN's convolution API (libcudnn_cnn,
// still shipped by cuDNN 9): forward, backward data (= transposed conv) and
// backward filter. Each call builds its descriptors, asks cuDNN's heuristics
// for the best algorithm (taking its math type, so TF32 is allowed for
// float32 as with PyTorch's default cudnn.allow_tf32), and takes the
// algorithm's workspace from the caching allocator.
#include <ember/cuda/conv.h>

#include <ember/core/error.h>

#ifdef EMBER_HAS_CUDNN
#include <array>
#include <memory>

#include <ember/cuda/context.h>
#include <ember/cuda/cuda_api.h>
#include <ember/cuda/cudnn_common.h>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

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

// The first algorithm cuDNN's heuristics rank as usable; sets its math type on conv.
template <class Perf>
const Perf& pick(const std::array<Perf, 8>& perf, int returned, cudnnConvolutionDescriptor_t conv, const char* op) {
  for (int i = 0; i < returned; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS) {
      EMBER_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, perf[i].mathType));
      return perf[i];
    }
  }
  throw Error(str(op, ": cuDNN found no algorithm for this convolution (shapes, dtype or GPU unsupported)"));
}

std::shared_ptr<void> workspace(size_t bytes, int index) {
  return bytes ? allocate(bytes, index) : std::shared_ptr<void>();
}

// out += bias broadcast over [N, C, H, W].
void add_bias(Tensor& out, const Tensor& bias, const TensorDescriptor& out_desc, cudnnHandle_t h, const char* op) {
  if (!bias.defined()) return;
  const TensorDescriptor bias_desc(bias.dtype(), 1, bias.numel(), 1, 1, op);
  const ScalingFactor one(1.0);
  EMBER_CUDNN_CHECK(cudnnAddTensor(h, one.get(out.dtype()), bias_desc.get(), bias.data_ptr(), one.get(out.dtype()),
                                   out_desc.get(), out.data_ptr()));
}

}  // namespace

void conv2d(Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const cpu::ConvGeom& g) {
  const char* op = "conv2d";
  if (out.numel() == 0) return;
  const int index = x.device().index;
  DeviceGuard guard(index);
  cudnnHandle_t h = cudnn_handle(index);
  const DType dt = x.dtype();
  const TensorDescriptor xd = nchw(x, op), yd = nchw(out, op);
  const FilterDescriptor wd(dt, w, op);
  const ConvDescriptor cd(dt, g);
  std::array<cudnnConvolutionFwdAlgoPerf_t, 8> perf{};
  int returned = 0;
  EMBER_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd.get(), wd.get(), cd.get(), yd.get(),
                                                           static_cast<int>(perf.size()), &returned, perf.data()));
  const auto& best = pick(perf, returned, cd.get(), op);
  const auto ws = workspace(best.memory, index);
  const ScalingFactor one(1.0), zero(0.0);
  EMBER_CUDNN_CHECK(cudnnConvolutionForward(h, one.get(dt), xd.get(), x.data_ptr(), wd.get(), w.data_ptr(), cd.get(),
                                            best.algo, ws.get(), best.memory, zero.get(dt), yd.get(),
                                            out.data_ptr()));
  add_bias(out, bias, yd, h, op);
}

void conv_transpose2d(Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const cpu::ConvGeom& g) {
  const char* op = "conv_transpose2d";
  if (out.numel() == 0) return;
  const int index = x.device().index;
  DeviceGuard guard(index);
  cudnnHandle_t h = cudnn_handle(index);
  const DType dt = x.dtype();
  // The forward conv whose input gradient this is maps out's space to x's.
  const TensorDescriptor dyd = nchw(x, op), dxd = nchw(out, op);
  const FilterDescriptor wd(dt, w, op);
  const ConvDescriptor cd(dt, g);
  if (x.numel() == 0) {  // nothing flows back: zeros (+ bias)
    EMBER_CUDA_CHECK(cudaMemsetAsync(out.data_ptr(), 0, out.numel() * itemsize(dt), current_cuda_stream(index)));
    add_bias(out, bias, dxd, h, op);
    return;
  }
  std::array<cudnnConvolutionBwdDataAlgoPerf_t, 8> perf{};
  int returned = 0;
  EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, wd.get(), dyd.get(), cd.get(), dxd.get(),
                                                                static_cast<int>(perf.size()), &returned,
                                                                perf.data()));
  const auto& best = pick(perf, returned, cd.get(), op);
  const auto ws = workspace(best.memory, index);
  const ScalingFactor one(1.0), zero(0.0);
  EMBER_CUDNN_CHECK(cudnnConvolutionBackwardData(h, one.get(dt), wd.get(), w.data_ptr(), dyd.get(), x.data_ptr(),
                                                 cd.get(), best.algo, ws.get(), best.memory, zero.get(dt), dxd.get(),
                                                 out.data_ptr()));
  add_bias(out, bias, dxd, h, op);
}

void conv2d_weight(Tensor& gw, const Tensor& x, const Tensor& gy, const cpu::ConvGeom& g) {
  const char* op = "conv2d_weight";
  if (gw.numel() == 0) return;
  const int index = x.device().index;
  DeviceGuard guard(index);
  const DType dt = x.dtype();
  if (x.numel() == 0 || gy.numel() == 0) {  // an empty batch: zero gradient
    EMBER_CUDA_CHECK(cudaMemsetAsync(gw.data_ptr(), 0, gw.numel() * itemsize(dt), current_cuda_stream(index)));
    return;
  }
  cudnnHandle_t h = cudnn_handle(index);
  const TensorDescriptor xd = nchw(x, op), dyd = nchw(gy, op);
  const FilterDescriptor wd(dt, gw, op);
  const ConvDescriptor cd(dt, g);
  std::array<cudnnConvolutionBwdFilterAlgoPerf_t, 8> perf{};
  int returned = 0;
  EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, xd.get(), dyd.get(), cd.get(), wd.get(),
                                                                  static_cast<int>(perf.size()), &returned,
                                                                  perf.data()));
  const auto& best = pick(perf, returned, cd.get(), op);
  const auto ws = workspace(best.memory, index);
  const ScalingFactor one(1.0), zero(0.0);
  EMBER_CUDNN_CHECK(cudnnConvolutionBackwardFilter(h, one.get(dt), xd.get(), x.data_ptr(), dyd.get(), gy.data_ptr(),
                                                   cd.get(), best.algo, ws.get(), best.memory, zero.get(dt),
                                                   wd.get(), gw.data_ptr()));
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

void conv2d(Tensor&, const Tensor&, const Tensor&, const Tensor&, const cpu::ConvGeom&) { no_cudnn("conv2d"); }
void conv_transpose2d(Tensor&, const Tensor&, const Tensor&, const Tensor&, const cpu::ConvGeom&) {
  no_cudnn("conv_transpose2d");
}
void conv2d_weight(Tensor&, const Tensor&, const Tensor&, const cpu::ConvGeom&) { no_cudnn("conv2d"); }

}  // namespace ember::cuda

#endif  // EMBER_HAS_CUDNN
