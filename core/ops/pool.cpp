// The pool family's front-ends: PyTorch's argument checks and output sizes;
// 1-D and unbatched inputs are viewed as batched 2-D ones.
#include <ember/core/ops/pool.h>
#include <algorithm>
#include <limits>
#include <vector>

#include <ember/autograd/functions/pool.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/determinism.h>
#include <ember/core/error.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/shape.h>
#include <ember/cuda/pool.h>

namespace ember {

namespace functions = autograd::functions;

namespace {

std::string list_str(const IntList& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

IntList expand_arg(const char* op, const char* name, const IntList& v, size_t n) {
  EMBER_CHECK(v.size() == 1 || v.size() == n, Error, op, ": expected ", name, " to be a single integer or a list of ",
              n, " integers, but got ", list_str(v));
  return v.size() == 1 ? IntList(n, v[0]) : v;
}

// Checks x and returns it as [N, C, H, W] (1-D: H = 1).
Tensor to_4d(const char* op, const Tensor& x, int64_t spatial, bool& batched) {
  EMBER_CHECK(x.defined(), ValueError, op, ": got an undefined tensor");
  EMBER_CHECK(x.dim() == spatial + 1 || x.dim() == spatial + 2, Error, op, ": expected ", spatial + 1, "-D or ",
              spatial + 2, "-D (batched) input, but got input of size ", x.shape_str());
  for (int64_t d = x.dim() - spatial - 1; d < x.dim(); ++d) {
    EMBER_CHECK(x.size(d) > 0, Error, op, ": expected input of size ", x.shape_str(),
                " to have non-zero sizes in its non-batch dims");
  }
  EMBER_CHECK(is_floating(x.dtype()), Error, op, ": not implemented for ", dtype_name(x.dtype()));
  batched = x.dim() == spatial + 2;
  Tensor r = batched ? x : unsqueeze(x, 0);
  return spatial == 1 ? unsqueeze(r, -2) : r;
}

Tensor from_4d(const Tensor& t, int64_t spatial, bool batched) {
  Tensor r = spatial == 1 ? squeeze(t, -2) : t;
  return batched ? r : squeeze(r, 0);
}

// PyTorch's pooling output size along one dim, in 128 bits: kernel sizes,
// strides and dilations near 2**63 would overflow int64 (undefined). The
// caller checks that it is positive; it is then at most in + 1.
using Wide = __int128;
Wide pooled_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const Wide num = Wide(in) + Wide(2) * p - Wide(d) * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  Wide out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= Wide(in) + p) --out;
  return out;
}

// Fills the fixed-window part of a PoolGeom for 4-D x; kernel etc. have `spatial` entries.
cpu::PoolGeom fixed_geom(const char* op, const Tensor& x4, const Tensor& x, int64_t spatial, const IntList& k_in,
                         const IntList& s_in, const IntList& p_in, const IntList& d_in, bool ceil_mode,
                         bool dilated) {
  const IntList k = expand_arg(op, "kernel_size", k_in, spatial);
  const IntList s = s_in.empty() ? k : expand_arg(op, "stride", s_in, spatial);
  const IntList p = expand_arg(op, "padding", p_in, spatial);
  const IntList d = expand_arg(op, "dilation", d_in, spatial);
  for (size_t i = 0; i < k.size(); ++i) {
    EMBER_CHECK(k[i] > 0, Error, op, ": kernel_size must be greater than zero, but got ", list_str(k));
    EMBER_CHECK(s[i] > 0, Error, op, ": stride must be greater than zero, but got ", list_str(s));
    EMBER_CHECK(d[i] > 0, Error, op, ": dilation must be greater than zero, but got ", list_str(d));
    EMBER_CHECK(p[i] >= 0, Error, op, ": padding must be non-negative, but got ", list_str(p));
    const Wide span = dilated ? Wide(k[i] - 1) * d[i] + 1 : Wide(k[i]);
    EMBER_CHECK(span <= std::numeric_limits<int64_t>::max(), Error, op, ": kernel_size ", list_str(k),
                " with dilation ", list_str(d), " spans more than int64 can index");
    const int64_t half = static_cast<int64_t>(span / 2);
    EMBER_CHECK(p[i] <= half, Error, op, ": pad should be at most half of ", dilated ? "effective " : "",
                "kernel size, but got pad=", p[i], ", kernel_size=", k[i], " and dilation=", d[i]);
  }
  cpu::PoolGeom g;
  const size_t last = k.size() - 1;
  g.kw = k[last], g.sw = s[last], g.pw = p[last], g.dw = d[last];
  if (spatial == 2) g.kh = k[0], g.sh = s[0], g.ph = p[0], g.dh = d[0];
  g.H = x4.size(2), g.W = x4.size(3);
  const Wide oh = spatial == 2 ? pooled_size(g.H, g.kh, g.sh, g.ph, g.dh, ceil_mode) : 1;
  const Wide ow = pooled_size(g.W, g.kw, g.sw, g.pw, g.dw, ceil_mode);
  // A negative size far below int64's range is reported as the range's minimum.
  const auto shown = [](Wide v) { return static_cast<int64_t>(std::max<Wide>(v, std::numeric_limits<int64_t>::min())); };
  g.OH = shown(oh), g.OW = shown(ow);
  EMBER_CHECK(oh > 0 && ow > 0, Error, op, ": given input of size ", x.shape_str(), ", the calculated output size ",
              spatial == 2 ? list_str({g.OH, g.OW}) : list_str({g.OW}), " is too small");
  return g;
}

cpu::PoolGeom adaptive_geom(const char* op, const Tensor& x4, int64_t spatial, const IntList& size_in) {
  const IntList size = expand_arg(op, "output_size", size_in, spatial);
  for (int64_t s : size) EMBER_CHECK(s >= 0, Error, op, ": output_size must be non-negative, but got ", list_str(size));
  cpu::PoolGeom g;
  g.adaptive = true;
  g.H = x4.size(2), g.W = x4.size(3);
  g.OH = spatial == 2 ? size[0] : 1;
  g.OW = size.back();
  return g;
}

std::tuple<Tensor, Tensor> max_pool(const Tensor& x4, const cpu::PoolGeom& g) {
  // The CPU computes half types in float32; the GPU kernels read them directly.
  const DType dt = x4.dtype(), compute = is_half(dt) && x4.device().is_cpu() ? DType::Float32 : dt;
  const Shape out_shape{x4.size(0), x4.size(1), g.OH, g.OW};
  Tensor out = empty(out_shape, compute, x4.device());
  Tensor idx = empty(out_shape, DType::Int64, x4.device());
  {
    autograd::NoGradGuard no_grad;
    if (x4.device().is_cuda()) {
      cuda::max_pool2d(out, idx, x4.contiguous(), g);
    } else {
      cpu::max_pool2d(out, idx, x4.to(compute).contiguous(), g);
    }
    if (compute != dt) out = out.to(dt);
  }
  if (autograd::any_requires_grad({x4})) {
    autograd::record(g.adaptive ? "AdaptiveMaxPool2DBackward0" : "MaxPool2DWithIndicesBackward0", {x4}, {out, idx},
                     {idx}, functions::max_pool_backward(x4.shape()));
  }
  return {out, idx};
}

std::tuple<Tensor, Tensor> max_pool_nd(const char* op, int64_t spatial, const Tensor& x, const IntList& k,
                                       const IntList& s, const IntList& p, const IntList& d, bool ceil_mode) {
  bool batched;
  const Tensor x4 = to_4d(op, x, spatial, batched);
  auto [out, idx] = max_pool(x4, fixed_geom(op, x4, x, spatial, k, s, p, d, ceil_mode, true));
  return {from_4d(out, spatial, batched), from_4d(idx, spatial, batched)};
}

Tensor avg_pool_nd(const char* op, int64_t spatial, const Tensor& x, const IntList& k, const IntList& s,
                   const IntList& p, bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor) {
  bool batched;
  const Tensor x4 = to_4d(op, x, spatial, batched);
  cpu::PoolGeom g = fixed_geom(op, x4, x, spatial, k, s, p, {1}, ceil_mode, false);
  EMBER_CHECK(!divisor || *divisor != 0, Error, op, ": divisor must be not zero");
  g.count_include_pad = count_include_pad;
  g.divisor_override = divisor.value_or(0);
  return from_4d(pool_detail::avg(x4, g), spatial, batched);
}

// Runs `kernel(out, input)` in the compute dtype, outside autograd.
template <class K>
Tensor run_linear(const Tensor& in, const Shape& out_shape, const K& kernel) {
  const DType dt = in.dtype(), compute = is_half(dt) && in.device().is_cpu() ? DType::Float32 : dt;
  Tensor out = empty(out_shape, compute, in.device());
  autograd::NoGradGuard no_grad;
  kernel(out, in.to(compute).contiguous());
  return compute == dt ? out : out.to(dt);
}

// The most windows that read one input position along a dim: how many adds
// the adjoint makes into one gradient element.
int64_t most_windows_per_position(bool adaptive, int64_t in, int64_t out, int64_t k, int64_t s, int64_t p) {
  if (in <= 0 || out <= 0) return 0;
  std::vector<int64_t> cover(static_cast<size_t>(in) + 1, 0);
  for (int64_t o = 0; o < out; ++o) {
    const int64_t lo = adaptive ? (o * in) / out : std::max<int64_t>(o * s - p, 0);
    const int64_t hi = adaptive ? ((o + 1) * in + out - 1) / out : std::min<int64_t>(o * s - p + k, in);
    if (lo >= hi) continue;
    ++cover[static_cast<size_t>(lo)];
    --cover[static_cast<size_t>(hi)];
  }
  int64_t most = 0, running = 0;
  for (int64_t i = 0; i < in; ++i) most = std::max(most, running += cover[static_cast<size_t>(i)]);
  return most;
}

// The CUDA adjoint adds with atomics. Up to two adds into a zeroed element
// give the same bits in either order (0 + a + b == 0 + b + a); more may not.
void check_avg_adjoint_deterministic(const cpu::PoolGeom& g) {
  if (!deterministic_algorithms()) return;
  const int64_t adds = most_windows_per_position(g.adaptive, g.H, g.OH, g.kh, g.sh, g.ph) *
                       most_windows_per_position(g.adaptive, g.W, g.OW, g.kw, g.sw, g.pw);
  if (adds > 2) alert_not_deterministic(g.adaptive ? "adaptive_avg_pool2d_backward_cuda" : "avg_pool2d_backward_cuda");
}

}  // namespace

namespace pool_detail {

Tensor avg(const Tensor& x, const cpu::PoolGeom& g) {
  Tensor out = run_linear(x, {x.size(0), x.size(1), g.OH, g.OW},
                          [&](Tensor& o, const Tensor& i) {
                            if (i.device().is_cuda()) {
                              cuda::avg_pool2d(o, i, g);
                            } else {
                              cpu::avg_pool2d(o, i, g);
                            }
                          });
  if (autograd::any_requires_grad({x})) {
    autograd::record(g.adaptive ? "AdaptiveAvgPool2DBackward0" : "AvgPool2DBackward0", {x}, {out}, {},
                     functions::avg_pool_backward(g));
  }
  return out;
}

Tensor avg_adjoint(const Tensor& gy, const cpu::PoolGeom& g) {
  Tensor out = run_linear(gy, {gy.size(0), gy.size(1), g.H, g.W},
                          [&](Tensor& o, const Tensor& i) {
                            if (i.device().is_cuda()) {
                              check_avg_adjoint_deterministic(g);
                              cuda::avg_pool2d_backward(o, i, g);
                            } else {
                              cpu::avg_pool2d_backward(o, i, g);
                            }
                          });
  if (autograd::any_requires_grad({gy})) {
    autograd::record(g.adaptive ? "AdaptiveAvgPool2DBackwardBackward0" : "AvgPool2DBackwardBackward0", {gy}, {out},
                     {}, functions::avg_pool_adjoint_backward(g));
  }
  return out;
}

}  // namespace pool_detail

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const IntList& kernel_size,
                                                   const IntList& stride, const IntList& padding,
                                                   const IntList& dilation, bool ceil_mode) {
  return max_pool_nd("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor max_pool2d(const Tensor& input, const IntList& kernel_size, const IntList& stride, const IntList& padding,
                  const IntList& dilation, bool ceil_mode) {
  return std::get<0>(max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode));
}

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const IntList& kernel_size,
                                                   const IntList& stride, const IntList& padding,
                                                   const IntList& dilation, bool ceil_mode) {
  return max_pool_nd("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor avg_pool2d(const Tensor& input, const IntList& kernel_size, const IntList& stride, const IntList& padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  return avg_pool_nd("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override);
}

Tensor avg_pool1d(const Tensor& input, const IntList& kernel_size, const IntList& stride, const IntList& padding,
                  bool ceil_mode, bool count_include_pad) {
  return avg_pool_nd("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     std::nullopt);
}

Tensor adaptive_avg_pool2d(const Tensor& input, const IntList& output_size) {
  bool batched;
  const Tensor x4 = to_4d("adaptive_avg_pool2d", input, 2, batched);
  const cpu::PoolGeom g = adaptive_geom("adaptive_avg_pool2d", x4, 2, output_size);
  if (g.OH == 1 && g.OW == 1 && g.H * g.W > 0 && is_floating(x4.dtype())) {
    // A global average (the head of most convnets) is a mean over each plane, a contiguous row
    // (the pooling kernel walked it as a window): PyTorch takes the same shortcut.
    return from_4d(mean(x4, {2, 3}, true, std::nullopt), 2, batched);
  }
  return from_4d(pool_detail::avg(x4, g), 2, batched);
}

Tensor adaptive_avg_pool1d(const Tensor& input, const IntList& output_size) {
  bool batched;
  const Tensor x4 = to_4d("adaptive_avg_pool1d", input, 1, batched);
  return from_4d(pool_detail::avg(x4, adaptive_geom("adaptive_avg_pool1d", x4, 1, output_size)), 1, batched);
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, const IntList& output_size) {
  bool batched;
  const Tensor x4 = to_4d("adaptive_max_pool2d", input, 2, batched);
  auto [out, idx] = max_pool(x4, adaptive_geom("adaptive_max_pool2d", x4, 2, output_size));
  return {from_4d(out, 2, batched), from_4d(idx, 2, batched)};
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& input, const IntList& output_size) {
  bool batched;
  const Tensor x4 = to_4d("adaptive_max_pool1d", input, 1, batched);
  auto [out, idx] = max_pool(x4, adaptive_geom("adaptive_max_pool1d", x4, 1, output_size));
  return {from_4d(out, 1, batched), from_4d(idx, 1, batched)};
}

}  // namespace ember
