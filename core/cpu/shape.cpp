#include <ember/core/cpu/shape.h>

#include <algorithm>
#include <cstring>

#include <ember/core/cpu/element_bytes.h>
#include <ember/core/cpu/parallel.h>

namespace ember::cpu {

void tril_triu(Tensor& out, const Tensor& x, int64_t diagonal, bool lower) {
  const int64_t nd = x.dim();
  const int64_t rows = x.size(nd - 2), cols = x.size(nd - 1);
  const int64_t batches = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  const int64_t rs = x.stride(nd - 2), cs = x.stride(nd - 1);
  const int64_t diag = std::clamp<int64_t>(diagonal, -rows - 1, cols + 1);  // i + diag cannot overflow
  dispatch_size(x.element_size(), [&](auto tag) {
    using B = decltype(tag);
    const B* src = static_cast<const B*>(x.data_ptr());
    B* dst = static_cast<B*>(out.data_ptr());  // contiguous
    // Row by row: the kept columns are one span [j0, j1), copied (a memcpy
    // when x's rows are contiguous); the rest is zero bytes, 0 in every dtype.
    parallel_for(0, batches * rows, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(cols, 1)),
                 [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const int64_t i = job % rows;
        int64_t base = 0;  // x's offset of this batch's matrix
        for (int64_t d = nd - 3, rest = job / rows; d >= 0; --d) {
          base += rest % x.size(d) * x.stride(d);
          rest /= x.size(d);
        }
        const int64_t edge = std::clamp<int64_t>(i + diag + (lower ? 1 : 0), 0, cols);
        const int64_t j0 = lower ? 0 : edge, j1 = lower ? edge : cols;
        B* o = dst + job * cols;
        const B* in = src + base + i * rs;
        std::memset(o, 0, j0 * sizeof(B));
        if (cs == 1) {
          std::memcpy(o + j0, in + j0, (j1 - j0) * sizeof(B));
        } else {
          for (int64_t j = j0; j < j1; ++j) o[j] = in[j * cs];
        }
        std::memset(o + j1, 0, (cols - j1) * sizeof(B));
      }
    });
  });
}

}  // namespace ember::cpu
