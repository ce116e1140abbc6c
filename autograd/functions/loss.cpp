// Backward of the fused cross_entropy and ctc_loss recursion.
#include <ember/autograd/functions/loss.h>

#include <ember/autograd/grad_mode.h>
#include <ember/core/cpu/ctc.h>
#include <ember/core/cpu/loss.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/index.h>
#include <ember/core/ops/shape.h>
#include <ember/core/ops/softmax.h>
#include <ember/core/ops/unary.h>
#include <ember/cuda/loss.h>

namespace ember::autograd::functions {

Vjp cross_entropy_backward(int64_t class_dim, int64_t ignore_index, const Shape& view) {
  return [=](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& x = s[0];
    const Tensor& target = s[1];
    const Tensor& wt = s[2];
    if (!grad_enabled()) {
      const DType compute = wt.dtype();
      auto prep = [&](const Tensor& t) { return (t.dtype() == compute ? t : t.to(compute)).contiguous(); };
      // The CUDA kernel reads half logits directly and writes their gradient in
      // their dtype (W3's [8192, 50257] bfloat16 logits: no 1.6 GB float32 copy).
      Tensor gx = empty(x.shape(), x.device().is_cuda() ? x.dtype() : compute, x.device());
      if (gx.numel() > 0 && x.device().is_cuda()) {
        cuda::cross_entropy_backward(gx, prep(g[0]), wt, s[3], x.detach().contiguous(), target, ignore_index,
                                     view[0], view[1], view[2]);
      } else if (gx.numel() > 0) {
        cpu::cross_entropy_backward(gx, prep(g[0]), wt, s[3], prep(x.detach()), target, ignore_index, view[0],
                                    view[1], view[2]);
      }
      return TensorList{gx};
    }
    // In the loss's compute dtype (float32 for half logits), as the kernels above.
    const Tensor p = softmax(x.dtype() == wt.dtype() ? x : x.to(wt.dtype()), class_dim);
    const Tensor valid = ne(target, full({}, ignore_index, DType::Int64, target.device()));
    const Tensor safe = where(valid, target, zeros({}, DType::Int64, target.device()));
    const Tensor hot = scatter(zeros(p.shape(), p.dtype(), p.device()), class_dim, unsqueeze(safe, class_dim), 1.0);
    return TensorList{mul(unsqueeze(mul(g[0], wt), class_dim), sub(p, hot))};
  };
}

Vjp nll_backward(int64_t class_dim, int64_t ignore_index, const Shape& view) {
  return [=](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& x = s[0];
    const Tensor& target = s[1];
    const Tensor& wt = s[2];
    if (!grad_enabled() && x.device().is_cuda()) {
      const DType compute = wt.dtype();
      Tensor gx = empty(x.shape(), compute, x.device());
      const Tensor gl = (g[0].dtype() == compute ? g[0] : g[0].to(compute)).contiguous();
      cuda::nll_backward(gx, gl, wt, target, ignore_index, view[0], view[1], view[2]);
      return TensorList{gx};
    }
    const Tensor valid = ne(target, full({}, ignore_index, DType::Int64, target.device()));
    const Tensor safe = where(valid, target, zeros({}, DType::Int64, target.device()));
    const Tensor hot = scatter(zeros(x.shape(), wt.dtype(), x.device()), class_dim, unsqueeze(safe, class_dim), 1.0);
    return TensorList{mul(unsqueeze(neg(mul(g[0], wt)), class_dim), hot)};
  };
}

Vjp binary_cross_entropy_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>& needs) {
    const Tensor &x = s[0], &t = s[1], &w = s[2];
    const Tensor one = full({}, 1.0, x.dtype(), x.device());
    const Tensor gw = w.defined() ? mul(g[0], w) : g[0];
    TensorList out(3);
    if (needs[0]) {
      const Tensor denom = clamp(mul(x, sub(one, x)), Scalar(1e-12), std::nullopt);
      out[0] = div(mul(gw, sub(x, t)), denom);
    }
    if (needs[1] || (needs.size() > 2 && needs[2])) {
      const std::optional<Scalar> lo = Scalar(-100.0), none;
      const Tensor log_x = clamp(log(x), lo, none), log_1mx = clamp(log(sub(one, x)), lo, none);
      if (needs[1]) out[1] = mul(gw, sub(log_1mx, log_x));
      if (needs.size() > 2 && needs[2]) {
        out[2] = mul(g[0], neg(add(mul(t, log_x), mul(sub(one, t), log_1mx))));
      }
    }
    return out;
  };
}

Vjp ctc_backward(std::vector<int64_t> input_lengths, std::vector<int64_t> target_lengths, int64_t blank) {
  return [input_lengths = std::move(input_lengths), target_lengths = std::move(target_lengths), blank](
             const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor lp = s[0].detach().contiguous();
    const Tensor &log_alpha = s[1], &nll = s[2], &extended = s[3];
    const Tensor grad_nll = g[0].defined() ? g[0].detach().to(lp.dtype()).contiguous() : zeros_like(nll);
    Tensor grad = empty(lp.shape(), lp.dtype(), lp.device());
    cpu::ctc_backward(grad, grad_nll, nll, log_alpha, lp, extended, input_lengths.data(), target_lengths.data(),
                      blank);
    if (any_requires_grad({g[0], s[0]})) {  // create_graph: a second backward must fail loudly
      record("CtcLossBackwardBackward0", {g[0], s[0]}, {grad}, {},
             [](const TensorList&, const TensorList&, const std::vector<bool>&) -> TensorList {
               throw Error("ctc_loss: double backward through the CPU recursion (CtcLossBackward0) is not "
                           "supported, as in torch");
             });
    }
    return TensorList{grad};
  };
}

}  // namespace ember::autograd::functions
