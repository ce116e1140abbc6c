#include <ember/core/ops/view_dtype.h>

#include <ember/core/error.h>
#include <ember/core/tensor_impl.h>

namespace ember {

Tensor retyped_view(const Tensor& t, DType dtype, Shape shape, Strides strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>(t.storage(), std::move(shape), std::move(strides), offset, dtype);
  impl->is_view = true;
  impl->retyped_view = true;
  impl->is_inference = t.impl()->is_inference;
  return Tensor(std::move(impl));
}

Tensor view_dtype(const Tensor& t, DType dtype) {
  const int64_t from = static_cast<int64_t>(itemsize(t.dtype())), to = static_cast<int64_t>(itemsize(dtype));
  Shape shape = t.shape();
  Strides strides = t.strides();
  int64_t offset = t.storage_offset();
  if (from != to) {
    const std::string what =
        str("view: to view ", dtype_name(t.dtype()), " as ", dtype_name(dtype), " (different element sizes), ");
    EMBER_CHECK(t.dim() > 0, Error, what, "the tensor needs at least one dim; a 0-d tensor can only be viewed as "
                "a dtype of its own element size");
    EMBER_CHECK(t.stride(-1) == 1, Error, what, "its last dim must be contiguous (stride 1), but its strides are ",
                shape_str(t.strides()), "; call .contiguous() first");
    if (to > from) {
      const int64_t ratio = to / from;
      EMBER_CHECK(shape.back() % ratio == 0, Error, what, "the size of its last dim must be divisible by ", ratio,
                  ", but its shape is ", shape_str(t.shape()));
      EMBER_CHECK(offset % ratio == 0, Error, what, "its storage offset must be divisible by ", ratio,
                  ", but it is ", offset);
      for (int64_t d = 0; d + 1 < t.dim(); ++d) {
        EMBER_CHECK(strides[d] % ratio == 0, Error, what, "the strides of its other dims must be divisible by ",
                    ratio, ", but its strides are ", shape_str(t.strides()));
        strides[d] /= ratio;
      }
      shape.back() /= ratio;
      offset /= ratio;
    } else {
      const int64_t ratio = from / to;
      for (int64_t d = 0; d + 1 < t.dim(); ++d) strides[d] *= ratio;
      shape.back() *= ratio;
      offset *= ratio;
    }
  }
  return retyped_view(t, dtype, std::move(shape), std::move(strides), offset);
}

}  // namespace ember
