#include <ember/core/ops/fft.h>

#include <complex>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/fft_kernel.h>
#include <ember/core/error.h>
#include <ember/core/ops/complex.h>
#include <ember/core/ops/composite_shape.h>
#include <ember/core/ops/factory.h>
#include <ember/core/shape.h>
#include <ember/cuda/fft.h>

namespace ember {

namespace {

// One transform along the last dim of a contiguous complex tensor.
template <class T>
void transform_rows(const Tensor& in, Tensor& out, bool forward) {
  const int64_t n = in.shape().back();
  const int64_t batch = n == 0 ? 0 : in.numel() / n;
  if (batch == 0) return;
  const auto* src = static_cast<const std::complex<T>*>(in.data_ptr());
  auto* dst = static_cast<std::complex<T>*>(out.data_ptr());
  if (in.device().is_cuda()) {
    cuda::fft_c2c<T>(src, 1, n, dst, 1, n, n, batch, !forward, in.device().index);
  } else {
    cpu::fft_c2c<T>(src, 1, n, dst, 1, n, n, batch, !forward);
  }
}

Tensor transform_dim(const Tensor& z, int64_t dim, bool forward) {
  const Tensor rows = movedim(z, {dim}, {-1}).contiguous();
  Tensor out = empty(rows.shape(), rows.dtype(), rows.device());
  if (z.dtype() == DType::Complex64) transform_rows<float>(rows, out, forward);
  else transform_rows<double>(rows, out, forward);
  return movedim(out, {-1}, {dim});
}

}  // namespace

Tensor fft_c2c(const Tensor& z, const std::vector<int64_t>& dims, bool forward, double scale) {
  const char* op = "fft_c2c";
  EMBER_CHECK(z.defined() && is_complex(z.dtype()), TypeError, op, ": expected a complex tensor, got ",
              z.defined() ? dtype_name(z.dtype()) : "None");
  EMBER_CHECK(z.device().is_cpu() || z.device().is_cuda(), NotImplementedError, op, ": no FFT for device ",
              z.device().str());
  std::vector<int64_t> wrapped;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, z.dim(), op);
    for (int64_t seen : wrapped) EMBER_CHECK(seen != w, Error, op, ": dim ", d, " appears twice in the dims");
    wrapped.push_back(w);
  }
  Tensor out;
  {
    NoGradGuard no_grad;
    out = z;
    for (int64_t d : wrapped) out = transform_dim(out, d, forward);
    out = out.contiguous();
    if (out.is_same(z)) out = z.clone();  // no dims: still a new tensor
    if (scale != 1.0) {
      Tensor parts = view_as_real(out);
      parts.mul_(scalar_tensor(scale));
    }
  }
  if (autograd::any_requires_grad({z})) {
    // The transform is complex-linear with adjoint the opposite transform.
    autograd::record("FftC2CBackward0", {z}, {out}, {},
                     [wrapped, forward, scale](const autograd::TensorList& g, const autograd::TensorList&,
                                               const std::vector<bool>&) {
                       return autograd::TensorList{fft_c2c(g[0], wrapped, !forward, scale)};
                     });
  }
  return out;
}

}  // namespace ember
