"""grid_sample(mode="bicubic") on CUDA against the CPU path, forward and backward (input and grid).
Skips, saying why, without a CUDA GPU."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from harness import needs_gpu

pytestmark = needs_gpu


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_bicubic_cuda_matches_cpu(padding, align):
    rng = np.random.default_rng(5)
    x, g = rng.standard_normal((2, 3, 5, 6)), rng.uniform(-1.3, 1.3, (2, 4, 3, 2))
    results = []
    for device in ("cpu", "cuda"):
        xt = ember.tensor(x, device=device, requires_grad=True)
        gt = ember.tensor(g, device=device, requires_grad=True)
        out = F.grid_sample(xt, gt, mode="bicubic", padding_mode=padding, align_corners=align)
        out.square().sum().backward()
        results.append([t.detach().cpu().numpy() for t in (out, xt.grad, gt.grad)])
    for cpu, cuda in zip(*results):
        np.testing.assert_allclose(cuda, cpu, rtol=1e-9, atol=1e-9)
