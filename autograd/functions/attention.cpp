// Backward of the fused scaled_dot_product_attention: the CUDA kernels
// recompute the attention probabilities from the saved logsumexp.
#include <ember/autograd/functions/attention.h>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/ops/attention.h>
#include <ember/core/ops/factory.h>

namespace ember::autograd::functions {

Vjp scaled_dot_product_flash_attention_backward(double scale, bool is_causal) {
  return [scale, is_causal](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor &q = s[0], &k = s[1], &v = s[2], &out = s[3], &lse = s[4];
    const Tensor grad = g[0].defined() ? g[0] : zeros_like(out);
    std::vector<Tensor> grads =
        scaled_dot_product_flash_attention_backward(grad, q, k, v, out, lse, scale, is_causal);
    if (any_requires_grad({grad, q, k, v})) {  // create_graph: a second backward must fail loudly
      record("ScaledDotProductFlashAttentionBackwardBackward0", {grad, q, k, v}, grads, {},
             [](const TensorList&, const TensorList&, const std::vector<bool>&) -> TensorList {
               throw Error(
                   "scaled_dot_product_attention: double backward through the fused flash attention kernel "
                   "(ScaledDotProductFlashAttentionBackward0) is not supported; disable the flash path with "
                   "ember.backends.cuda.enable_flash_sdp(False) (C++: ember::set_flash_sdp_enabled(false)) so that "
                   "attention runs as differentiable ember ops");
             });
    }
    return TensorList{grads[0], grads[1], grads[2]};
  };
}

}  // namespace ember::autograd::functions
