#include <ember/cuda/staged_copy.h>

#include <ember/core/cpu/copy.h>
#include <ember/core/tensor.h>

namespace ember::cuda {

namespace {

// Element offsets [lo, hi) of the storage that t's elements occupy.
struct Span {
  int64_t lo = 0, hi = 0;
  size_t bytes(size_t item) const { return static_cast<size_t>(hi - lo) * item; }
};

Span span_of(const Tensor& t) {
  Span s{t.storage_offset(), t.storage_offset()};
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t extent = (t.size(d) - 1) * t.stride(d);
    (extent < 0 ? s.lo : s.hi) += extent;
  }
  s.hi += 1;
  return s;
}

char* storage_at(const Tensor& t, int64_t element) {
  return static_cast<char*>(t.storage().data()) + element * static_cast<int64_t>(t.element_size());
}

// A host copy of device tensor t, with t's shape and strides.
Tensor download(const Tensor& t, MemcpyBackend& mem) {
  const Span s = span_of(t);
  Tensor buf = empty({s.hi - s.lo}, t.dtype(), kCPU);
  mem.to_host(buf.data_ptr(), storage_at(t, s.lo), s.bytes(t.element_size()));
  return make_view(buf, t.shape(), t.strides(), t.storage_offset() - s.lo);
}

bool dense_pair(const Tensor& dst, const Tensor& src) {
  return dst.dtype() == src.dtype() && dst.shape() == src.shape() && dst.is_contiguous() && src.is_contiguous();
}

size_t nbytes(const Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

// dst (device) = host (CPU tensor, any layout and dtype).
void upload(Tensor& dst, const Tensor& host, MemcpyBackend& mem) {
  if (dst.is_contiguous()) {
    Tensor staged = host;
    if (!dense_pair(dst, host)) {
      staged = empty(dst.shape(), dst.dtype(), kCPU);
      cpu::copy(staged, host);
    }
    mem.to_device(dst.data_ptr(), staged.data_ptr(), nbytes(dst));
    return;
  }
  // A strided destination: fetch the memory it spans (gaps included, so they
  // are written back unchanged), fill its elements, put it back.
  Tensor view = download(dst, mem);
  cpu::copy(view, host);
  const Span s = span_of(dst);
  mem.to_device(storage_at(dst, s.lo), view.storage().data(), s.bytes(dst.element_size()));
}

}  // namespace

void staged_copy(Tensor& dst, const Tensor& src, MemcpyBackend& mem) {
  if (dst.numel() == 0) return;
  if (dst.device().is_cpu()) {
    if (dense_pair(dst, src)) {
      mem.to_host(dst.data_ptr(), src.data_ptr(), nbytes(dst));
    } else {
      cpu::copy(dst, download(src, mem));
    }
    return;
  }
  if (src.device().is_cuda()) {
    if (dense_pair(dst, src)) {
      mem.on_device(dst.data_ptr(), src.data_ptr(), nbytes(dst));
      return;
    }
    upload(dst, download(src, mem), mem);
    return;
  }
  upload(dst, src, mem);
}

}  // namespace ember::cuda
