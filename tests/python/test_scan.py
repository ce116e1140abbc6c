"""cumprod, cummax, cummin and logcumsumexp (core/ops/scan.h) against numpy
(and PyTorch where importable), their gradients by gradcheck (cumprod with
zeros in the input too)."""
import numpy as np
import pytest

import ember
from harness import OpCase, make, table_tests, to_numpy, torch


def np_cumext(a, axis, fn):
    return fn.accumulate(a, axis=axis)


def np_logcumsumexp(a, axis):
    return np.logaddexp.accumulate(a, axis=axis)


CASES = [
    OpCase("cumprod", lambda a: ember.cumprod(a, 1), lambda a: np.cumprod(a, 1), [[(3, 5)], [(2, 4, 3)]],
           dtypes=(np.float32, np.float64), domain=(0.5, 1.5), torch_fn=lambda a: a.cumprod(1)),
    OpCase("cumprod_first_dim", lambda a: a.cumprod(0), lambda a: np.cumprod(a, 0), [[(4, 3)], [(5,)]],
           domain=(-1.5, 1.5)),
    OpCase("cummax", lambda a: ember.cummax(a, 1).values, lambda a: np_cumext(a, 1, np.maximum), [[(3, 6)]],
           dtypes=(np.float32, np.float64, np.int64), torch_fn=lambda a: a.cummax(1).values),
    OpCase("cummin_last", lambda a: a.cummin(-1).values, lambda a: np_cumext(a, -1, np.minimum), [[(2, 3, 5)]],
           dtypes=(np.float32, np.int64)),
    OpCase("logcumsumexp", lambda a: ember.logcumsumexp(a, 0), lambda a: np_logcumsumexp(a, 0), [[(5, 3)], [(7,)]],
           domain=(-30, 30), torch_fn=lambda a: a.logcumsumexp(0)),
]

test_forward, test_gradcheck = table_tests(CASES)


def test_extremes_indices_follow_torch():
    nan = float("nan")
    x = ember.tensor([[1.0, 3.0, 3.0, 2.0, nan, 5.0], [2.0, -1.0, -1.0, 4.0, 4.0, 1.0]])
    mx, mn = ember.cummax(x, 1), ember.cummin(x, 1)
    assert mx.indices.tolist() == [[0, 1, 2, 2, 4, 4], [0, 0, 0, 3, 4, 4]]  # ties: the later one; NaN sticks
    assert mn.indices.tolist() == [[0, 0, 0, 0, 4, 4], [0, 1, 2, 2, 2, 2]]
    assert np.isnan(mx.values[0, 5].item())
    b = ember.cummax(ember.tensor([True, False, True]), 0)
    assert b.values.dtype == ember.bool and b.indices.tolist() == [0, 0, 2]
    if torch is not None:
        tx = torch.tensor(x.numpy())
        assert mx.indices.tolist() == torch.cummax(tx, 1).indices.tolist()
        assert mn.indices.tolist() == torch.cummin(tx, 1).indices.tolist()


def test_integer_products_and_special_values():
    assert ember.cumprod(ember.tensor([2, 3, 4], dtype=ember.int32), 0).tolist() == [2, 6, 24]
    assert ember.cumprod(ember.tensor([2, 3], dtype=ember.int32), 0).dtype == ember.int64
    assert ember.cumprod(ember.tensor([1.5, 2.0]), 0, dtype=ember.float64).dtype == ember.float64
    inf = float("inf")
    assert ember.logcumsumexp(ember.tensor([-inf, 0.0, inf]), 0).tolist() == [-inf, 0.0, inf]
    assert ember.logcumsumexp(ember.tensor([1000.0, 1000.0]), 0).tolist()[1] == pytest.approx(1000.0 + np.log(2))
    assert ember.cumprod(ember.tensor(3.0), 0).item() == 3.0
    with pytest.raises(RuntimeError, match="logcumsumexp: expected a floating point tensor"):
        ember.logcumsumexp(ember.tensor([1, 2]), 0)
    with pytest.raises(IndexError):
        ember.cummax(ember.ones(2, 2), 2)


@pytest.mark.parametrize("values", [[2.0, 0.0, 3.0, 0.0, 5.0], [0.0, 1.5, -2.0], [1.0, 2.0, 0.0], [0.0, 0.0, 0.0]])
def test_cumprod_gradient_with_zeros(values):
    x = make(np.array([values, values[::-1]]), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.cumprod(t, 1), (x,))
    if torch is not None:
        tx = torch.tensor(np.array([values, values[::-1]]), requires_grad=True)
        w = np.linspace(-1, 1, tx.numel()).reshape(tx.shape)
        (torch.cumprod(tx, 1) * torch.tensor(w)).sum().backward()
        (ember.cumprod(x, 1) * ember.tensor(w, device=x.device)).sum().backward()
        np.testing.assert_allclose(to_numpy(x.grad), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_gradients_of_the_extremes_and_logcumsumexp_with_negative_grads():
    x = make(np.array([[1.0, 3.0, 2.0, 5.0], [4.0, 1.0, 6.0, 0.0]]), requires_grad=True)
    ember.cummax(x, 1).values.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [[1, 2, 0, 1], [2, 0, 2, 0]])
    y = make(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    w = make(np.random.default_rng(1).standard_normal((3, 4)))  # gradients of both signs
    assert ember.autograd.gradcheck(lambda t: ember.logcumsumexp(t, 1) * w, (y,))


@pytest.mark.parametrize("op", [ember.cumsum, ember.cumprod, ember.cummax, ember.cummin, ember.logcumsumexp])
def test_a_0d_input_takes_only_dims_0_and_minus_1(op):
    x = make(np.array(2.0, dtype=np.float32))
    for d in (0, -1):
        out = op(x, d)
        out = out[0] if isinstance(out, tuple) else out
        assert out.dim() == 0
    for d in (1, -2):
        with pytest.raises(IndexError, match=r"dimension out of range \(expected to be in range of \[-1, 0\]"):
            op(x, d)
