// Shape-family composites: views (permute, reshape, expand, narrow), cat and
// index_select put together with PyTorch's argument rules and messages.
#include <ember/core/ops/composite_shape.h>

#include <algorithm>

#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/composite_detail.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/index.h>
#include <ember/core/ops/shape.h>
#include <ember/core/type_promotion.h>

namespace ember {

using composite::as_op;

namespace {

Dims wrap_unique(const Dims& dims, int64_t ndim, const char* which) {
  Dims out;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, ndim, "movedim");
    EMBER_CHECK(std::find(out.begin(), out.end(), w) == out.end(), Error, "movedim: repeated dim in `", which, "` (",
                shape_str(dims), ")");
    out.push_back(w);
  }
  return out;
}

void check_defined(const Tensor& t, const char* op) {
  EMBER_CHECK(t.defined(), ValueError, op, ": got an undefined tensor");
}

void check_nonempty(const std::vector<Tensor>& ts, const char* op) {
  EMBER_CHECK(!ts.empty(), Error, op, ": expects a non-empty TensorList");
  for (size_t i = 0; i < ts.size(); ++i) {
    EMBER_CHECK(ts[i].defined(), ValueError, op, ": tensor ", i, " is undefined");
  }
}

template <class F>
std::vector<Tensor> map_all(const std::vector<Tensor>& ts, F f) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(f(t));
  return out;
}

// `repeats` as int64 values on the host (one sync for a GPU tensor, as PyTorch's).
std::vector<int64_t> host_repeats(const Tensor& repeats) {
  EMBER_CHECK(!is_floating(repeats.dtype()) && repeats.dtype() != DType::Bool, NotImplementedError,
              "repeat_interleave: repeats must be an integer tensor, got ", dtype_name(repeats.dtype()));
  EMBER_CHECK(repeats.dim() <= 1, Error, "repeat_interleave: repeats must be a 0-dim or 1-dim tensor, got shape ",
              repeats.shape_str());
  const Tensor r = repeats.to(kCPU).to(DType::Int64).contiguous();
  const int64_t* p = r.data<int64_t>();
  std::vector<int64_t> out(p, p + r.numel());
  for (int64_t v : out) EMBER_CHECK(v >= 0, Error, "repeat_interleave: repeats can not be negative");
  return out;
}

}  // namespace

Tensor movedim(const Tensor& x, const Dims& source, const Dims& destination) {
  check_defined(x, "movedim");
  EMBER_CHECK(source.size() == destination.size(), Error,
              "movedim: Invalid source or destination dims: source (", shape_str(source),
              " dims) should contain the same number of dims as destination (", shape_str(destination), " dims)");
  const int64_t nd = x.dim();
  const Dims src = wrap_unique(source, nd, "source"), dst = wrap_unique(destination, nd, "destination");
  if (nd == 0) return x;
  Dims perm(nd, -1);
  std::vector<bool> moved(nd, false);
  for (size_t k = 0; k < src.size(); ++k) {
    perm[dst[k]] = src[k];
    moved[src[k]] = true;
  }
  int64_t next = 0;  // the remaining dims fill the free slots in their order
  for (int64_t d = 0; d < nd; ++d) {
    if (moved[d]) continue;
    while (perm[next] >= 0) ++next;
    perm[next] = d;
  }
  return permute(x, perm);
}

Tensor tile(const Tensor& x, const Shape& reps) {
  check_defined(x, "tile");
  for (int64_t r : reps) EMBER_CHECK(r >= 0, Error, "tile: repeats must be non-negative, got ", shape_str(reps));
  Shape padded(reps);
  while (static_cast<int64_t>(padded.size()) < x.dim()) padded.insert(padded.begin(), 1);
  return as_op("tile", [&] { return repeat(x, padded); });
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing) {
  check_nonempty(tensors, "meshgrid");
  EMBER_CHECK(indexing == "ij" || indexing == "xy", Error,
              "meshgrid: indexing must be one of \"xy\" or \"ij\", but received: ", indexing);
  common_device("meshgrid", tensors);
  const size_t n = tensors.size();
  Shape grid;
  for (size_t i = 0; i < n; ++i) {
    EMBER_CHECK(tensors[i].dim() <= 1, Error, "meshgrid: expected 0D or 1D tensors, but tensor ", i,
                " has shape ", tensors[i].shape_str());
    EMBER_CHECK(tensors[i].dtype() == tensors[0].dtype(), Error,
                "meshgrid: expects all tensors to have the same dtype, but tensor 0 is ",
                dtype_name(tensors[0].dtype()), " and tensor ", i, " is ", dtype_name(tensors[i].dtype()));
    grid.push_back(tensors[i].numel());
  }
  // "xy" (Cartesian) swaps the first two output dims.
  const bool swap = indexing == "xy" && n >= 2;
  if (swap) std::swap(grid[0], grid[1]);
  std::vector<Tensor> out;
  for (size_t i = 0; i < n; ++i) {
    const size_t at = swap && i < 2 ? 1 - i : i;
    Shape shape(n, 1);
    shape[at] = grid[at];
    out.push_back(expand(reshape(tensors[i], shape), grid));
  }
  return out;
}

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  Shape out;
  for (const Shape& s : shapes) {
    for (int64_t d : s) EMBER_CHECK(d >= 0, ValueError, "broadcast_shapes: a dimension has negative length in ", shape_str(s));
    out = broadcast_shapes(out, s, "broadcast_shapes");
  }
  return out;
}

std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].defined(), ValueError, "broadcast_tensors: tensor ", i, " is undefined");
  }
  Shape shape;
  for (const Tensor& t : tensors) shape = broadcast_shapes(shape, t.shape(), "broadcast_tensors");
  return map_all(tensors, [&](const Tensor& t) { return expand(t, shape); });
}

// ---- repeat_interleave

Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  check_defined(x, "repeat_interleave");
  EMBER_CHECK(repeats >= 0, Error, "repeat_interleave: repeats must be non-negative, got ", repeats);
  Tensor src = dim && x.dim() > 0 ? x : reshape(x, {-1});
  const int64_t d = dim ? wrap_dim(*dim, x.dim(), "repeat_interleave") : 0;
  const int64_t n = src.size(d);
  EMBER_CHECK(!output_size || *output_size == n * repeats, Error, "repeat_interleave: output_size is ", *output_size,
              ", but the repeats make ", n * repeats, " elements along dim ", d);
  // [.., n, ..] -> [.., n, 1, ..] -> expanded [.., n, repeats, ..] -> [.., n * repeats, ..]
  Shape expanded = src.shape(), merged = src.shape();
  expanded.insert(expanded.begin() + d + 1, repeats);
  merged[d] = n * repeats;
  return reshape(expand(unsqueeze(src, d + 1), expanded), merged);
}

namespace {
// [0] * r[0] + [1] * r[1] + ...: int64 on `device`.
Tensor repeated_positions(const std::vector<int64_t>& r, std::optional<int64_t> output_size, const Device& device) {
  int64_t total = 0;
  for (int64_t v : r) {
    EMBER_CHECK(!__builtin_add_overflow(total, v, &total), Error,
                "repeat_interleave: the repeats add up to more than an int64 holds");
  }
  EMBER_CHECK(!output_size || *output_size == total, Error, "repeat_interleave: output_size is ", *output_size,
              ", but the repeats add up to ", total);
  Tensor index = empty({total}, DType::Int64, kCPU);
  int64_t* p = index.data<int64_t>();
  int64_t* const end = p + total;
  // A count up to kSpan writes kSpan copies and moves on by the count (the
  // next positions overwrite the surplus): a loop over a random small count
  // mispredicted its exit at nearly every position.
  constexpr int64_t kSpan = 8;
  size_t i = 0;
  for (; i < r.size() && end - p >= kSpan; ++i) {
    const auto v = static_cast<int64_t>(i);
    if (r[i] <= kSpan) {
      for (int64_t j = 0; j < kSpan; ++j) p[j] = v;
      p += r[i];
    } else {
      p = std::fill_n(p, r[i], v);
    }
  }
  for (; i < r.size(); ++i) p = std::fill_n(p, r[i], static_cast<int64_t>(i));
  return index.to(device);
}
}  // namespace

Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size) {
  check_defined(repeats, "repeat_interleave");
  EMBER_CHECK(repeats.dim() == 1, Error, "repeat_interleave: repeats must be a 1-dim tensor, got shape ",
              repeats.shape_str());
  return repeated_positions(host_repeats(repeats), output_size, repeats.device());
}

Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  check_defined(x, "repeat_interleave");
  check_defined(repeats, "repeat_interleave");
  const std::vector<int64_t> r = host_repeats(repeats);
  if (r.size() == 1) return repeat_interleave(x, r[0], dim, output_size);  // one count for all, as PyTorch
  Tensor src = dim && x.dim() > 0 ? x : reshape(x, {-1});
  const int64_t d = dim ? wrap_dim(*dim, x.dim(), "repeat_interleave") : 0;
  EMBER_CHECK(static_cast<int64_t>(r.size()) == src.size(d), Error,
              "repeat_interleave: repeats must have the same size as input along dim, but got repeats.size(0) = ",
              r.size(), " and input.size(", d, ") = ", src.size(d));
  return index_select(src, d, repeated_positions(r, output_size, src.device()));
}

// ---- splitting and joining

std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int64_t dim) {
  check_defined(x, "tensor_split");
  EMBER_CHECK(x.dim() >= 1, Error, "tensor_split: expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  EMBER_CHECK(sections > 0, Error, "tensor_split: number of sections must be larger than 0, got ", sections);
  const int64_t d = wrap_dim(dim, x.dim(), "tensor_split");
  const int64_t n = x.size(d), base = n / sections, longer = n % sections;
  std::vector<Tensor> out;
  for (int64_t i = 0, start = 0; i < sections; ++i) {
    const int64_t len = base + (i < longer ? 1 : 0);
    out.push_back(narrow(x, d, start, len));
    start += len;
  }
  return out;
}

std::vector<Tensor> tensor_split(const Tensor& x, const std::vector<int64_t>& indices, int64_t dim) {
  check_defined(x, "tensor_split");
  EMBER_CHECK(x.dim() >= 1, Error, "tensor_split: expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  const int64_t d = wrap_dim(dim, x.dim(), "tensor_split");
  std::vector<Tensor> out;
  for (size_t k = 0; k <= indices.size(); ++k) {
    const std::optional<int64_t> start = k == 0 ? std::optional<int64_t>(0) : indices[k - 1];
    const std::optional<int64_t> end = k == indices.size() ? std::nullopt : std::optional<int64_t>(indices[k]);
    out.push_back(slice(x, d, start, end));
  }
  return out;
}

namespace {

// The dim hsplit / vsplit / dsplit split along, after checking x has enough dims.
int64_t split_dim(const Tensor& x, const char* op, int64_t min_dims, int64_t dim) {
  check_defined(x, op);
  EMBER_CHECK(x.dim() >= min_dims, Error, op, ": requires a tensor with at least ", min_dims,
              " dimension", min_dims > 1 ? "s" : "", ", but got a tensor with ", x.dim(), " dimensions (shape ",
              x.shape_str(), ")");
  return dim;
}

// hsplit splits columns (dim 1), or the elements of a 1-D tensor.
int64_t hsplit_dim(const Tensor& x) {
  split_dim(x, "hsplit", 1, 1);
  return x.dim() == 1 ? 0 : 1;
}

std::vector<Tensor> even_split(const Tensor& x, int64_t sections, int64_t dim, const char* op) {
  EMBER_CHECK(sections <= 0 || x.size(dim) % sections == 0, Error, op, ": attempted to split along dimension ", dim,
              ", but the size of the dimension ", x.size(dim), " is not divisible by the split_size ", sections, "!");
  return as_op(op, [&] { return tensor_split(x, sections, dim); });
}

}  // namespace

std::vector<Tensor> hsplit(const Tensor& x, int64_t sections) {
  return even_split(x, sections, hsplit_dim(x), "hsplit");
}
std::vector<Tensor> hsplit(const Tensor& x, const std::vector<int64_t>& indices) {
  return tensor_split(x, indices, hsplit_dim(x));
}
std::vector<Tensor> vsplit(const Tensor& x, int64_t sections) {
  return even_split(x, sections, split_dim(x, "vsplit", 2, 0), "vsplit");
}
std::vector<Tensor> vsplit(const Tensor& x, const std::vector<int64_t>& indices) {
  return tensor_split(x, indices, split_dim(x, "vsplit", 2, 0));
}
std::vector<Tensor> dsplit(const Tensor& x, int64_t sections) {
  return even_split(x, sections, split_dim(x, "dsplit", 3, 2), "dsplit");
}
std::vector<Tensor> dsplit(const Tensor& x, const std::vector<int64_t>& indices) {
  return tensor_split(x, indices, split_dim(x, "dsplit", 3, 2));
}

Tensor atleast_1d(const Tensor& x) { return x.dim() >= 1 ? x : reshape(x, {1}); }

Tensor atleast_2d(const Tensor& x) {
  if (x.dim() >= 2) return x;
  return x.dim() == 1 ? unsqueeze(x, 0) : reshape(x, {1, 1});
}

Tensor atleast_3d(const Tensor& x) {
  switch (x.dim()) {
    case 0: return reshape(x, {1, 1, 1});
    case 1: return unsqueeze(unsqueeze(x, 0), -1);
    case 2: return unsqueeze(x, -1);
    default: return x;
  }
}

Tensor hstack(const std::vector<Tensor>& tensors) {
  check_nonempty(tensors, "hstack");
  const std::vector<Tensor> ts = map_all(tensors, atleast_1d);
  return as_op("hstack", [&] { return cat(ts, ts[0].dim() == 1 ? 0 : 1); });
}

Tensor vstack(const std::vector<Tensor>& tensors) {
  check_nonempty(tensors, "vstack");
  return as_op("vstack", [&] { return cat(map_all(tensors, atleast_2d), 0); });
}

Tensor dstack(const std::vector<Tensor>& tensors) {
  check_nonempty(tensors, "dstack");
  return as_op("dstack", [&] { return cat(map_all(tensors, atleast_3d), 2); });
}

Tensor column_stack(const std::vector<Tensor>& tensors) {
  check_nonempty(tensors, "column_stack");
  const std::vector<Tensor> columns =
      map_all(tensors, [](const Tensor& t) { return t.dim() <= 1 ? reshape(t, {t.numel(), 1}) : t; });
  return as_op("column_stack", [&] { return cat(columns, 1); });
}

Tensor cartesian_prod(const std::vector<Tensor>& tensors) {
  check_nonempty(tensors, "cartesian_prod");
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].dim() == 1, Error, "cartesian_prod: expected 1-D tensors, but tensor ", i, " has shape ",
                tensors[i].shape_str());
  }
  if (tensors.size() == 1) return tensors[0];
  const std::vector<Tensor> grids = as_op("cartesian_prod", [&] { return meshgrid(tensors, "ij"); });
  return stack(map_all(grids, [](const Tensor& g) { return reshape(g, {-1}); }), 1);
}

Tensor block_diag(const std::vector<Tensor>& tensors) {
  if (tensors.empty()) return empty({1, 0}, default_float_dtype());
  check_nonempty(tensors, "block_diag");
  const Device dev = common_device("block_diag", tensors);
  const DType dt = result_type(tensors);
  std::vector<Tensor> blocks;
  int64_t cols = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    EMBER_CHECK(t.dim() <= 2, Error, "block_diag: input tensors must have 2 or fewer dimensions. Input ", i, " has ",
                t.dim(), " dimensions");
    blocks.push_back((t.dim() == 2 ? t : reshape(t, {1, t.numel()})).to(dt));
    cols += blocks.back().size(1);
  }
  // Each block's rows: zeros to its left, the block, zeros to its right.
  std::vector<Tensor> rows;
  int64_t left = 0;
  for (const Tensor& b : blocks) {
    const int64_t r = b.size(0), c = b.size(1);
    rows.push_back(cat({zeros({r, left}, dt, dev), b, zeros({r, cols - left - c}, dt, dev)}, 1));
    left += c;
  }
  return cat(rows, 0);
}

Tensor rot90(const Tensor& x, int64_t k, const Dims& dims) {
  check_defined(x, "rot90");
  EMBER_CHECK(dims.size() == 2, Error, "rot90: expected total rotation dims == 2, but got dims = ", dims.size());
  EMBER_CHECK(x.dim() >= 2, Error, "rot90: expected total dims >= 2, but got total dims = ", x.dim());
  const int64_t d0 = wrap_dim(dims[0], x.dim(), "rot90"), d1 = wrap_dim(dims[1], x.dim(), "rot90");
  EMBER_CHECK(d0 != d1, Error, "rot90: expected rotation dims to be different, but got dim0 = ", d0,
              " and dim1 = ", d1);
  switch (((k % 4) + 4) % 4) {
    case 1: return transpose(flip(x, {d1}), d0, d1);
    case 2: return flip(x, {d0, d1});
    case 3: return transpose(flip(x, {d0}), d0, d1);
    default: return x.clone();
  }
}

Tensor fliplr(const Tensor& x) {
  check_defined(x, "fliplr");
  EMBER_CHECK(x.dim() >= 2, Error, "fliplr: input must be >= 2-d, got shape ", x.shape_str());
  return flip(x, {1});
}

Tensor flipud(const Tensor& x) {
  check_defined(x, "flipud");
  EMBER_CHECK(x.dim() >= 1, Error, "flipud: input must be >= 1-d, got shape ", x.shape_str());
  return flip(x, {0});
}

Tensor diff(const Tensor& x, int64_t n, int64_t dim, const Tensor& prepend, const Tensor& append) {
  EMBER_CHECK(x.defined(), ValueError, "diff: got an undefined tensor");
  EMBER_CHECK(x.dim() >= 1, Error, "diff: expects input to be at least one-dimensional");
  EMBER_CHECK(n >= 0, Error, "diff: order must be non-negative but got ", n);
  const int64_t d = wrap_dim(dim, x.dim(), "diff");
  Tensor t = x;
  if (prepend.defined() || append.defined()) {
    std::vector<Tensor> parts;
    for (const Tensor& p : {prepend, x, append}) {
      if (!p.defined()) continue;
      EMBER_CHECK(p.dim() == x.dim(), Error, "diff: expects prepend or append to be the same dimension as input (",
                  x.shape_str(), "), got ", p.shape_str());
      parts.push_back(p);
    }
    t = as_op("diff", [&] { return cat(parts, d); });
  }
  for (int64_t k = 0; k < n && t.size(d) > 0; ++k) {
    const int64_t len = t.size(d) - 1;
    const Tensor hi = narrow(t, d, 1, len), lo = narrow(t, d, 0, len);
    t = t.dtype() == DType::Bool ? logical_xor(hi, lo) : sub(hi, lo);
  }
  return t;
}

}  // namespace ember
