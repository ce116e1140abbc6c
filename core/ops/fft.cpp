#include <ember/core/ops/fft.h>

#include <complex>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/fft_kernel.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/complex.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/shape.h>
#include <ember/core/shape.h>
#include <ember/cuda/fft.h>

namespace ember {

namespace {

using autograd::TensorList;

// A contiguous tensor seen as [outer, n, inner] around the transformed dim.
struct Lines {
  int64_t outer = 1, inner = 1;
};

Lines lines_around(const Shape& shape, int64_t dim) {
  Lines l;
  for (int64_t d = 0; d < dim; ++d) l.outer *= shape[d];
  for (int64_t d = dim + 1; d < static_cast<int64_t>(shape.size()); ++d) l.inner *= shape[d];
  return l;
}

// Calls run(in_offset, out_offset, stride, dist, batch) for the transforms
// along the middle dim of [outer, n_in, inner] -> [outer, n_out, inner]
// (offsets in elements): one call when the dim is last, else one per outer
// index, whose `inner` transforms interleave with stride `inner`.
template <class Run>
void for_each_batch(const Lines& l, int64_t n_in, int64_t n_out, Run&& run) {
  if (l.outer * l.inner == 0) return;
  if (l.inner == 1) return run(0, 0, 1, n_in, n_out, l.outer);
  for (int64_t o = 0; o < l.outer; ++o) run(o * n_in * l.inner, o * n_out * l.inner, l.inner, 1, 1, l.inner);
}

template <class T>
void c2c_in_place(Tensor& z, int64_t dim, bool forward) {
  using C = std::complex<T>;
  const int64_t n = z.size(dim);
  C* data = static_cast<C*>(z.data_ptr());
  const bool gpu = z.device().is_cuda();
  for_each_batch(lines_around(z.shape(), dim), n, n,
                 [&](int64_t in_off, int64_t, int64_t stride, int64_t dist, int64_t, int64_t batch) {
                   if (gpu) cuda::fft_c2c<T>(data + in_off, stride, dist, data + in_off, stride, dist, n, batch, !forward,
                                             z.device().index);
                   else cpu::fft_c2c<T>(data + in_off, stride, dist, data + in_off, stride, dist, n, batch, !forward);
                 });
}

template <class T>
void r2c_lines(const Tensor& x, Tensor& out, int64_t dim) {
  using C = std::complex<T>;
  const int64_t n = x.size(dim), m = out.size(dim);
  const T* in = static_cast<const T*>(x.data_ptr());
  C* dst = static_cast<C*>(out.data_ptr());
  const bool gpu = x.device().is_cuda();
  for_each_batch(lines_around(x.shape(), dim), n, m,
                 [&](int64_t in_off, int64_t out_off, int64_t stride, int64_t in_dist, int64_t out_dist, int64_t batch) {
                   if (gpu) cuda::fft_r2c<T>(in + in_off, stride, in_dist, dst + out_off, stride, out_dist, n, batch,
                                             x.device().index);
                   else cpu::fft_r2c<T>(in + in_off, stride, in_dist, dst + out_off, stride, out_dist, n, batch);
                 });
}

template <class T>
void c2r_lines(const Tensor& z, Tensor& out, int64_t dim) {
  using C = std::complex<T>;
  const int64_t m = z.size(dim), n = out.size(dim);
  const C* in = static_cast<const C*>(z.data_ptr());
  T* dst = static_cast<T*>(out.data_ptr());
  const bool gpu = z.device().is_cuda();
  for_each_batch(lines_around(z.shape(), dim), m, n,
                 [&](int64_t in_off, int64_t out_off, int64_t stride, int64_t in_dist, int64_t out_dist, int64_t batch) {
                   if (gpu) cuda::fft_c2r<T>(in + in_off, stride, in_dist, dst + out_off, stride, out_dist, n, batch,
                                             z.device().index);
                   else cpu::fft_c2r<T>(in + in_off, stride, in_dist, dst + out_off, stride, out_dist, n, batch);
                 });
}

void scale_in_place(Tensor& t, double scale) {
  if (scale == 1.0) return;
  Tensor parts = is_complex(t.dtype()) ? view_as_real(t) : t;
  parts.mul_(scalar_tensor(scale));
}

// How often each of the m = n/2 + 1 one-sided bins appears in the full
// spectrum of n points (1 for bin 0 and, n even, bin n/2; 2 for the rest),
// shaped to broadcast along `dim` of a `rank`-d tensor.
Tensor bin_multiplicity(int64_t n, int64_t dim, int64_t rank, DType dtype, Device device) {
  const int64_t m = n / 2 + 1;
  Tensor w64 = full({m}, 2.0, DType::Float64, kCPU);
  double* p = w64.data<double>();
  p[0] = 1.0;
  if (n % 2 == 0) p[m - 1] = 1.0;
  Shape shape(rank, 1);
  shape[dim] = m;
  return w64.to(device, dtype).reshape(shape);
}

void check_device(const char* op, const Tensor& t) {
  EMBER_CHECK(t.device().is_cpu() || t.device().is_cuda(), NotImplementedError, op, ": no FFT for device ",
              t.device().str());
}

}  // namespace

Tensor fft_c2c(const Tensor& z, const std::vector<int64_t>& dims, bool forward, double scale) {
  const char* op = "fft_c2c";
  EMBER_CHECK(z.defined() && is_complex(z.dtype()), TypeError, op, ": expected a complex tensor, got ",
              z.defined() ? dtype_name(z.dtype()) : "None");
  check_device(op, z);
  std::vector<int64_t> wrapped;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, z.dim(), op);
    for (int64_t seen : wrapped) EMBER_CHECK(seen != w, Error, op, ": dim ", d, " appears twice in the dims");
    wrapped.push_back(w);
  }
  Tensor out;
  {
    NoGradGuard no_grad;
    out = z.clone();  // contiguous; transformed in place, one dim after the other
    for (int64_t d : wrapped) {
      if (z.dtype() == DType::Complex64) c2c_in_place<float>(out, d, forward);
      else c2c_in_place<double>(out, d, forward);
    }
    scale_in_place(out, scale);
  }
  if (autograd::any_requires_grad({z})) {
    // The transform is complex-linear with adjoint the opposite transform.
    autograd::record("FftC2CBackward0", {z}, {out}, {},
                     [wrapped, forward, scale](const TensorList& g, const TensorList&, const std::vector<bool>&) {
                       return TensorList{fft_c2c(g[0], wrapped, !forward, scale)};
                     });
  }
  return out;
}

Tensor fft_r2c(const Tensor& x, int64_t dim, double scale) {
  const char* op = "fft_r2c";
  EMBER_CHECK(x.defined() && (x.dtype() == DType::Float32 || x.dtype() == DType::Float64), TypeError, op,
              ": expected a float32 or float64 tensor, got ", x.defined() ? dtype_name(x.dtype()) : "None");
  check_device(op, x);
  const int64_t d = wrap_dim(dim, x.dim(), op);
  const int64_t n = x.size(d);
  Tensor out;
  {
    NoGradGuard no_grad;
    const Tensor in = x.contiguous();
    Shape shape = x.shape();
    shape[d] = n / 2 + 1;
    out = empty(shape, complex_dtype_for(x.dtype()), x.device());
    if (x.dtype() == DType::Float32) r2c_lines<float>(in, out, d);
    else r2c_lines<double>(in, out, d);
    scale_in_place(out, scale);
  }
  if (autograd::any_requires_grad({x})) {
    // grad_x = Re(sum over the kept bins of g_k e^{+2πi jk/n}): fft_c2r doubles
    // every bin but 0 and n/2, so those get halved first.
    autograd::record("FftR2CBackward0", {x}, {out}, {},
                     [d, n, scale](const TensorList& g, const TensorList&, const std::vector<bool>&) {
                       const Tensor half = bin_multiplicity(n, d, g[0].dim(), complex_part_dtype(g[0].dtype()),
                                                            g[0].device());
                       return TensorList{fft_c2r(ember::div(g[0], half), d, n, scale)};
                     });
  }
  return out;
}

Tensor fft_c2r(const Tensor& z, int64_t dim, int64_t n, double scale) {
  const char* op = "fft_c2r";
  EMBER_CHECK(z.defined() && is_complex(z.dtype()), TypeError, op, ": expected a complex tensor, got ",
              z.defined() ? dtype_name(z.dtype()) : "None");
  check_device(op, z);
  const int64_t d = wrap_dim(dim, z.dim(), op);
  EMBER_CHECK(n >= 1 && z.size(d) == n / 2 + 1, Error, op, ": ", n, " output points need ", n / 2 + 1,
              " bins along dim ", d, ", got ", z.size(d));
  Tensor out;
  {
    NoGradGuard no_grad;
    const Tensor in = z.contiguous();
    Shape shape = z.shape();
    shape[d] = n;
    out = empty(shape, complex_part_dtype(z.dtype()), z.device());
    if (z.dtype() == DType::Complex64) c2r_lines<float>(in, out, d);
    else c2r_lines<double>(in, out, d);
    scale_in_place(out, scale);
  }
  if (autograd::any_requires_grad({z})) {
    // Bin k enters out with multiplicity w_k, so grad_k = w_k * rfft(g)_k.
    autograd::record("FftC2RBackward0", {z}, {out}, {},
                     [d, n, scale](const TensorList& g, const TensorList&, const std::vector<bool>&) {
                       const Tensor w = bin_multiplicity(n, d, g[0].dim(), g[0].dtype(), g[0].device());
                       return TensorList{ember::mul(fft_r2c(g[0], d, scale), w)};
                     });
  }
  return out;
}

}  // namespace ember
