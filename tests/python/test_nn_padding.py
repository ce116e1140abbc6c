"""Padding modules (ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad in 1-D/2-D/3-D) over
F.pad: against numpy.pad (always), torch (when importable), gradcheck, and bad input."""
import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.autograd import gradcheck
from harness import OpCase, table_tests, torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
_F = (np.float32, np.float64)
_NP_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def np_pad(a, widths, mode, value=0.0):
    """F.pad's (left, right, top, bottom, ...) widths, last dimension first, through numpy.pad."""
    pairs = [(0, 0)] * (a.ndim - len(widths) // 2)
    pairs += [(widths[2 * i], widths[2 * i + 1]) for i in reversed(range(len(widths) // 2))]
    if mode == "constant":
        return np.pad(a, pairs, mode="constant", constant_values=value)
    return np.pad(a, pairs, mode=_NP_MODE[mode])


MODULES = [  # (module, F.pad mode, widths, value, input shape)
    (nn.ZeroPad1d(2), "constant", (2, 2), 0.0, (2, 3, 4)),
    (nn.ZeroPad2d((1, 0, 2, 1)), "constant", (1, 0, 2, 1), 0.0, (2, 3, 4)),
    (nn.ZeroPad3d(1), "constant", (1,) * 6, 0.0, (1, 2, 2, 3, 2)),
    (nn.ConstantPad1d((0, 3), 1.5), "constant", (0, 3), 1.5, (3, 4)),
    (nn.ConstantPad2d(1, -2.0), "constant", (1, 1, 1, 1), -2.0, (2, 3, 4)),
    (nn.ConstantPad3d((1, 0, 0, 1, 2, 0), 3.0), "constant", (1, 0, 0, 1, 2, 0), 3.0, (1, 2, 2, 2, 2)),
    (nn.ReflectionPad1d((3, 1)), "reflect", (3, 1), 0.0, (2, 3, 5)),
    (nn.ReflectionPad2d((1, 2, 2, 0)), "reflect", (1, 2, 2, 0), 0.0, (2, 3, 4)),
    (nn.ReflectionPad3d(1), "reflect", (1,) * 6, 0.0, (1, 2, 3, 2, 3)),
    (nn.ReplicationPad1d(2), "replicate", (2, 2), 0.0, (2, 3, 4)),
    (nn.ReplicationPad2d((0, 3, 1, 2)), "replicate", (0, 3, 1, 2), 0.0, (1, 2, 3, 3)),
    (nn.ReplicationPad3d((1, 1, 0, 2, 1, 0)), "replicate", (1, 1, 0, 2, 1, 0), 0.0, (1, 1, 2, 2, 2)),
    (nn.CircularPad1d((2, 1)), "circular", (2, 1), 0.0, (2, 3, 4)),
    (nn.CircularPad2d(1), "circular", (1, 1, 1, 1), 0.0, (1, 2, 3, 4)),
    (nn.CircularPad3d((1, 0, 1, 0, 0, 1)), "circular", (1, 0, 1, 0, 0, 1), 0.0, (1, 1, 2, 3, 2)),
]
IDS = [type(m).__name__ for m, *_ in MODULES]


def _row(module, mode, widths, value, shape):
    return OpCase(f"{type(module).__name__}", lambda x: module(x), lambda a: np_pad(a, widths, mode, value),
                  [[shape]], dtypes=_F)


CASES = [_row(*entry) for entry in MODULES]
test_table_forward, test_table_gradcheck = table_tests(CASES)


@pytest.mark.parametrize("module,mode,widths,value,shape", MODULES, ids=IDS)
def test_module_padding_and_gradient(module, mode, widths, value, shape):
    rng = np.random.default_rng(len(widths) + len(shape))
    a = rng.standard_normal(shape)
    np.testing.assert_allclose(module(ember.tensor(a)).numpy(), np_pad(a, widths, mode, value))
    # The gradient of a padding sums the copies back onto their source elements.
    x = ember.tensor(a, requires_grad=True)
    module(x).sum().backward()
    ones = np.ones(shape)
    counts = np_pad(np.arange(ones.size).reshape(shape), widths, mode, -1)
    expected = np.bincount(counts[counts >= 0].ravel(), minlength=ones.size).reshape(shape)
    np.testing.assert_allclose(x.grad.numpy(), expected)
    assert gradcheck(lambda t: module(t), [ember.tensor(a, requires_grad=True)])


def test_unbatched_and_repr():
    x = ember.tensor(np.arange(6.0).reshape(2, 3))
    assert nn.ReflectionPad1d(1)(x).numpy().tolist() == [[1, 0, 1, 2, 1], [4, 3, 4, 5, 4]]
    assert repr(nn.ConstantPad2d(1, 2.5)) == "ConstantPad2d((1, 1, 1, 1), value=2.5)"
    assert "(1, 2)" in repr(nn.CircularPad1d((1, 2)))


def test_bad_padding():
    with pytest.raises(ValueError, match="reflect"):
        nn.ReflectionPad1d(3)(ember.ones(1, 2, 3))  # the width must be less than the size
    with pytest.raises(ValueError, match="CircularPad2d"):
        nn.CircularPad2d(1)(ember.ones(3, 3))
    with pytest.raises(RuntimeError, match="ReflectionPad2d"):
        nn.ReflectionPad2d(1)(ember.ones(1, 1, 1, 3, 3))
    with pytest.raises(NotImplementedError, match="ReflectionPad1d"):
        nn.ReflectionPad1d(1)(ember.ones(1, 1, 2, 3))
    assert nn.ZeroPad2d((1, 2))(ember.ones(2, 2)).shape == (2, 5)  # a tuple is taken as given, as torch does


@needs_torch
@pytest.mark.parametrize("module,mode,widths,value,shape", MODULES, ids=IDS)
def test_torch_parity(module, mode, widths, value, shape):
    ref_module = getattr(torch.nn, type(module).__name__)
    args = (module.padding, value) if "Constant" in type(module).__name__ else (module.padding,)
    a = np.random.default_rng(2).standard_normal(shape)
    t = torch.tensor(a, requires_grad=True)
    x = ember.tensor(a, requires_grad=True)
    g = np.random.default_rng(3).standard_normal(np_pad(a, widths, mode, value).shape)
    ref = ref_module(*args)(t)
    out = module(x)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy())
    (ref * torch.tensor(g)).sum().backward()
    (out * ember.tensor(g)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", [ember.float32, ember.int64, ember.bool])
def test_constant_pad_crops_then_pads_in_one_copy(dtype):
    # Negative widths crop, positive ones pad, in any mix; zero widths return the input itself.
    a = np.arange(3 * 5 * 6).reshape(3, 5, 6) % 7
    x = ember.from_numpy(a).to(dtype)
    got = ember.nn.functional.pad(x, (-1, 2, 1, -2, 0, 1), value=1)
    want = np.pad(x.numpy()[:, :-2, 1:], ((0, 1), (1, 0), (0, 2)), constant_values=1)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.numpy(), want)
    assert ember.nn.functional.pad(x, (0, 0)) is x
    w = ember.ones(2, 3, dtype=ember.float64, requires_grad=True)
    (ember.nn.functional.pad(w, (1, -1, 0, 2)) * 2).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[2, 2, 0], [2, 2, 0]])
