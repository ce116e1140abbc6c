"""interpolate's bicubic and antialiased modes on CUDA against the CPU path, forward and backward, in
float64. Needs a CUDA GPU and skips, saying why, without one."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy


@pytest.mark.parametrize("kwargs", [dict(size=(9, 14), mode="bicubic"),
                                    dict(size=(4, 5), mode="bicubic", align_corners=True),
                                    dict(size=(3, 4), mode="bilinear", antialias=True),
                                    dict(size=(3, 4), mode="bicubic", antialias=True)])
def test_matches_cpu(kwargs):
    a = np.random.default_rng(3).standard_normal((2, 3, 7, 9))
    results = []
    for device in ("cpu", "cuda"):
        x = ember.tensor(a, device=device, requires_grad=True)
        y = F.interpolate(x, **kwargs)
        (y * ember.linspace(-1, 1, y.numel(), device=device, dtype=y.dtype).reshape(y.shape)).sum().backward()
        results.append((y.detach().cpu().numpy(), x.grad.cpu().numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-12, atol=1e-12)
