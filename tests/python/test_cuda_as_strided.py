"""as_strided on CUDA against the CPU: overlapping windows' values and gradients. Needs a CUDA GPU and
skips, saying why, without one."""
import numpy as np

import ember
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy


def test_windows_match_cpu():
    a = np.random.default_rng(2).standard_normal(40)
    results = []
    for device in ("cpu", "cuda"):
        x = ember.tensor(a, device=device, requires_grad=True)
        v = x[3:].as_strided((6, 5), (3, 2), 4)
        (v * ember.arange(30.0, device=device, dtype=v.dtype).reshape(6, 5)).sum().backward()
        results.append((v.detach().cpu().numpy(), x.grad.cpu().numpy()))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-14, atol=1e-14)
