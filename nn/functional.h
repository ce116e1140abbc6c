// ember::nn::functional: the stateless ops a training loop calls, as
// torch::nn::functional. They are ember's core ops, re-exported by name.
#pragma once
#include <ember/core/ops/loss.h>
#include <ember/core/ops/nn_misc.h>
#include <ember/core/ops/softmax.h>
#include <ember/core/ops/unary.h>

namespace ember::nn::functional {

using ember::binary_cross_entropy;
using ember::binary_cross_entropy_with_logits;
using ember::cross_entropy;
using ember::dropout;
using ember::kl_div;
using ember::l1_loss;
using ember::mse_loss;
using ember::nll_loss;
using ember::log_softmax;
using ember::relu;
using ember::softmax;
using ember::smooth_l1_loss;

}  // namespace ember::nn::functional
