#include <ember/core/cpu/shape.h>

#include <cstring>

#include <ember/core/cpu/strided_loop.h>

namespace ember::cpu {

void tril_triu(Tensor& out, const Tensor& x, int64_t diagonal, bool lower) {
  const int64_t nd = x.dim();
  const int64_t rows = x.size(nd - 2), cols = x.size(nd - 1);
  const Shape batch(x.shape().begin(), x.shape().end() - 2);
  const Strides xb(x.strides().begin(), x.strides().end() - 2);
  const Strides ob(out.strides().begin(), out.strides().end() - 2);
  const int64_t rs = x.stride(nd - 2), cs = x.stride(nd - 1);
  const size_t item = x.element_size();
  const char* src = static_cast<const char*>(x.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  strided_loop(batch, {xb, ob}, [&](const int64_t* offs) {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        const bool keep = lower ? j - i <= diagonal : j - i >= diagonal;
        char* o = dst + (offs[1] + i * cols + j) * item;
        if (keep) std::memcpy(o, src + (offs[0] + i * rs + j * cs) * item, item);
        else std::memset(o, 0, item);  // all-zero bytes are 0 in every dtype
      }
    }
  });
}

}  // namespace ember::cpu
