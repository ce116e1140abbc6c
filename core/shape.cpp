#include <ember/core/shape.h>

#include <ember/core/error.h>

namespace ember {

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  bool overflow = false;
  for (auto s : shape) overflow |= __builtin_mul_overflow(n, s, &n);
  // A zero anywhere makes the product 0 whatever overflowed before it.
  for (auto s : shape) {
    if (s == 0) return 0;
  }
  EMBER_CHECK(!overflow, Error, "shape ", shape_str(shape), " has more elements than fit in int64");
  return n;
}

Strides contiguous_strides(const Shape& shape) {
  Strides strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i] > 1 ? shape[i] : 1;
  }
  return strides;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      throw Error(str(op, ": shapes ", shape_str(a), " and ", shape_str(b),
                      " cannot be broadcast (dimension ", i, ": ", da, " vs ", db, ")"));
    }
  }
  return out;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t n = ndim == 0 ? 1 : ndim;
  if (dim < -n || dim >= n) {
    throw IndexError(str(op, ": dimension out of range (expected to be in range of [", -n, ", ", n - 1,
                         "], but got ", dim, ")"));
  }
  return dim < 0 ? dim + n : dim;
}

std::vector<bool> dim_mask(const std::vector<int64_t>& dims, int64_t ndim, const char* op) {
  std::vector<bool> mask(ndim, dims.empty());
  for (auto d : dims) {
    const int64_t w = wrap_dim(d, ndim, op);
    if (ndim == 0) continue;
    EMBER_CHECK(!mask[w], Error, op, ": dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  return mask;
}

}  // namespace ember
