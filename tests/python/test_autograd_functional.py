"""ember.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp against
closed forms (and torch.autograd.functional where importable)."""
import numpy as np
import pytest

import ember
from ember.autograd import functional as AF
from harness import torch

CASES = []


def f64(values):
    return ember.tensor(np.asarray(values, dtype=np.float64))


def cubic(x):
    return (x ** 3).sum()


def two_in_two_out(x, y):
    return x * y, (x.exp() + y).sum()


def test_jacobian_of_one_and_several_inputs():
    x = f64([1.0, 2.0, 3.0])
    j = AF.jacobian(lambda t: t ** 2, x)
    np.testing.assert_allclose(j.numpy(), np.diag([2.0, 4.0, 6.0]))
    y = f64([0.5, -1.0, 2.0])
    (jxy, jyy), (jxs, jys) = AF.jacobian(two_in_two_out, (x, y))
    np.testing.assert_allclose(jxy.numpy(), np.diag(y.numpy()))
    np.testing.assert_allclose(jyy.numpy(), np.diag(x.numpy()))
    np.testing.assert_allclose(jxs.numpy(), np.exp(x.numpy()))
    np.testing.assert_allclose(jys.numpy(), np.ones(3))
    m = f64(np.arange(6.0).reshape(2, 3))
    jm = AF.jacobian(lambda t: t.sum(0), m)  # shape output + input
    assert jm.shape == (3, 2, 3)


def test_hessian_hvp_vhp():
    x = f64([1.0, -2.0])
    np.testing.assert_allclose(AF.hessian(cubic, x).numpy(), np.diag(6 * x.numpy()))
    v = f64([1.0, 1.0])
    out, hv = AF.hvp(cubic, x, v)
    np.testing.assert_allclose(out.item(), 1 - 8)
    np.testing.assert_allclose(hv.numpy(), 6 * x.numpy())
    _, vh = AF.vhp(cubic, x, v)
    np.testing.assert_allclose(vh.numpy(), 6 * x.numpy())
    # a cross term: f = x0 * x1^2 -> H = [[0, 2 x1], [2 x1, 2 x0]]
    h = AF.hessian(lambda t: t[0] * t[1] ** 2, f64([3.0, 5.0]))
    np.testing.assert_allclose(h.numpy(), [[0.0, 10.0], [10.0, 6.0]])


def test_vjp_and_jvp():
    x = f64([1.0, 2.0])
    out, g = AF.vjp(lambda t: t ** 2, x, f64([3.0, 4.0]))
    np.testing.assert_allclose(out.numpy(), [1.0, 4.0])
    np.testing.assert_allclose(g.numpy(), [6.0, 16.0])
    out, jv = AF.jvp(lambda t: ember.stack([t[0] * t[1], t[0] + t[1]]), x, f64([1.0, 0.0]))
    np.testing.assert_allclose(jv.numpy(), [2.0, 1.0])  # the first column of J
    assert not jv.requires_grad and not out.requires_grad
    _, gs = AF.vjp(cubic, x)  # v omitted for a one-element output
    np.testing.assert_allclose(gs.numpy(), 3 * x.numpy() ** 2)


def test_create_graph_and_strict():
    x = f64([2.0]).requires_grad_()
    _, g = AF.vjp(cubic, x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [12.0])
    with pytest.raises(RuntimeError, match="independent of input 1"):
        AF.jacobian(lambda a, b: a * 2, (f64([1.0]), f64([1.0])), strict=True)
    j = AF.jacobian(lambda a, b: a * 2, (f64([1.0]), f64([1.0])))
    assert float(j[1].abs().sum()) == 0.0
    with pytest.raises(TypeError, match="expected inputs to be a Tensor or a tuple of Tensors"):
        AF.jacobian(cubic, [1.0, 2.0])
    with pytest.raises(RuntimeError, match="hessian: the function must return a single one-element tensor"):
        AF.hessian(lambda t: t * 2, f64([1.0, 2.0]))


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_against_torch():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(4), rng.standard_normal(4)

    def f(fw):
        return lambda x, y: (x.sin() * y.exp()).sum() + (x * x * y).sum()

    ours = AF.hessian(f(ember), (f64(a), f64(b)))
    theirs = torch.autograd.functional.hessian(f(torch), (torch.tensor(a), torch.tensor(b)))
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(ours[i][j].numpy(), theirs[i][j].numpy(), rtol=1e-12)
    v = rng.standard_normal(4)
    g = lambda fw: (lambda x: ember.stack([x.sum(), (x ** 2).sum()]) if fw is ember  # noqa: E731
                    else torch.stack([x.sum(), (x ** 2).sum()]))
    np.testing.assert_allclose(AF.jvp(g(ember), f64(a), f64(v))[1].numpy(),
                               torch.autograd.functional.jvp(g(torch), torch.tensor(a), torch.tensor(v))[1].numpy(),
                               rtol=1e-12)


def test_functions_that_do_not_depend_on_the_input_give_zeros():
    x = f64([1.0, 2.0])
    assert float(AF.jacobian(lambda t: ember.ones(2), x).abs().sum()) == 0.0
    assert float(AF.hessian(lambda t: t.sum(), x).abs().sum()) == 0.0
    assert float(AF.hvp(lambda t: (2 * t).sum(), x, x)[1].abs().sum()) == 0.0
    assert float(AF.vjp(lambda t: ember.ones(2), x, x)[1].abs().sum()) == 0.0
    np.testing.assert_allclose(AF.jvp(lambda t: t * 3, x, x)[1].numpy(), [3.0, 6.0])


def test_grad_with_batched_grad_outputs_gives_the_jacobian():
    # is_grads_batched: the grad_outputs' first dim holds vectors; one vector-Jacobian product each.
    a = np.random.default_rng(0).standard_normal((3, 4))
    x = ember.tensor(a, requires_grad=True)
    unused = ember.tensor(1.0, requires_grad=True)
    y = (x ** 2).sum(1)
    jac, none = ember.autograd.grad(y, (x, unused), ember.eye(3, dtype=ember.float64), is_grads_batched=True,
                                    allow_unused=True)
    expected = np.zeros((3, 3, 4))
    for i in range(3):
        expected[i, i] = 2 * a[i]
    np.testing.assert_allclose(jac.numpy(), expected)
    assert none is None
    with pytest.raises(RuntimeError, match="same first \\(batch\\) dimension"):
        ember.autograd.grad((x.sum(), y), x, (ember.ones(2), ember.ones(3, 3)), is_grads_batched=True)
