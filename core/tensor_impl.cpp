#include <ember/core/tensor_impl.h>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/meta.h>

namespace ember {

TensorImpl::TensorImpl(Storage s, Shape sh, Strides st, int64_t off, DType dt)
    : storage(std::move(s)), shape(std::move(sh)), strides(std::move(st)), offset(off), dtype(dt),
      is_inference(autograd::inference_mode_enabled()) {}

TensorImpl::~TensorImpl() = default;

}  // namespace ember
