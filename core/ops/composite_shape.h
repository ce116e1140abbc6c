// Shape-family ops composed of views, cat and index_select (so they run on
// every device and are differentiable): PyTorch's movedim, tile, meshgrid,
// broadcast_tensors, repeat_interleave, tensor_split, the *stack joins, diff.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <ember/core/tensor.h>

namespace ember {

// Moves dims `source` to positions `destination` (a view); the other dims keep their order.
Tensor movedim(const Tensor& x, const Dims& source, const Dims& destination);
// repeat() with `reps` padded with leading 1s to x.dim() (x gains leading dims when reps is longer).
Tensor tile(const Tensor& x, const Shape& reps);
// Expanded views of 0-d/1-d tensors over their joint grid; indexing "ij" (matrix) or "xy" (Cartesian).
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing = "ij");
// Expanded views of all tensors to their common broadcast shape.
std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors);
// The broadcast shape of several shapes (RuntimeError naming the mismatch).
Shape broadcast_shapes(const std::vector<Shape>& shapes);

// Each element (of the flattened x when dim is not given) repeated `repeats` times.
Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
// Element i repeated repeats[i] times (repeats: an integer 0-d or 1-d tensor).
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
// repeat_interleave(arange(n), repeats): index i repeated repeats[i] times.
Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size = std::nullopt);

// Views: `sections` nearly equal parts (the first size % sections one longer), or
// the pieces between `indices` (clamped, as Python slices).
std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int64_t dim = 0);
std::vector<Tensor> tensor_split(const Tensor& x, const std::vector<int64_t>& indices, int64_t dim = 0);

// tensor_split along dim 1 (dim 0 for 1-D; hsplit), 0 (vsplit, 2-D and up) or 2 (dsplit, 3-D
// and up); `sections` must divide that dim.
std::vector<Tensor> hsplit(const Tensor& x, int64_t sections);
std::vector<Tensor> hsplit(const Tensor& x, const std::vector<int64_t>& indices);
std::vector<Tensor> vsplit(const Tensor& x, int64_t sections);
std::vector<Tensor> vsplit(const Tensor& x, const std::vector<int64_t>& indices);
std::vector<Tensor> dsplit(const Tensor& x, int64_t sections);
std::vector<Tensor> dsplit(const Tensor& x, const std::vector<int64_t>& indices);

// Views with at least 1, 2 or 3 dims, as numpy's atleast_*d.
Tensor atleast_1d(const Tensor& x);
Tensor atleast_2d(const Tensor& x);
Tensor atleast_3d(const Tensor& x);
// Joins: hstack (dim 1, dim 0 for 1-D), vstack (rows), dstack (depth),
// column_stack (0-d/1-d inputs as columns).
Tensor hstack(const std::vector<Tensor>& tensors);
Tensor vstack(const std::vector<Tensor>& tensors);
Tensor dstack(const std::vector<Tensor>& tensors);
Tensor column_stack(const std::vector<Tensor>& tensors);

// The rows of the Cartesian product of 1-D tensors, [N1 * N2 * ..., count] (one tensor: itself).
Tensor cartesian_prod(const std::vector<Tensor>& tensors);
// A block-diagonal matrix of 0-d (1x1), 1-D (1xN) and 2-D blocks, zeros elsewhere (dtypes promoted).
Tensor block_diag(const std::vector<Tensor>& tensors);
// Rotation by k * 90 degrees in the plane of dims (from the first towards the second).
Tensor rot90(const Tensor& x, int64_t k = 1, const Dims& dims = {0, 1});
// flip(x, {1}) for 2-D and up; flip(x, {0}) for 1-D and up.
Tensor fliplr(const Tensor& x);
Tensor flipud(const Tensor& x);

// The n-th forward difference along dim, after joining prepend and append (undefined: none).
Tensor diff(const Tensor& x, int64_t n = 1, int64_t dim = -1, const Tensor& prepend = {},
            const Tensor& append = {});

}  // namespace ember
