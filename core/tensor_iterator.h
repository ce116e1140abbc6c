// Geometry of an elementwise op: one output and N inputs broadcast to the
// output's shape, with byte strides per operand and adjacent dimensions
// coalesced, so a contiguous op becomes one flat loop. Device-neutral: the
// CPU loops (core/cpu/loops.h) and CUDA launchers both consume it.
#pragma once
#include <cstdint>
#include <vector>

#include <ember/core/tensor.h>

namespace ember {

class TensorIterator {
 public:
  // operands[0] is the output; inputs must broadcast to its shape.
  explicit TensorIterator(const std::vector<Tensor>& operands);

  int ntensors() const { return static_cast<int>(data_.size()); }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const { return numel_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  // Byte stride of operand `t` along dim `d` (dims innermost last).
  int64_t stride(int t, int d) const { return strides_[t][d]; }
  char* data(int t) const { return data_[t]; }
  // Whether operand t is a CPU tensor (a CUDA op's 0-d number operand).
  bool on_cpu(int t) const { return on_cpu_[t] != 0; }
  int64_t element_size(int t) const { return element_sizes_[t]; }

  // Calls loop(ptrs, inner_strides, n) over rows of the iteration space for
  // elements [begin, end): ptrs[t] points at operand t's first element of the
  // row, inner_strides[t] is its byte stride along the row.
  template <class Loop>
  void for_each_row(int64_t begin, int64_t end, Loop&& loop) const;

 private:
  std::vector<int64_t> shape_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<char*> data_;
  std::vector<uint8_t> on_cpu_;
  std::vector<int64_t> element_sizes_;
  int64_t numel_ = 0;
};

template <class Loop>
void TensorIterator::for_each_row(int64_t begin, int64_t end, Loop&& loop) const {
  const int nt = ntensors();
  const int nd = ndim();
  std::vector<char*> ptrs(nt);
  std::vector<int64_t> inner(nt);
  if (nd == 0) {
    for (int t = 0; t < nt; ++t) { ptrs[t] = data_[t]; inner[t] = 0; }
    if (begin < end) loop(ptrs.data(), inner.data(), int64_t{1});
    return;
  }
  const int64_t row = shape_[nd - 1];
  for (int t = 0; t < nt; ++t) inner[t] = strides_[t][nd - 1];
  std::vector<int64_t> idx(nd, 0);
  int64_t pos = begin;
  // Multi-index of `begin`.
  {
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; --d) { idx[d] = rem % shape_[d]; rem /= shape_[d]; }
  }
  while (pos < end) {
    for (int t = 0; t < nt; ++t) {
      char* p = data_[t];
      for (int d = 0; d < nd; ++d) p += idx[d] * strides_[t][d];
      ptrs[t] = p;
    }
    const int64_t n = std::min(row - idx[nd - 1], end - pos);
    loop(ptrs.data(), inner.data(), n);
    pos += n;
    idx[nd - 1] += n;
    for (int d = nd - 1; d > 0 && idx[d] >= shape_[d]; --d) { idx[d] = 0; ++idx[d - 1]; }
  }
}

}  // namespace ember
