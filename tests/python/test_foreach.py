"""ember._foreach_*: each one against numpy on a list of tensors of different shapes."""
import numpy as np
import pytest

import ember
from harness import assert_close, make, to_numpy, torch

SHAPES = [(3,), (2, 4), ()]


def arrays(seed=0, positive=False):
    rng = np.random.default_rng(seed)
    out = [rng.standard_normal(s) for s in SHAPES]
    return [np.abs(a) + 0.5 for a in out] if positive else out


def tensors(arrs):
    return [make(a) for a in arrs]


@pytest.mark.parametrize("name, fn", [("exp", np.exp), ("sqrt", np.sqrt), ("neg", np.negative), ("abs", np.abs),
                                      ("sigmoid", lambda a: 1 / (1 + np.exp(-a))), ("log", np.log),
                                      ("reciprocal", np.reciprocal), ("sign", np.sign)])
def test_unary(name, fn):
    a = arrays(positive=True)
    for got, want in zip(getattr(ember, f"_foreach_{name}")(tensors(a)), a):
        assert_close(got, fn(want))
    ts = tensors(a)
    assert getattr(ember, f"_foreach_{name}_")(ts) is not None
    for got, want in zip(ts, a):
        assert_close(got, fn(want))


@pytest.mark.parametrize("other", ["number", "list", "tensors", "scalar_tensor"])
@pytest.mark.parametrize("name, fn", [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                                      ("div", np.divide), ("maximum", np.maximum), ("clamp_min", np.maximum),
                                      ("clamp_max", np.minimum), ("pow", np.power)])
def test_binary(name, fn, other):
    a, b = arrays(1, positive=True), arrays(2, positive=True)
    values = {"number": (1.5, [1.5] * 3), "list": ([0.5, 2.0, 3.0], [0.5, 2.0, 3.0]),
              "tensors": (tensors(b), b), "scalar_tensor": (make(np.array(2.5)), [2.5] * 3)}[other]
    if other in ("list", "number") and name in ("maximum",):
        pytest.skip("maximum takes tensors only, as in torch")
    got = getattr(ember, f"_foreach_{name}")(tensors(a), values[0])
    for g, x, y in zip(got, a, values[1]):
        assert_close(g, fn(x, y))
    ts = tensors(a)
    getattr(ember, f"_foreach_{name}_")(ts, values[0])
    for g, x, y in zip(ts, a, values[1]):
        assert_close(g, fn(x, y))


def test_alpha_lerp_pointwise_norm_and_copies():
    a, b, c = arrays(3), arrays(4), arrays(5, positive=True)
    ts = tensors(a)
    ember._foreach_add_(ts, tensors(b), alpha=-0.5)
    for g, x, y in zip(ts, a, b):
        assert_close(g, x - 0.5 * y)
    ts = tensors(a)
    ember._foreach_lerp_(ts, tensors(b), [0.1, 0.5, 0.9])  # an EMA step with a weight per tensor
    for g, x, y, w in zip(ts, a, b, [0.1, 0.5, 0.9]):
        assert_close(g, x + w * (y - x))
    for g, x, y, z in zip(ember._foreach_addcdiv(tensors(a), tensors(b), tensors(c), value=2.0), a, b, c):
        assert_close(g, x + 2.0 * y / z)
    values = [1.0, 2.0, 3.0]
    for g, x, y, v in zip(ember._foreach_addcmul(tensors(a), tensors(b), tensors(b), values), a, b, values):
        assert_close(g, x + v * y * y)
    for g, x in zip(ember._foreach_norm(tensors(a)), a):
        assert_close(g, np.linalg.norm(np.ravel(x)))
    for g, x in zip(ember._foreach_norm(tensors(a), 1), a):
        assert_close(g, np.abs(x).sum())
    for g, x in zip(ember._foreach_pow(2.0, tensors(a)), a):
        assert_close(g, 2.0 ** x)
    ts = tensors(a)
    ember._foreach_copy_(ts, tensors(b))
    ember._foreach_mul_(ts, 2.0)
    for g, y in zip(ts, b):
        assert_close(g, 2 * y)
    ember._foreach_zero_(ts)
    assert all(not to_numpy(t).any() for t in ts)


def test_errors():
    with pytest.raises(RuntimeError, match="at least one tensor"):
        ember._foreach_add([], 1.0)
    with pytest.raises(RuntimeError, match="same number of elements as scalar list"):
        ember._foreach_add([ember.ones(2)], [1.0, 2.0])
    with pytest.raises(TypeError, match="expected a list of tensors"):
        ember._foreach_mul(ember.ones(2), 2.0)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_matches_torch():
    a, b = arrays(6), arrays(7)
    ea, eb = [ember.tensor(x) for x in a], [ember.tensor(x) for x in b]
    ta, tb = [torch.tensor(x) for x in a], [torch.tensor(x) for x in b]
    for name, args in [("_foreach_lerp", ([0.3, 0.6, 0.9],)), ("_foreach_add", (2.0,)), ("_foreach_sub", (None,))]:
        e_args = [eb if x is None else x for x in args]
        t_args = [tb if x is None else x for x in args]
        for g, w in zip(getattr(ember, name)(ea, *([eb] if name == "_foreach_lerp" else []), *e_args),
                        getattr(torch, name)(ta, *([tb] if name == "_foreach_lerp" else []), *t_args)):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)
