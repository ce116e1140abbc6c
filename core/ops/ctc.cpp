// ctc_alignment_nll: argument checks, the CPU kernels (core/cpu/ctc.cpp) and
// the autograd node.
#include <ember/core/ops/ctc.h>

#include <algorithm>

#include <ember/autograd/functions/loss.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/ctc.h>
#include <ember/core/error.h>
#include <ember/core/ops/factory.h>

namespace ember {

namespace {

void check_arguments(const Tensor& log_probs, const Tensor& extended, const std::vector<int64_t>& input_lengths,
                     const std::vector<int64_t>& target_lengths, int64_t blank) {
  EMBER_CHECK(log_probs.dim() == 3, ValueError, "ctc_loss: expected log_probs of size [T, N, C], got ",
              log_probs.shape_str());
  EMBER_CHECK(log_probs.device().is_cpu() && extended.device().is_cpu(), Error,
              "ctc_loss: the fused recursion runs on the CPU, got log_probs on ", log_probs.device().str());
  EMBER_CHECK(log_probs.dtype() == DType::Float32 || log_probs.dtype() == DType::Float64, TypeError,
              "ctc_loss: the fused recursion takes float32 or float64 log_probs, got ", dtype_name(log_probs.dtype()));
  const int64_t T = log_probs.size(0), N = log_probs.size(1), C = log_probs.size(2);
  EMBER_CHECK(extended.dtype() == DType::Int64 && extended.dim() == 2 && extended.size(0) == N, ValueError,
              "ctc_loss: expected extended targets int64 [", N, ", S], got ", dtype_name(extended.dtype()), " ",
              extended.shape_str());
  EMBER_CHECK(static_cast<int64_t>(input_lengths.size()) == N && static_cast<int64_t>(target_lengths.size()) == N,
              ValueError, "ctc_loss: expected ", N, " input and target lengths, got ", input_lengths.size(), " and ",
              target_lengths.size());
  EMBER_CHECK(blank >= 0 && blank < C, IndexError, "ctc_loss: blank must be in label range [0, ", C, "), got ",
              blank);
  const Tensor ext = extended.contiguous();
  const int64_t* labels = ext.data<int64_t>();
  for (int64_t n = 0; n < N; ++n) {
    EMBER_CHECK(input_lengths[n] >= 0 && input_lengths[n] <= T, ValueError, "ctc_loss: input length ",
                input_lengths[n], " of sample ", n, " is outside [0, ", T, "]");
    EMBER_CHECK(target_lengths[n] >= 0 && 2 * target_lengths[n] + 1 <= extended.size(1), ValueError,
                "ctc_loss: target length ", target_lengths[n], " of sample ", n, " needs ",
                2 * target_lengths[n] + 1, " extended positions, got ", extended.size(1));
    for (int64_t s = 0; s < 2 * target_lengths[n] + 1; ++s) {
      const int64_t c = labels[n * extended.size(1) + s];
      EMBER_CHECK(c >= 0 && c < C, IndexError, "ctc_loss: target label ", c, " of sample ", n,
                  " is outside [0, ", C, ")");
    }
  }
}

}  // namespace

Tensor ctc_alignment_nll(const Tensor& log_probs, const Tensor& extended, const std::vector<int64_t>& input_lengths,
                         const std::vector<int64_t>& target_lengths, int64_t blank) {
  check_arguments(log_probs, extended, input_lengths, target_lengths, blank);
  const Tensor lp = log_probs.detach().contiguous();
  const Tensor ext = extended.contiguous();
  const int64_t T = lp.size(0), N = lp.size(1);
  Tensor nll = empty({N}, lp.dtype(), lp.device());
  Tensor log_alpha = empty({T, N, ext.size(1)}, lp.dtype(), lp.device());
  cpu::ctc_forward(nll, log_alpha, lp, ext, input_lengths.data(), target_lengths.data(), blank);
  if (autograd::any_requires_grad({log_probs})) {
    autograd::record("CtcLossBackward0", {log_probs}, {nll}, {log_probs, log_alpha, nll.detach(), ext},
                     autograd::functions::ctc_backward(input_lengths, target_lengths, blank));
  }
  return nll;
}

}  // namespace ember
