// Backward formulas of the reduce family, written with ember ops so double
// backward works. Masks and signs (piecewise constant in x) come from
// reduce_detail::grad_coeff and carry no graph, which is exact: their
// derivative is zero. Two formulas use constants that are not (prod over
// zeros, norm with a general p); they refuse double backward instead of
// returning a wrong second derivative.
#include <ember/autograd/functions/reduce.h>

#include <cmath>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/shape.h>
#include <ember/core/ops/softmax.h>

namespace ember::autograd::functions {

using reduce_detail::grad_coeff;

namespace {

Tensor scaled(const Tensor& t, double s) { return mul(t, scalar_tensor(s)); }

// Under create_graph the backward itself is recorded; formulas whose
// coefficients are computed without a graph must not be differentiated again.
void check_no_double_backward(const char* op, const char* why) {
  EMBER_CHECK(!grad_enabled(), NotImplementedError, op, ": double backward ", why, " is not implemented");
}

}  // namespace

Tensor expand_reduced(const Tensor& g, const Shape& keep_shape, const Shape& in_shape) {
  return expand(reshape(g, keep_shape), in_shape);
}

Vjp sum_backward(const Shape& keep_shape, const Shape& in_shape) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{expand_reduced(g[0], keep_shape, in_shape)};
  };
}

Vjp mean_backward(const Shape& keep_shape, const Shape& in_shape, int64_t reduced_count) {
  const double scale = reduced_count ? 1.0 / static_cast<double>(reduced_count) : 0.0;
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{mul(expand_reduced(g[0], keep_shape, in_shape), scalar_tensor(scale))};
  };
}

Vjp prod_backward(const Shape& keep_shape, const Shape& in_shape, std::optional<int64_t> dim) {
  return [=](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& x = s[0];
    const Tensor ge = expand_reduced(g[0], keep_shape, in_shape);
    // No zeros: d prod / d x_i = prod / x_i, which is differentiable again.
    if (all(x.detach()).item().to_bool()) {
      const Tensor& out = s[1];
      return TensorList{mul(ge, div(reshape(out, keep_shape), x))};
    }
    check_no_double_backward("prod", "through an input containing zeros");
    return TensorList{mul(ge, reduce_detail::prod_others(x, dim))};
  };
}

Vjp extreme_backward(const Shape& keep_shape, const Shape& in_shape, const Dims& reduced) {
  return [=](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor mask = grad_coeff(GradCoeff::EqMask, s[0], reshape(s[1].detach(), keep_shape));
    const Tensor count = sum(mask, reduced, /*keepdim=*/true);
    return TensorList{mul(expand_reduced(g[0], keep_shape, in_shape), div(mask, count))};
  };
}

Vjp index_reduce_backward(const Shape& keep_shape, const Shape& in_shape, int64_t dim) {
  return [=](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor ge = expand_reduced(g[0], keep_shape, in_shape);
    if (in_shape.empty()) return TensorList{ge};
    // One-hot of the index along dim: positions 0..n-1 compared with the index.
    Shape pos_shape(in_shape.size(), 1);
    pos_shape[dim] = in_shape[dim];
    const Tensor pos = reshape(arange(0, in_shape[dim], 1, ge.dtype(), ge.device()), pos_shape);
    const Tensor onehot = grad_coeff(GradCoeff::EqMask, pos, reshape(s[0], keep_shape).to(ge.dtype()));
    return TensorList{mul(ge, onehot)};
  };
}

Vjp var_backward(const Shape& keep_shape, const Shape& in_shape, const Dims& reduced, double denom) {
  return [=](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& x = s[0];
    const Tensor centered = sub(x, mean(x, reduced, /*keepdim=*/true));
    return TensorList{mul(expand_reduced(g[0], keep_shape, in_shape), scaled(centered, 2.0 / denom))};
  };
}

Vjp std_backward(const Shape& keep_shape, const Shape& in_shape, const Dims& reduced, double correction,
                 double denom) {
  return [=](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& x = s[0];
    const Tensor& out = s[1];
    const Tensor centered = sub(x, mean(x, reduced, /*keepdim=*/true));
    const Tensor coeff = div(scaled(centered, 1.0 / denom), reshape(out, keep_shape));
    return TensorList{mul(expand_reduced(g[0], keep_shape, in_shape), coeff)};
  };
}

Vjp norm_backward(const Shape& keep_shape, const Shape& in_shape, const Dims& reduced, double p) {
  return [=](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& x = s[0];
    const Tensor n = reshape(s[1], keep_shape);
    const Tensor ge = expand_reduced(g[0], keep_shape, in_shape);
    if (p == 0) return TensorList{mul(ge, zeros({}, ge.dtype()))};
    if (p == 1) return TensorList{mul(ge, grad_coeff(GradCoeff::Sign, x, x))};
    if (p == 2) {
      // x / norm, with a zero norm (all of x zero) giving zero instead of 0/0.
      const Tensor safe = add(n, grad_coeff(GradCoeff::EqMask, n, zeros({}, n.dtype())));
      return TensorList{mul(ge, div(x, safe))};
    }
    if (std::isinf(p)) {
      // Shared evenly among the elements whose |x| is the extreme.
      const Tensor mask = grad_coeff(GradCoeff::AbsEqMask, x, n.detach());
      const Tensor coeff = mul(grad_coeff(GradCoeff::Sign, x, x), div(mask, sum(mask, reduced, true)));
      return TensorList{mul(ge, coeff)};
    }
    check_no_double_backward("norm", "for this p");
    return TensorList{mul(ge, grad_coeff(GradCoeff::NormPow, x, n.detach(), p))};
  };
}

Vjp logsumexp_backward(const Shape& keep_shape, const Shape& in_shape, const Dims& kept, const Dims& reduced) {
  return [=](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& x = s[0];
    const Tensor ge = expand_reduced(g[0], keep_shape, in_shape);
    if (reduced.empty()) return TensorList{ge};  // 0-d: logsumexp(x) = x
    // exp(x - logsumexp) is the softmax over the reduced dims: move them last,
    // flatten them into one, and take a softmax there (differentiable again).
    Dims order = kept;
    order.insert(order.end(), reduced.begin(), reduced.end());
    const Tensor moved = permute(x, order);
    Shape flat;
    int64_t count = 1;
    for (auto d : kept) flat.push_back(in_shape[d]);
    for (auto d : reduced) count *= in_shape[d];
    flat.push_back(count);
    const Tensor sm = reshape(softmax(reshape(moved, flat), -1), moved.shape());
    Dims inverse(order.size());
    for (size_t i = 0; i < order.size(); ++i) inverse[order[i]] = static_cast<int64_t>(i);
    return TensorList{mul(ge, permute(sm, inverse))};
  };
}

Vjp cumsum_backward(int64_t dim) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    if (dim < 0) return TensorList{g[0]};
    // The reversed running sum: total - inclusive prefix + own element.
    const Tensor& gr = g[0];
    return TensorList{add(sub(sum(gr, {dim}, /*keepdim=*/true), cumsum(gr, dim)), gr)};
  };
}

}  // namespace ember::autograd::functions
