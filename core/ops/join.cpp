// Joining and splitting along a dim: cat, stack, split, chunk, unbind, roll.
// Splits are views (narrow/select); cat copies each input into a narrowed
// view of its output.
#include <ember/autograd/functions/shape.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/copy.h>
#include <ember/core/cpu/index.h>
#include <ember/core/error.h>
#include <ember/core/int_math.h>
#include <ember/core/ops/complex.h>
#include <ember/core/ops/shape.h>
#include <ember/core/type_promotion.h>
#include <ember/cuda/copy.h>

namespace ember {

namespace functions = autograd::functions;

namespace {
// PyTorch's legacy rule: 1-D tensors with no elements take no part in cat.
bool skipped_in_cat(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

// The pieces of a split share one backward node that joins their gradients
// in one pass, instead of one input-sized zero-filled gradient per piece
// for the engine to add up. `make_piece` makes piece i as a view of x.
template <class MakePiece>
std::vector<Tensor> pieces_of(const Tensor& x, int64_t count, const MakePiece& make_piece, const char* name,
                              autograd::Vjp vjp) {
  std::vector<Tensor> out;
  {
    autograd::NoGradGuard no_grad;  // the views only; their history is recorded below
    for (int64_t i = 0; i < count; ++i) out.push_back(make_piece(i));
  }
  if (!out.empty() && autograd::any_requires_grad({x})) autograd::record(name, {x}, out, {}, std::move(vjp));
  return out;
}

std::vector<Tensor> split_sizes(const Tensor& x, int64_t d, const std::vector<int64_t>& sizes, const char* name) {
  std::vector<int64_t> starts(sizes.size(), 0);
  for (size_t i = 1; i < sizes.size(); ++i) starts[i] = starts[i - 1] + sizes[i - 1];
  return pieces_of(
      x, static_cast<int64_t>(sizes.size()), [&](int64_t i) { return narrow(x, d, starts[i], sizes[i]); }, name,
      functions::split_backward(d));
}
}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), Error, "cat: expected a non-empty list of Tensors");
  for (size_t i = 0; i < tensors.size(); ++i)
    EMBER_CHECK(tensors[i].defined(), ValueError, "cat: got an undefined tensor at position ", i);
  if (complex_ops::any_complex(tensors)) return complex_ops::cat(tensors, dim);
  const DType dtype = result_type(tensors);
  const Device device = common_device("cat", tensors);
  const Tensor* ref = nullptr;
  size_t ref_pos = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].dim() > 0, Error, "cat: zero-dimensional tensor (at position ", i,
                ") cannot be concatenated");
    if (!ref && !skipped_in_cat(tensors[i])) {
      ref = &tensors[i];
      ref_pos = i;
    }
  }
  Tensor out;
  std::vector<int64_t> sizes(tensors.size(), -1);  // -1: skipped
  int64_t d = 0;
  if (!ref) {
    out = empty({0}, dtype, device);
  } else {
    d = wrap_dim(dim, ref->dim(), "cat");
    Shape shape = ref->shape();
    shape[d] = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const Tensor& t = tensors[i];
      if (skipped_in_cat(t)) continue;
      EMBER_CHECK(t.dim() == ref->dim(), Error, "cat: tensors must have same number of dimensions: got ",
                  ref->dim(), " (tensor ", ref_pos, ", shape ", shape_str(ref->shape()), ") and ", t.dim(),
                  " (tensor ", i, ", shape ", shape_str(t.shape()), ")");
      for (int64_t k = 0; k < t.dim(); ++k) {
        EMBER_CHECK(k == d || t.size(k) == ref->size(k), Error, "cat: sizes of tensors must match except in dimension ",
                    d, ". Expected size ", ref->size(k), " but got size ", t.size(k), " for tensor number ", i,
                    " in the list (shapes ", shape_str(ref->shape()), " and ", shape_str(t.shape()), ")");
      }
      sizes[i] = t.size(d);
      shape[d] += sizes[i];
    }
    EMBER_CHECK(device.is_cpu() || device.is_cuda(), NotImplementedError, "cat: no kernel for device ",
                device.str());
    out = empty(shape, dtype, device);
    int64_t offset = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (skipped_in_cat(tensors[i])) continue;
      Shape part = shape;
      part[d] = sizes[i];
      Tensor dst = make_view(out, part, out.strides(), offset * out.stride(d));
      if (device.is_cuda()) {
        cuda::copy_on_device(dst, tensors[i]);  // casts too
      } else if (tensors[i].dtype() == dtype) {
        cpu::index_gather(dst, tensors[i], {}, {}, {});  // row copies; faster than copy on strided dsts
      } else {
        cpu::copy(dst, tensors[i]);
      }
      offset += sizes[i];
    }
  }
  if (autograd::any_requires_grad(tensors)) {
    autograd::record("CatBackward0", tensors, {out}, {}, functions::cat_backward(d, sizes));
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), Error, "stack: expects a non-empty TensorList");
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].defined(), ValueError, "stack: got an undefined tensor at position ", i);
    EMBER_CHECK(tensors[i].shape() == tensors[0].shape(), Error,
                "stack: expects each tensor to be equal size, but got ", shape_str(tensors[0].shape()),
                " at entry 0 and ", shape_str(tensors[i].shape()), " at entry ", i);
  }
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) parts.push_back(unsqueeze(t, d));
  return cat(parts, d);
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  EMBER_CHECK(x.dim() > 0, Error, "split: expected at least a 1-dimensional tensor");
  const int64_t d = wrap_dim(dim, x.dim(), "split");
  const int64_t size = x.size(d);
  EMBER_CHECK(split_size > 0 || (split_size == 0 && size == 0), Error,
              "split: split_size can only be 0 if dimension size is 0, but got split_size=", split_size,
              " for dimension ", d, " of size ", size);
  std::vector<int64_t> sizes;
  if (size == 0) sizes.push_back(0);
  for (int64_t start = 0; start < size; start += split_size) sizes.push_back(std::min(split_size, size - start));
  return split_sizes(x, d, sizes, "SplitBackward0");
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  EMBER_CHECK(x.dim() > 0, Error, "split: expected at least a 1-dimensional tensor");
  const int64_t d = wrap_dim(dim, x.dim(), "split");
  int64_t total = 0;
  bool overflow = false;  // sizes near 2**63 cannot sum to a tensor's size
  for (int64_t s : sizes) {
    EMBER_CHECK(s >= 0, Error, "split: split_sizes must be non-negative, got ", shape_str(sizes));
    overflow |= __builtin_add_overflow(total, s, &total);
  }
  EMBER_CHECK(!overflow && total == x.size(d), Error, "split: split_with_sizes expects split_sizes to sum exactly to ",
              x.size(d), " (input tensor's size at dimension ", d, "), but got split_sizes=", shape_str(sizes));
  return split_sizes(x, d, sizes, "SplitWithSizesBackward0");
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  EMBER_CHECK(x.dim() > 0, Error, "chunk: expects at least a 1-dimensional tensor");
  EMBER_CHECK(chunks > 0, Error, "chunk: expects `chunks` to be greater than 0, got: ", chunks);
  const int64_t d = wrap_dim(dim, x.dim(), "chunk");
  const int64_t size = x.size(d);
  const int64_t split_size = int_math::ceil_div(size, chunks);  // size + chunks - 1 may overflow
  if (split_size == 0 && size == 0) {
    // PyTorch returns `chunks` empty pieces for an empty dim.
    std::vector<Tensor> out;
    for (int64_t i = 0; i < chunks; ++i) out.push_back(narrow(x, d, 0, 0));
    return out;
  }
  return split(x, split_size, d);
}

std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
  EMBER_CHECK(x.dim() > 0, IndexError, "unbind: dimension specified as ", dim, " but tensor has no dimensions");
  const int64_t d = wrap_dim(dim, x.dim(), "unbind");
  return pieces_of(x, x.size(d), [&](int64_t i) { return select(x, d, i); }, "UnbindBackward0",
                   functions::unbind_backward(d));
}

Tensor roll(const Tensor& x, const Dims& shifts, const Dims& dims) {
  if (dims.empty()) {
    EMBER_CHECK(shifts.size() == 1, Error, "roll: shifts and dimensions must align. shifts: ", shifts.size(),
                ", dims: 0");
    return reshape(roll(reshape(x, {-1}), shifts, {0}), x.shape());
  }
  EMBER_CHECK(shifts.size() == dims.size(), Error, "roll: shifts and dimensions must align. shifts: ",
              shifts.size(), ", dims: ", dims.size());
  for (auto d : dims) wrap_dim(d, x.dim(), "roll");
  if (x.dim() == 0) return x.clone();  // a 0-d tensor accepts dim 0 / -1 and has nothing to roll
  Tensor out = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], x.dim(), "roll");
    const int64_t n = x.size(d);
    if (n == 0) continue;
    const int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    out = cat({narrow(out, d, n - s, s), narrow(out, d, 0, n - s)}, d);
  }
  return out.is_same(x) ? x.clone() : out;
}

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const { return ember::split(*this, split_size, dim); }
std::vector<Tensor> Tensor::split(const std::vector<int64_t>& sizes, int64_t dim) const {
  return ember::split(*this, sizes, dim);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const { return ember::chunk(*this, chunks, dim); }
std::vector<Tensor> Tensor::unbind(int64_t dim) const { return ember::unbind(*this, dim); }
Tensor Tensor::roll(const Dims& shifts, const Dims& dims) const { return ember::roll(*this, shifts, dims); }

}  // namespace ember
