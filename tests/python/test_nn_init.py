"""ember.nn.init: bounds, statistics, gains, fans, reproducibility under ember.manual_seed."""
import math

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn import init


def npy(t):
    return t.detach().numpy()


def test_calculate_gain():
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == pytest.approx(0.75)
    with pytest.raises(ValueError):
        init.calculate_gain("swish")
    with pytest.raises(ValueError):
        init.calculate_gain("leaky_relu", "x")


def test_fan_in_and_fan_out():
    assert init._calculate_fan_in_and_fan_out(ember.empty(5, 3)) == (3, 5)
    assert init._calculate_fan_in_and_fan_out(ember.empty(8, 4, 3, 3)) == (36, 72)
    with pytest.raises(ValueError):
        init._calculate_fan_in_and_fan_out(ember.empty(4))


def test_uniform_normal_constant():
    ember.manual_seed(0)
    t = init.uniform_(ember.empty(20000), -2.0, 3.0)
    a = npy(t)
    assert a.min() >= -2.0 and a.max() <= 3.0 and abs(a.mean() - 0.5) < 0.05
    n = npy(init.normal_(ember.empty(20000), 1.0, 2.0))
    assert abs(n.mean() - 1.0) < 0.06 and abs(n.std() - 2.0) < 0.06
    assert np.all(npy(init.constant_(ember.empty(3), 0.25)) == 0.25)
    assert np.all(npy(init.zeros_(ember.empty(3))) == 0) and np.all(npy(init.ones_(ember.empty(3))) == 1)
    np.testing.assert_array_equal(npy(init.eye_(ember.empty(2, 3))), np.eye(2, 3))


def test_init_works_on_parameters_without_recording_history():
    p = nn.Parameter(ember.empty(4, 4))
    out = init.kaiming_uniform_(p)
    assert out is p and p.is_leaf and p.grad_fn is None and p.requires_grad


def test_reproducible_with_manual_seed():
    ember.manual_seed(123)
    a = npy(init.xavier_normal_(ember.empty(5, 6)))
    ember.manual_seed(123)
    b = npy(init.xavier_normal_(ember.empty(5, 6)))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, npy(init.xavier_normal_(ember.empty(5, 6))))


def test_xavier():
    ember.manual_seed(0)
    t = ember.empty(200, 300)
    bound = math.sqrt(6 / 500) * 2.0
    a = npy(init.xavier_uniform_(t, gain=2.0))
    assert a.max() <= bound and a.max() > 0.95 * bound and abs(a.std() - bound / math.sqrt(3)) < 0.01 * bound
    b = npy(init.xavier_normal_(t))
    assert abs(b.std() - math.sqrt(2 / 500)) < 0.02 * math.sqrt(2 / 500)


def test_kaiming():
    ember.manual_seed(0)
    t = ember.empty(64, 32, 3, 3)  # fan_in = 288, fan_out = 576
    a = npy(init.kaiming_uniform_(t, nonlinearity="relu"))
    bound = math.sqrt(2) * math.sqrt(3 / 288)
    assert a.max() <= bound and a.max() > 0.95 * bound
    b = npy(init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu"))
    assert abs(b.std() - math.sqrt(2 / 576)) < 0.03 * math.sqrt(2 / 576)
    c = npy(init.kaiming_uniform_(t, a=math.sqrt(5)))  # the Linear/Conv default: bound 1/sqrt(fan_in)
    assert c.max() <= 1 / math.sqrt(288) and c.max() > 0.95 / math.sqrt(288)
    with pytest.raises(ValueError):
        init.kaiming_uniform_(t, mode="fan_avg")


def test_trunc_normal():
    ember.manual_seed(0)
    a = npy(init.trunc_normal_(ember.empty(20000), mean=0.5, std=1.0, a=-1.0, b=1.5))
    assert a.min() >= -1.0 and a.max() <= 1.5
    # mean of N(0.5, 1) truncated to [-1.5, 1] (in standard units), shifted back
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2
    expected = 0.5 + (phi(-1.5) - phi(1.0)) / (cdf(1.0) - cdf(-1.5))
    assert abs(a.mean() - expected) < 0.02
    b = npy(init.trunc_normal_(ember.empty(20000), std=0.02))
    assert abs(b.std() - 0.02) < 0.001


def test_orthogonal():
    ember.manual_seed(0)
    for shape in [(6, 4), (4, 6), (4, 2, 3)]:
        t = ember.empty(*shape)
        q = npy(init.orthogonal_(t, gain=2.0)).reshape(shape[0], -1)
        gram = q @ q.T if shape[0] <= q.shape[1] else q.T @ q
        np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-5)
    with pytest.raises(ValueError):
        init.orthogonal_(ember.empty(3))


def test_dirac():
    t = init.dirac_(ember.empty(2, 2, 3, 3))
    a = npy(t)
    assert a.sum() == 2 and a[0, 0, 1, 1] == 1 and a[1, 1, 1, 1] == 1
