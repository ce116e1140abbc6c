"""ctc_loss on CUDA against the CPU path: the loss of every batch element and the logits' gradients, in
float64. Needs a CUDA GPU and skips, saying why, without one."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_cuda_matches_cpu(zero_infinity):
    rng = np.random.default_rng(41)
    logits = rng.standard_normal((16, 3, 7))
    targets = np.array([[1, 1, 2, 3], [4, 5, 0, 0], [6, 6, 6, 6]])
    lengths, input_lengths = [4, 2, 4], [16, 9, 5]  # the third cannot align (needs 7 frames)
    results = []
    for device in ("cpu", "cuda"):
        x = ember.tensor(logits, device=device, requires_grad=True)
        loss = F.ctc_loss(x.log_softmax(2), ember.tensor(targets, device=device), input_lengths, lengths,
                          reduction="none", zero_infinity=zero_infinity)
        loss.masked_fill(loss == float("inf"), 0.0).sum().backward()
        results.append((loss.detach().cpu().numpy(), x.grad.cpu().numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-10)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-9, atol=1e-12)
