"""igamma / igammac (special.gammainc / gammaincc): known values, P + Q = 1, scipy and torch when
importable, the gradient in x (gradcheck) and the refused one in a, the domain, dtypes, in-place forms."""
import math

import numpy as np
import pytest

import ember
from harness import OpCase, table_tests, torch

try:
    import scipy.special as sp
except ImportError:
    sp = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
needs_scipy = pytest.mark.skipif(sp is None, reason="scipy is not importable")

A = np.array([0.5, 1.0, 3.0, 10.0, 100.0, 1e4, 2.0, 50.0])
X = np.array([0.1, 2.0, 1.0, 30.0, 120.0, 1e4 + 50, 0.0, 10.0])

CASES = [
    # a = 1: P(1, x) = 1 - exp(-x), a positive-domain row for the table tests
    OpCase("igamma_a1", lambda x: ember.igamma(ember.ones_like(x), x), lambda x: -np.expm1(-x), [[(5,)]],
           dtypes=(np.float32, np.float64), domain=(0.1, 5.0), rtol=1e-5),
    OpCase("igammac_a1", lambda x: ember.igammac(ember.ones_like(x), x), lambda x: np.exp(-x), [[(5,)]],
           dtypes=(np.float32, np.float64), domain=(0.1, 5.0), rtol=1e-5),
]

test_forward, test_gradcheck = table_tests(CASES)


def test_known_values_and_complement():
    # P(1/2, x) = erf(sqrt(x)); P(3, x) = 1 - e^-x (1 + x + x^2/2)
    x = np.array([0.3, 1.0, 4.0, 25.0])
    np.testing.assert_allclose(ember.special.gammainc(ember.full((4,), 0.5, dtype=ember.float64),
                                                      ember.tensor(x)).numpy(),
                               [math.erf(math.sqrt(v)) for v in x], rtol=1e-13)
    np.testing.assert_allclose(ember.igammac(ember.full((4,), 3.0, dtype=ember.float64), ember.tensor(x)).numpy(),
                               np.exp(-x) * (1 + x + x * x / 2), rtol=1e-13)
    p, q = ember.igamma(ember.tensor(A), ember.tensor(X)), ember.igammac(ember.tensor(A), ember.tensor(X))
    np.testing.assert_allclose((p + q).numpy(), 1.0, rtol=1e-14)


def test_upper_tail_keeps_its_digits():
    q = ember.igammac(ember.tensor([5.0], dtype=ember.float64), ember.tensor([80.0], dtype=ember.float64)).item()
    exact = math.exp(-80) * sum(80.0 ** k / math.factorial(k) for k in range(5))  # Q(5, 80), integer a
    assert abs(q - exact) / exact < 1e-12


def test_domain_dtype_and_in_place():
    out = ember.igamma(ember.tensor([-1.0, 1.0, 0.0]), ember.tensor([1.0, -1.0, 1.0]))
    assert np.isnan(out.numpy()).all()
    assert ember.igamma(ember.tensor([2]), ember.tensor([3])).dtype == ember.float32  # integers promote
    assert ember.igamma(ember.tensor([2.0]), 0.0).item() == 0.0
    assert ember.igammac(2.0, ember.tensor([float("inf")])).item() == 0.0
    x = ember.tensor([2.0, 3.0])
    assert x.igamma_(ember.tensor([1.0, 1.0])) is x
    np.testing.assert_allclose(x.numpy(), [1 - 2 / math.e, 1 - 2.5 / math.e], rtol=1e-6)  # P(2, 1), P(3, 1)


def test_gradients():
    a = ember.tensor([0.7, 2.0, 9.0], dtype=ember.float64)
    x = ember.tensor([0.4, 2.5, 11.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.igamma(a, t), [x])
    assert ember.autograd.gradcheck(lambda t: ember.igammac(a, t), [x])
    with pytest.raises(RuntimeError, match="derivative of igamma with respect to its first input"):
        ember.igamma(a.clone().requires_grad_(), x.detach()).sum().backward()


@needs_scipy
def test_matches_scipy():
    np.testing.assert_allclose(ember.igamma(ember.tensor(A), ember.tensor(X)).numpy(), sp.gammainc(A, X),
                               rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(ember.igammac(ember.tensor(A), ember.tensor(X)).numpy(), sp.gammaincc(A, X),
                               rtol=1e-11, atol=1e-300)


@needs_torch
def test_matches_torch_values_and_x_gradient():
    np.testing.assert_allclose(ember.igamma(ember.tensor(A), ember.tensor(X)).numpy(),
                               torch.igamma(torch.tensor(A), torch.tensor(X)).numpy(), rtol=1e-9)
    xe = ember.tensor([1.5, 3.0], requires_grad=True)
    ember.igammac(ember.tensor([2.0, 2.0]), xe).sum().backward()
    xt = torch.tensor([1.5, 3.0], requires_grad=True)
    torch.igammac(torch.tensor([2.0, 2.0]), xt).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
