"""ember.special on CUDA: every function's values and gradients equal the CPU's."""
import numpy as np
import pytest

import ember
import ember.special as es
from harness import needs_gpu

pytestmark = needs_gpu

X = np.linspace(-7.5, 9.5, 23)
P = np.linspace(0.001, 0.999, 23)
POS = np.linspace(0.2, 6.0, 23)
FUNCTIONS = [
    ("erfcx", es.erfcx, X), ("log_ndtr", es.log_ndtr, X), ("ndtr", es.ndtr, X), ("ndtri", es.ndtri, P),
    ("i0", es.i0, X * 5), ("i0e", es.i0e, X * 5), ("i1", es.i1, X * 5), ("i1e", es.i1e, X * 5),
    ("sinc", es.sinc, X), ("entr", es.entr, POS), ("expit", es.expit, X),
    ("xlog1py", lambda t: es.xlog1py(t, t * t), X), ("zeta", lambda t: es.zeta(2.5, t), POS),
    ("polygamma2", lambda t: es.polygamma(2, t), POS), ("multigammaln", lambda t: es.multigammaln(t, 2), POS + 1),
    ("bessel_j0", es.bessel_j0, X * 4), ("bessel_j1", es.bessel_j1, X * 4),
]


@pytest.mark.parametrize("name,fn,values", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_cuda_matches_cpu(name, fn, values, dtype):
    results = []
    for device in ("cpu", "cuda"):
        x = ember.tensor(values, dtype=dtype, device=device, requires_grad=True)
        y = fn(x)
        (g,) = ember.autograd.grad(y.sum(), [x])
        assert y.device.type == device
        results.append((y.detach().cpu().double().numpy(), g.cpu().double().numpy()))
    tol = 1e-12 if dtype == ember.float64 else 1e-5
    for cpu, cuda in zip(*results):
        np.testing.assert_allclose(cuda, cpu, rtol=tol, atol=tol, err_msg=name)
