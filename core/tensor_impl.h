// TensorImpl: storage, shape, strides (in elements), offset, dtype, and the
// autograd metadata, which stays null until a tensor takes part in autograd.
#pragma once
#include <memory>

#include <ember/core/dtype.h>
#include <ember/core/shape.h>
#include <ember/core/storage.h>

namespace ember {

namespace autograd { struct AutogradMeta; }

struct TensorImpl {
  Storage storage;
  Shape shape;
  Strides strides;
  int64_t offset = 0;  // in elements
  DType dtype = DType::Float32;
  // Set on 0-d tensors made from a Python number, which promote like scalars.
  bool wrapped_number = false;
  // Set on tensors that alias another tensor's memory through a view op.
  bool is_view = false;
  // Set on view_as_real / view_as_complex views, which read another dtype's
  // memory: autograd cannot replay in-place writes through them.
  bool retyped_view = false;
  // Made under inference_mode (a view inherits its base's flag): such tensors
  // may not be saved for backward, as in PyTorch.
  bool is_inference = false;
  // For differentiable views (view, select, slice, ...): the tensor that owns
  // the memory. An in-place write through the view rewrites its history.
  std::shared_ptr<TensorImpl> view_base;
  std::unique_ptr<autograd::AutogradMeta> autograd;

  TensorImpl(Storage s, Shape sh, Strides st, int64_t off, DType dt);
  ~TensorImpl();
};

}  // namespace ember
