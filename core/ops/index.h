// The index family: gather/scatter along one dim, advanced (tensor) indexing
// and Python-style indexing (x[0, 1:3, None, idx]).
//   core/ops/index.cpp           dim-wise ops (index_select, gather, scatter, ...)
//   core/ops/advanced_index.cpp  index, index_put_, getitem, setitem
#pragma once
#include <optional>
#include <vector>

#include <ember/core/tensor.h>

namespace ember {

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
Tensor& scatter_(Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
// Without dim: indexes the flattened tensor.
Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int64_t> dim = std::nullopt);
// int64 [..., num_classes]; num_classes -1 means max(x) + 1.
Tensor one_hot(const Tensor& x, int64_t num_classes = -1);
// int64 [n, x.dim()]: coordinates of the nonzero elements in row-major order.
Tensor nonzero(const Tensor& x);
Tensor masked_select(const Tensor& x, const Tensor& mask);

// Advanced indexing: one optional int64/int32/bool tensor per leading dim
// (undefined = the whole dim), broadcast together, numpy's placement of the
// result dims (in front when the indexed dims are not adjacent).
using IndexList = std::vector<std::optional<Tensor>>;
Tensor index(const Tensor& x, const IndexList& indices);
Tensor index_put(const Tensor& x, const IndexList& indices, const Tensor& values, bool accumulate = false);
Tensor& index_put_(Tensor& x, const IndexList& indices, const Tensor& values, bool accumulate = false);

// One item of a Python subscript.
struct TensorIndex {
  enum class Kind { Integer, Slice, None, Ellipsis, Boolean, Tensor };
  Kind kind = Kind::None;
  int64_t integer = 0;                      // Integer
  std::optional<int64_t> start, stop;       // Slice
  int64_t step = 1;                         // Slice
  bool boolean = false;                     // Boolean
  Tensor tensor;                            // Tensor

  static TensorIndex Int(int64_t i) { TensorIndex t; t.kind = Kind::Integer; t.integer = i; return t; }
  static TensorIndex Slice(std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step = 1) {
    TensorIndex t; t.kind = Kind::Slice; t.start = start; t.stop = stop; t.step = step; return t;
  }
  static TensorIndex NewAxis() { return TensorIndex(); }
  static TensorIndex Dots() { TensorIndex t; t.kind = Kind::Ellipsis; return t; }
  static TensorIndex Bool(bool b) { TensorIndex t; t.kind = Kind::Boolean; t.boolean = b; return t; }
  static TensorIndex Of(const Tensor& x) { TensorIndex t; t.kind = Kind::Tensor; t.tensor = x; return t; }
};

// x[items]: basic items give a view (select/slice/unsqueeze); tensors go
// through index().
Tensor getitem(const Tensor& x, const std::vector<TensorIndex>& items);
// x[items] = value (broadcast, cast to x's dtype), recorded by autograd.
void setitem(Tensor& x, const std::vector<TensorIndex>& items, const Tensor& value);

}  // namespace ember
