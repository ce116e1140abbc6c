#include <ember/core/tensor_iterator.h>

#include <algorithm>
#include <cstdlib>

#include <ember/core/error.h>

namespace ember {

TensorIterator::TensorIterator(const std::vector<Tensor>& operands) {
  const Tensor& out = operands[0];
  const Shape& shape = out.shape();
  const int nd = static_cast<int>(shape.size());
  const int nt = static_cast<int>(operands.size());
  numel_ = numel_of(shape);

  // Byte strides of every operand against the output shape (0 on broadcast dims).
  std::vector<std::vector<int64_t>> strides(nt, std::vector<int64_t>(nd, 0));
  for (int t = 0; t < nt; ++t) {
    const Tensor& op = operands[t];
    const int od = static_cast<int>(op.dim());
    EMBER_CHECK(od <= nd, Error, "elementwise: operand of shape ", shape_str(op.shape()),
                " does not broadcast to ", shape_str(shape));
    const int64_t item = static_cast<int64_t>(itemsize(op.dtype()));
    for (int d = 0; d < od; ++d) {
      const int dd = d + nd - od;
      const int64_t s = op.shape()[d];
      EMBER_CHECK(s == shape[dd] || s == 1, Error, "elementwise: operand of shape ", shape_str(op.shape()),
                  " does not broadcast to ", shape_str(shape));
      strides[t][dd] = s == 1 ? 0 : op.strides()[d] * item;
    }
    data_.push_back(static_cast<char*>(op.data_ptr()));
    on_cpu_.push_back(op.device().is_cpu() ? 1 : 0);
    element_sizes_.push_back(item);
  }

  // Walk the output in memory order: its dims sorted by stride, largest
  // first, when a permuted output (x.t() * y.t(): one laid out as its inputs)
  // would otherwise be written across its rows. Sizes 1 are dropped below.
  std::vector<int> order;
  for (int d = 0; d < nd; ++d)
    if (shape[d] > 1) order.push_back(d);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return std::abs(strides[0][a]) > std::abs(strides[0][b]); });
  for (int d = 0; d < nd; ++d)
    if (shape[d] <= 1) order.push_back(d);
  Shape walk(nd);
  for (int d = 0; d < nd; ++d) walk[d] = shape[order[d]];
  for (int t = 0; t < nt; ++t) {
    std::vector<int64_t> permuted(nd);
    for (int d = 0; d < nd; ++d) permuted[d] = strides[t][order[d]];
    strides[t] = std::move(permuted);
  }

  // Drop size-1 dims, then merge dim i into i+1 when every operand steps
  // through them as one.
  std::vector<int64_t> cshape;
  std::vector<std::vector<int64_t>> cstrides(nt);
  for (int d = 0; d < nd; ++d) {
    if (walk[d] == 1) continue;
    if (!cshape.empty()) {
      bool merge = true;
      for (int t = 0; t < nt && merge; ++t) merge = cstrides[t].back() == strides[t][d] * walk[d];
      if (merge) {
        cshape.back() *= walk[d];
        for (int t = 0; t < nt; ++t) cstrides[t].back() = strides[t][d];
        continue;
      }
    }
    cshape.push_back(walk[d]);
    for (int t = 0; t < nt; ++t) cstrides[t].push_back(strides[t][d]);
  }
  if (cshape.empty() && numel_ == 1) {
    cshape.push_back(1);
    for (int t = 0; t < nt; ++t) cstrides[t].push_back(0);
  }
  shape_ = std::move(cshape);
  strides_ = std::move(cstrides);
}

}  // namespace ember
