"""inplace=True activations composed in Python must keep their gradient (they used to write under
no_grad, so backward saw the identity: a DCGAN's LeakyReLU(0.2, inplace=True) trained differently)."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

ACTIVATIONS = {
    "leaky_relu": lambda x, inplace: F.leaky_relu(x, 0.2, inplace=inplace),
    "elu": lambda x, inplace: F.elu(x, inplace=inplace),
    "selu": lambda x, inplace: F.selu(x, inplace=inplace),
    "celu": lambda x, inplace: F.celu(x, 0.7, inplace=inplace),
    "hardswish": lambda x, inplace: F.hardswish(x, inplace=inplace),
    "hardsigmoid": lambda x, inplace: F.hardsigmoid(x, inplace=inplace),
    "mish": lambda x, inplace: F.mish(x, inplace=inplace),
    "threshold": lambda x, inplace: F.threshold(x, 0.1, -2.0, inplace=inplace),
    "rrelu_eval": lambda x, inplace: F.rrelu(x, inplace=inplace),
    "silu": lambda x, inplace: F.silu(x, inplace=inplace),
    "LeakyReLU_module": lambda x, inplace: nn.LeakyReLU(0.2, inplace=inplace)(x),
    "ELU_module": lambda x, inplace: nn.ELU(inplace=inplace)(x),
}


def _grad(fn, x0, g0, inplace):
    x = ember.tensor(x0, requires_grad=True)
    hidden = x * 2.0  # a non-leaf, as in a network
    out = fn(hidden, inplace)
    (out * ember.tensor(g0)).sum().backward()
    return out.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_inplace_gradient_matches_out_of_place(name):
    rs = np.random.RandomState(0)
    x0 = rs.randn(2, 3, 4).astype(np.float32)
    g0 = rs.randn(2, 3, 4).astype(np.float32)
    fn = ACTIVATIONS[name]
    out_ref, grad_ref = _grad(fn, x0, g0, inplace=False)
    out_inp, grad_inp = _grad(fn, x0, g0, inplace=True)
    np.testing.assert_allclose(out_inp, out_ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(grad_inp, grad_ref, rtol=1e-6, atol=1e-6)


def test_leaky_relu_inplace_gradient_values():
    x = ember.tensor([-1.0, 2.0], requires_grad=True)
    h = x * 1.0
    out = F.leaky_relu(h, 0.2, inplace=True)
    assert out is h
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.2, 1.0])


def test_inplace_without_grad_writes_input():
    x = ember.tensor([-1.0, 2.0])
    out = F.leaky_relu(x, 0.5, inplace=True)
    assert out is x
    np.testing.assert_allclose(x.numpy(), [-0.5, 2.0])
