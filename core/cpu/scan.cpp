// CPU kernels of the running reductions (core/cpu/scan.h): one column at a
// time, columns in parallel; each step is core/scan_step.h's, as on the GPU.
#include <ember/core/cpu/scan.h>

#include <ember/core/cpu/parallel.h>
#include <ember/core/error.h>
#include <ember/core/scan_step.h>

namespace ember::cpu {

namespace {

template <ScanOp Op, class T>
void scan_columns(T* out, int64_t* idx, const T* x, int64_t outer, int64_t length, int64_t inner) {
  parallel_for(0, outer * inner, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const int64_t base = (c / inner) * length * inner + c % inner;
      T acc{};
      int64_t at = 0;
      for (int64_t i = 0; i < length; ++i) {
        const int64_t k = base + i * inner;
        scan_step::step<Op>(acc, at, x[k], i);
        out[k] = acc;
        if (idx != nullptr) idx[k] = at;
      }
    }
  });
}

template <class T>
void scan_typed(ScanOp op, Tensor& out, Tensor& indices, const Tensor& x, int64_t outer, int64_t length,
                int64_t inner) {
  T* o = out.data<T>();
  const T* in = x.data<T>();
  int64_t* idx = indices.defined() ? indices.data<int64_t>() : nullptr;
  switch (op) {
    case ScanOp::Prod: return scan_columns<ScanOp::Prod>(o, idx, in, outer, length, inner);
    case ScanOp::Max: return scan_columns<ScanOp::Max>(o, idx, in, outer, length, inner);
    case ScanOp::Min: return scan_columns<ScanOp::Min>(o, idx, in, outer, length, inner);
    case ScanOp::LogSumExp:
      if constexpr (std::is_floating_point_v<T>) return scan_columns<ScanOp::LogSumExp>(o, idx, in, outer, length, inner);
      else break;
  }
  throw Error("scan: unsupported op for this dtype");
}

}  // namespace

void scan(ScanOp op, Tensor& out, Tensor& indices, const Tensor& x, int64_t outer, int64_t length, int64_t inner) {
  dispatch(x.dtype(), "scan", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      throw Error(str("scan: the kernel takes float32, float64 or integer inputs, got ", dtype_name(x.dtype())));
    } else {
      scan_typed<T>(op, out, indices, x, outer, length, inner);
    }
  });
}

}  // namespace ember::cpu
