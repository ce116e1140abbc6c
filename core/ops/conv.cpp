// The conv family's front-ends: PyTorch's argument rules and error messages,
// unbatched and 1-D inputs reshaped to batched 2-D ones, then one of three
// primitives (conv, conv_transpose, conv_weight) that cast half types to
// float32, make inputs contiguous, call the CPU kernel and record autograd.
#include <ember/core/ops/conv.h>
#include <ember/core/autocast.h>

#include <algorithm>
#include <limits>
#include <mutex>

#include <ember/autograd/functions/conv.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/shape.h>
#include <ember/core/type_promotion.h>
#include <ember/cuda/conv.h>

namespace ember {

namespace functions = autograd::functions;

namespace {

// The CPU kernels compute half types in float32; cuDNN reads them directly.
DType compute_dtype(DType t, const Device& dev) { return is_half(t) && dev.is_cpu() ? DType::Float32 : t; }

// Casts and lays out an operand for the kernel, outside autograd.
Tensor prepare(const Tensor& t, DType compute) {
  if (!t.defined()) return t;
  return t.to(compute).contiguous();
}

std::string list_str(const IntList& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// One entry per spatial dim from a list of 1 or `n` entries.
IntList expand_arg(const char* op, const char* name, const IntList& v, size_t n) {
  EMBER_CHECK(v.size() == 1 || v.size() == n, Error, op, ": expected ", name, " to be a single integer or a list of ",
              n, " integers, but got ", list_str(v));
  return v.size() == 1 ? IntList(n, v[0]) : v;
}

void check_common(const char* op, const Tensor& x, const Tensor& w, const Tensor& b, int64_t spatial, int64_t groups) {
  EMBER_CHECK(x.defined() && w.defined(), ValueError, op, ": got an undefined tensor");
  std::vector<Tensor> ts{x, w};
  if (b.defined()) ts.push_back(b);
  const Device dev = common_device(op, ts);
  (void)dev;  // every conv runs through the 2-D primitives, which have CUDA kernels (cuDNN)
  EMBER_CHECK(x.dim() == spatial + 1 || x.dim() == spatial + 2, Error, op, ": expected ", spatial + 1,
              "-D (unbatched) or ", spatial + 2, "-D (batched) input, but got input of size ", x.shape_str());
  EMBER_CHECK(w.dim() == spatial + 2, Error, op, ": expected weight to be ", spatial + 2,
              "-D, but got weight of size ", w.shape_str());
  for (int64_t d = 2; d < w.dim(); ++d) {
    EMBER_CHECK(w.size(d) > 0, Error, op, ": kernel size should be greater than zero, but got weight of size ",
                w.shape_str());
  }
  EMBER_CHECK(is_floating(x.dtype()), Error, op, ": expected a floating point input, but got ",
              dtype_name(x.dtype()));
  EMBER_CHECK(x.dtype() == w.dtype(), Error, op, ": expected input (", dtype_name(x.dtype()), ") and weight (",
              dtype_name(w.dtype()), ") to have the same dtype");
  EMBER_CHECK(!b.defined() || b.dtype() == x.dtype(), Error, op, ": expected input (", dtype_name(x.dtype()),
              ") and bias (", dtype_name(b.dtype()), ") to have the same dtype");
  EMBER_CHECK(groups > 0, Error, op, ": non-positive groups is not supported, got groups=", groups);
}

void check_positive(const char* op, const char* what, const IntList& v) {
  for (int64_t s : v) EMBER_CHECK(s > 0, Error, op, ": non-positive ", what, " is not supported, got ", list_str(v));
}

void check_nonnegative(const char* op, const char* what, const IntList& v) {
  for (int64_t s : v) EMBER_CHECK(s >= 0, Error, op, ": negative ", what, " is not supported, got ", list_str(v));
}

// Output sizes are computed in 128 bits: strides, paddings and dilations near
// 2**63 would overflow int64 (undefined) and could turn an error into a shape.
using Wide = __int128;
bool fits_int64(Wide v) {
  return v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max();
}

// x as [N, C, H, W] (1-D convs get H = 1) and w as [O, I, KH, KW].
Tensor as_4d(const Tensor& t, int64_t spatial, bool batched) {
  Tensor r = batched ? t : unsqueeze(t, 0);
  return spatial == 1 ? unsqueeze(r, -2) : r;
}

Tensor from_4d(const Tensor& t, int64_t spatial, bool batched) {
  Tensor r = spatial == 1 ? squeeze(t, -2) : t;
  return batched ? r : squeeze(r, 0);
}

// Shared by conv1d/conv2d. pad_begin/pad_end per spatial dim (conv_nd_string
// passes equal ones: cuDNN pads symmetrically).
Tensor conv_nd(const char* op, int64_t spatial, const Tensor& x, const Tensor& w, const Tensor& b,
               const IntList& stride_in, const IntList& pad_begin, const IntList& pad_end, const IntList& dil_in,
               int64_t groups) {
  const IntList stride = expand_arg(op, "stride", stride_in, spatial);
  const IntList dil = expand_arg(op, "dilation", dil_in, spatial);
  check_positive(op, "stride", stride);
  check_positive(op, "dilation", dil);
  check_nonnegative(op, "padding", pad_begin);
  const bool batched = x.dim() == spatial + 2;
  const int64_t C = x.size(batched ? 1 : 0), OC = w.size(0);
  EMBER_CHECK(OC % groups == 0, Error, op, ": expected weight of size ", w.shape_str(),
              " to have out channels divisible by groups=", groups);
  EMBER_CHECK(C == w.size(1) * groups, Error, op, ": given groups=", groups, ", weight of size ", w.shape_str(),
              ", expected input ", x.shape_str(), " to have ", w.size(1) * groups, " channels, but got ", C,
              " channels instead");
  EMBER_CHECK(!b.defined() || (b.dim() == 1 && b.size(0) == OC), Error, op, ": expected bias of size [", OC,
              "], but got ", b.shape_str());
  IntList out_size, step;
  for (int64_t i = 0; i < spatial; ++i) {
    const int64_t in = x.size(x.dim() - spatial + i), k = w.size(2 + i);
    const Wide wide_padded = Wide(in) + pad_begin[i] + pad_end[i], wide_span = Wide(dil[i]) * (k - 1) + 1;
    EMBER_CHECK(fits_int64(wide_padded) && fits_int64(wide_span), Error, op, ": padding ", list_str(pad_begin),
                " or dilation ", list_str(dil), " is too large for input ", x.shape_str(), " and weight ",
                w.shape_str());
    const int64_t padded = static_cast<int64_t>(wide_padded), span = static_cast<int64_t>(wide_span);
    EMBER_CHECK(padded >= span, Error, op, ": padded input size per channel ", padded, " (input ", x.shape_str(),
                ") is smaller than the dilated kernel size ", span, " (weight ", w.shape_str(), ")");
    out_size.push_back((padded - span) / stride[i] + 1);  // at most padded: span >= 1
    // Any stride past padded - span leaves the one window at the start: the
    // smallest such (cuDNN takes int strides; stride=2**63-1 is one of them).
    step.push_back(std::min(stride[i], padded - span + 1));
  }
  cpu::ConvGeom g;
  g.groups = groups;
  if (spatial == 2) {
    g.stride_h = step[0], g.stride_w = step[1], g.pad_h = pad_begin[0], g.pad_w = pad_begin[1];
    g.dil_h = dil[0], g.dil_w = dil[1];
  } else {
    g.stride_w = step[0], g.pad_w = pad_begin[0], g.dil_w = dil[0];
  }
  const int64_t OH = spatial == 2 ? out_size[0] : 1, OW = out_size.back();
  Tensor out = conv_detail::conv(as_4d(x, spatial, batched), as_4d(w, spatial, true), b, g, OH, OW);
  return from_4d(out, spatial, batched);
}

Tensor conv_nd_padded(const char* op, int64_t spatial, const Tensor& x, const Tensor& w, const Tensor& b,
                      const IntList& stride, const IntList& padding, const IntList& dil, int64_t groups) {
  if (autocast::Scope ac{op, x, w, b}; ac)
    return conv_nd_padded(op, spatial, ac[0], ac[1], ac[2], stride, padding, dil, groups);
  check_common(op, x, w, b, spatial, groups);
  const IntList pad = expand_arg(op, "padding", padding, spatial);
  return conv_nd(op, spatial, x, w, b, stride, pad, pad, dil, groups);
}

Tensor conv_nd_string(const char* op, int64_t spatial, const Tensor& x, const Tensor& w, const Tensor& b,
                      const IntList& stride, const std::string& padding, const IntList& dil_in, int64_t groups) {
  if (autocast::Scope ac{op, x, w, b}; ac)
    return conv_nd_string(op, spatial, ac[0], ac[1], ac[2], stride, padding, dil_in, groups);
  check_common(op, x, w, b, spatial, groups);
  if (padding == "valid") return conv_nd(op, spatial, x, w, b, stride, IntList(spatial, 0), IntList(spatial, 0), dil_in, groups);
  EMBER_CHECK(padding == "same", Error, op, ": invalid padding string '", padding, "', expected 'valid' or 'same'");
  for (int64_t s : expand_arg(op, "stride", stride, spatial)) {
    EMBER_CHECK(s == 1, Error, op, ": padding='same' is not supported for strided convolutions");
  }
  const IntList dil = expand_arg(op, "dilation", dil_in, spatial);
  IntList begin;
  Tensor padded = x;
  for (int64_t i = 0; i < spatial; ++i) {
    // PyTorch pads total/2 on both sides and the odd one at the end. cuDNN's
    // convolution descriptor has one padding per dim, applied on both sides
    // (and rejects an output one larger), so the odd one is a zero row or
    // column appended to the input, as PyTorch does for every backend.
    const int64_t total = dil[i] * (w.size(2 + i) - 1);
    begin.push_back(total / 2);
    if (total % 2 != 0) {
      const int64_t d = x.dim() - spatial + i;
      Shape extra = padded.shape();
      extra[static_cast<size_t>(d)] = 1;
      padded = cat({padded, zeros(extra, padded.dtype(), padded.device())}, d);
    }
  }
  return conv_nd(op, spatial, padded, w, b, stride, begin, begin, dil, groups);
}

// A transposed convolution whose output_padding reaches its stride (allowed
// when it stays below the dilation) is one cuDNN cannot run: its output is
// the input gradient of a convolution whose output would have more rows than
// x, and cuDNN rejects the mismatch (PyTorch avoids cuDNN there). It is the
// full transposed convolution (no padding) cropped by `padding` at the start
// and extended with zero rows at the end, which every backend runs; the bias
// is added last.
Tensor conv_transpose_cropped(const Tensor& x4, const Tensor& w4, const Tensor& b, const cpu::ConvGeom& g, int64_t H,
                              int64_t W) {
  cpu::ConvGeom full = g;
  full.pad_h = full.pad_w = 0;
  const int64_t FH = (x4.size(2) - 1) * g.stride_h + g.dil_h * (w4.size(2) - 1) + 1;
  const int64_t FW = (x4.size(3) - 1) * g.stride_w + g.dil_w * (w4.size(3) - 1) + 1;
  Tensor out = conv_detail::conv_transpose(x4, w4, Tensor(), full, FH, FW);
  const int64_t sizes[2] = {H, W}, fulls[2] = {FH, FW}, pads[2] = {g.pad_h, g.pad_w};
  for (int64_t i = 0; i < 2; ++i) {
    const int64_t d = 2 + i, keep = std::max<int64_t>(0, std::min(sizes[i], fulls[i] - pads[i]));
    out = narrow(out, d, std::min(pads[i], fulls[i]), keep);
    if (keep < sizes[i]) {
      Shape zero_shape = out.shape();
      zero_shape[static_cast<size_t>(d)] = sizes[i] - keep;
      out = cat({out, zeros(zero_shape, out.dtype(), out.device())}, d);
    }
  }
  if (b.defined()) out = add(out, b.reshape({1, b.size(0), 1, 1}));
  return out;
}

Tensor conv_transpose_nd(const char* op, int64_t spatial, const Tensor& x, const Tensor& w, const Tensor& b,
                         const IntList& stride_in, const IntList& pad_in, const IntList& outpad_in, int64_t groups,
                         const IntList& dil_in) {
  if (autocast::Scope ac{op, x, w, b}; ac)
    return conv_transpose_nd(op, spatial, ac[0], ac[1], ac[2], stride_in, pad_in, outpad_in, groups, dil_in);
  check_common(op, x, w, b, spatial, groups);
  const IntList stride = expand_arg(op, "stride", stride_in, spatial);
  const IntList pad = expand_arg(op, "padding", pad_in, spatial);
  const IntList outpad = expand_arg(op, "output_padding", outpad_in, spatial);
  const IntList dil = expand_arg(op, "dilation", dil_in, spatial);
  check_positive(op, "stride", stride);
  check_positive(op, "dilation", dil);
  check_nonnegative(op, "padding", pad);
  check_nonnegative(op, "output_padding", outpad);
  const bool batched = x.dim() == spatial + 2;
  const int64_t Cin = x.size(batched ? 1 : 0);
  EMBER_CHECK(w.size(0) == Cin, Error, op, ": given groups=", groups, ", weight of size ", w.shape_str(),
              ", expected input ", x.shape_str(), " to have ", w.size(0), " channels, but got ", Cin,
              " channels instead");
  EMBER_CHECK(Cin % groups == 0, Error, op, ": expected input channels ", Cin, " to be divisible by groups=", groups);
  const int64_t Cout = w.size(1) * groups;
  EMBER_CHECK(!b.defined() || (b.dim() == 1 && b.size(0) == Cout), Error, op, ": expected bias of size [", Cout,
              "], but got ", b.shape_str());
  IntList out_size;
  for (int64_t i = 0; i < spatial; ++i) {
    EMBER_CHECK(outpad[i] < stride[i] || outpad[i] < dil[i], Error, op,
                ": output padding must be smaller than either stride or dilation, but got output_padding=",
                list_str(outpad), ", stride=", list_str(stride), ", dilation=", list_str(dil));
    const int64_t in = x.size(x.dim() - spatial + i), k = w.size(2 + i);
    const Wide o = Wide(in - 1) * stride[i] - Wide(2) * pad[i] + Wide(dil[i]) * (k - 1) + outpad[i] + 1;
    EMBER_CHECK(fits_int64(o), Error, op, ": stride ", list_str(stride), ", padding ", list_str(pad),
                " or dilation ", list_str(dil), " is too large for input ", x.shape_str(), " and weight ",
                w.shape_str());
    EMBER_CHECK(o > 0, Error, op, ": input ", x.shape_str(), " with weight ", w.shape_str(),
                " gives a non-positive output size ", static_cast<int64_t>(o));
    out_size.push_back(static_cast<int64_t>(o));
  }
  bool big_output_padding = false;
  for (int64_t i = 0; i < spatial; ++i) big_output_padding = big_output_padding || outpad[i] >= stride[i];
  cpu::ConvGeom g;
  g.groups = groups;
  if (spatial == 2) {
    g.stride_h = stride[0], g.stride_w = stride[1], g.pad_h = pad[0], g.pad_w = pad[1];
    g.dil_h = dil[0], g.dil_w = dil[1];
  } else {
    g.stride_w = stride[0], g.pad_w = pad[0], g.dil_w = dil[0];
  }
  const Tensor x4 = as_4d(x, spatial, batched), w4 = as_4d(w, spatial, true);
  if (big_output_padding) {
    return from_4d(conv_transpose_cropped(x4, w4, b, g, spatial == 2 ? out_size[0] : 1, out_size.back()), spatial,
                   batched);
  }
  const int64_t H = spatial == 2 ? out_size[0] : 1, W = out_size.back();
  Tensor out = conv_detail::conv_transpose(x4, w4, b, g, H, W);
  return from_4d(out, spatial, batched);
}

// Runs `kernel(out, prepared operands, on_cuda)` with the operands detached
// and cast to the compute dtype (float32 for half inputs on the CPU), and
// returns `out` in x's dtype.
template <class Kernel>
Tensor run_in_compute_dtype(const Shape& shape, const Tensor& x, std::vector<Tensor> operands, Kernel kernel) {
  const DType dt = x.dtype(), compute = compute_dtype(dt, x.device());
  Tensor out = empty(shape, compute, x.device());
  autograd::NoGradGuard no_grad;
  for (Tensor& t : operands) t = prepare(t, compute);
  kernel(out, operands, x.device().is_cuda());
  return compute != dt ? out.to(dt) : out;
}

}  // namespace

namespace {
std::mutex g_cudnn_flags_mutex;
CudnnFlags g_cudnn_flags;
}  // namespace

CudnnFlags cudnn_flags() {
  std::lock_guard<std::mutex> lock(g_cudnn_flags_mutex);
  return g_cudnn_flags;
}

void set_cudnn_flags(const CudnnFlags& flags) {
  std::lock_guard<std::mutex> lock(g_cudnn_flags_mutex);
  g_cudnn_flags = flags;
}

namespace {

// Every convolution runs, in each direction, as cuDNN's forward convolution
// from an image [H, W] to a grid [OH, OW] with one padding per dim on both
// sides, and cuDNN refuses shapes other than that convolution's: OH must be
// (H + 2 pad - dil (KH - 1) - 1) / stride + 1. The CPU kernels would accept
// more, so the rule is checked on every device: a geometry cuDNN cannot run
// fails here on any machine instead of first on a GPU.
void check_cudnn_geometry(const char* op, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t OH, int64_t OW,
                          const cpu::ConvGeom& g) {
  auto grid = [](int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
    const Wide room = Wide(in) + Wide(2) * pad - Wide(dil) * (k - 1) - 1;  // no int64 overflow
    return room < 0 ? Wide(-1) : room / stride + 1;
  };
  EMBER_CHECK(grid(H, KH, g.stride_h, g.pad_h, g.dil_h) == OH && grid(W, KW, g.stride_w, g.pad_w, g.dil_w) == OW, Error,
              op, ": internal error: an image of [", H, ", ", W, "] and a kernel of [", KH, ", ", KW, "] with stride [",
              g.stride_h, ", ", g.stride_w, "], padding [", g.pad_h, ", ", g.pad_w, "] and dilation [", g.dil_h, ", ",
              g.dil_w, "] do not make a [", OH, ", ", OW, "] grid, which cuDNN would refuse");
}

}  // namespace

namespace conv_detail {

Tensor conv(const Tensor& x, const Tensor& w, const Tensor& bias, const cpu::ConvGeom& g, int64_t OH, int64_t OW) {
  check_cudnn_geometry("conv2d", x.size(2), x.size(3), w.size(2), w.size(3), OH, OW, g);
  Tensor out = run_in_compute_dtype({x.size(0), w.size(0), OH, OW}, x, {x, w, bias},
                                    [&](Tensor& o, const std::vector<Tensor>& p, bool on_cuda) {
                                      on_cuda ? cuda::conv2d(o, p[0], p[1], p[2], g) : cpu::conv2d(o, p[0], p[1], p[2], g);
                                    });
  if (autograd::any_requires_grad({x, w, bias})) {
    autograd::record("ConvolutionBackward0", {x, w, bias}, {out}, {x, w}, functions::conv_backward(g));
  }
  return out;
}

Tensor conv_transpose(const Tensor& x, const Tensor& w, const Tensor& bias, const cpu::ConvGeom& g, int64_t H,
                      int64_t W) {
  check_cudnn_geometry("conv_transpose2d", H, W, w.size(2), w.size(3), x.size(2), x.size(3), g);
  Tensor out = run_in_compute_dtype({x.size(0), w.size(1) * g.groups, H, W}, x, {x, w, bias},
                                    [&](Tensor& o, const std::vector<Tensor>& p, bool on_cuda) {
                                      on_cuda ? cuda::conv_transpose2d(o, p[0], p[1], p[2], g)
                                              : cpu::conv_transpose2d(o, p[0], p[1], p[2], g);
                                    });
  if (autograd::any_requires_grad({x, w, bias})) {
    autograd::record("ConvolutionBackward0", {x, w, bias}, {out}, {x, w}, functions::conv_transpose_backward(g));
  }
  return out;
}

Tensor conv_weight(const Tensor& x, const Tensor& gy, const cpu::ConvGeom& g, int64_t KH, int64_t KW) {
  check_cudnn_geometry("conv2d_weight", x.size(2), x.size(3), KH, KW, gy.size(2), gy.size(3), g);
  Tensor out = run_in_compute_dtype({gy.size(1), x.size(1) / g.groups, KH, KW}, x, {x, gy},
                                    [&](Tensor& o, const std::vector<Tensor>& p, bool on_cuda) {
                                      on_cuda ? cuda::conv2d_weight(o, p[0], p[1], g) : cpu::conv2d_weight(o, p[0], p[1], g);
                                    });
  if (autograd::any_requires_grad({x, gy})) {
    autograd::record("ConvolutionBackwardBackward0", {x, gy}, {out}, {x, gy}, functions::conv_weight_backward(g));
  }
  return out;
}

}  // namespace conv_detail

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
              const IntList& padding, const IntList& dilation, int64_t groups) {
  return conv_nd_padded("conv2d", 2, input, weight, bias, stride, padding, dilation, groups);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
              const std::string& padding, const IntList& dilation, int64_t groups) {
  return conv_nd_string("conv2d", 2, input, weight, bias, stride, padding, dilation, groups);
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
              const IntList& padding, const IntList& dilation, int64_t groups) {
  return conv_nd_padded("conv1d", 1, input, weight, bias, stride, padding, dilation, groups);
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
              const std::string& padding, const IntList& dilation, int64_t groups) {
  return conv_nd_string("conv1d", 1, input, weight, bias, stride, padding, dilation, groups);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
                        const IntList& padding, const IntList& output_padding, int64_t groups,
                        const IntList& dilation) {
  return conv_transpose_nd("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
                        const IntList& padding, const IntList& output_padding, int64_t groups,
                        const IntList& dilation) {
  return conv_transpose_nd("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation);
}

}  // namespace ember
