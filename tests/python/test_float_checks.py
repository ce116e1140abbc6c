"""isnan / isinf / isposinf / isneginf / isfinite / isclose / allclose against
numpy (and PyTorch where importable), on special values, every dtype and
non-contiguous inputs, with their errors."""
import numpy as np
import pytest

import ember
from harness import OpCase, table_tests

SPECIAL = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 1e-30, -np.nan], dtype=np.float64)
FLOATS = (np.float32, np.float64)
ALL = (np.float32, np.float64, np.int64, np.int32, np.bool_)


def special(a):
    """The harness's random values with inf, -inf and NaN written in."""
    a = np.array(a, copy=True)
    if a.dtype.kind == "f" and a.size:
        flat = a.reshape(-1)
        flat[:: 3] = np.inf
        flat[1:: 4] = -np.inf
        flat[2:: 5] = np.nan
    return a


def special_t(t):
    """special() on an ember tensor, on its device and in its logical order."""
    if not t.is_floating_point() or t.numel() == 0:
        return t
    flat = t.clone().reshape(-1)
    flat[::3] = float("inf")
    flat[1::4] = float("-inf")
    flat[2::5] = float("nan")
    return flat.reshape(t.shape)


CASES = [
    OpCase("isnan", lambda a: ember.isnan(special_t(a)), lambda a: np.isnan(special(a)),
           [[(4, 5)], [()], [(0, 3)]], dtypes=ALL, grad=False),
    OpCase("isinf", lambda a: special_t(a).isinf(), lambda a: np.isinf(special(a)),
           [[(4, 5)], [(7,)]], dtypes=ALL, grad=False),
    OpCase("isposinf", lambda a: ember.isposinf(special_t(a)), lambda a: np.isposinf(special(a)),
           [[(4, 5)]], dtypes=ALL, grad=False),
    OpCase("isneginf", lambda a: ember.isneginf(special_t(a)), lambda a: np.isneginf(special(a)),
           [[(4, 5)]], dtypes=ALL, grad=False),
    OpCase("isfinite", lambda a: ember.isfinite(special_t(a)), lambda a: np.isfinite(special(a)),
           [[(4, 5)], [(2, 3, 4)]], dtypes=ALL, grad=False),
    OpCase("isfinite_strided", lambda a: ember.isfinite(special_t(a).t()),
           lambda a: np.isfinite(special(a)).T, [[(4, 5)]], grad=False),
    OpCase("isclose", lambda a, b: ember.isclose(a, a + b * 1e-6), lambda a, b: np.isclose(a, a + b * np.float32(1e-6)),
           [[(4, 5), (4, 5)], [(3, 1), (1, 4)]], grad=False),
    OpCase("isclose_tolerances", lambda a, b: a.isclose(b, rtol=0.5, atol=0.1),
           lambda a, b: np.isclose(a, b, rtol=0.5, atol=0.1), [[(6, 5), (6, 5)]], dtypes=FLOATS, grad=False,
           torch_fn=lambda a, b: __import__("torch").isclose(a, b, rtol=0.5, atol=0.1)),
]

test_forward, _ = table_tests(CASES)


def test_special_values_match_numpy():
    for dtype in (ember.float16, ember.bfloat16, ember.float32, ember.float64):
        x = ember.from_numpy(SPECIAL).to(dtype)
        assert x.isnan().tolist() == np.isnan(SPECIAL).tolist(), dtype
        assert x.isinf().tolist() == np.isinf(SPECIAL).tolist(), dtype
        assert ember.isposinf(x).tolist() == np.isposinf(SPECIAL).tolist(), dtype
        assert ember.isneginf(x).tolist() == np.isneginf(SPECIAL).tolist(), dtype
        assert x.isfinite().tolist() == np.isfinite(SPECIAL).tolist(), dtype


def test_integers_are_never_nan_or_infinite():
    x = ember.tensor([-(2 ** 62), 0, 7])
    assert x.isnan().tolist() == [False] * 3 and x.isinf().tolist() == [False] * 3
    assert x.isfinite().tolist() == [True] * 3 and x.isfinite().dtype == ember.bool


def test_isclose_infinities_nans_and_equal_nan():
    a = ember.tensor([np.inf, -np.inf, np.inf, np.nan, np.nan, 1.0, 1.0])
    b = ember.tensor([np.inf, -np.inf, -np.inf, np.nan, 1.0, 1.0 + 1e-9, np.inf])
    expected = np.isclose(a.numpy(), b.numpy())
    assert ember.isclose(a, b).tolist() == expected.tolist()
    assert ember.isclose(a, b, equal_nan=True).tolist() == np.isclose(a.numpy(), b.numpy(), equal_nan=True).tolist()
    assert ember.isclose(a, b, rtol=0, atol=0).tolist() == (a.numpy() == b.numpy()).tolist()


def test_isclose_integers_and_bools():
    a, b = ember.tensor([1, 100, -5]), ember.tensor([2, 100, -5])
    assert ember.isclose(a, b).tolist() == [False, True, True]
    assert ember.isclose(a, b, atol=1).tolist() == [True, True, True]
    assert ember.isclose(ember.tensor([True, False]), ember.tensor([True, True])).tolist() == [True, False]


def test_allclose():
    x = ember.randn(10, 10)
    assert ember.allclose(x, x * (1 + 1e-7))
    assert not ember.allclose(x, x + 1e-3)
    y = x + 1e-7  # fails near 0, as numpy's
    assert ember.allclose(x, y) == np.allclose(x.numpy(), y.numpy())
    assert x.allclose(x.clone()) is True
    assert ember.allclose(ember.tensor([np.nan]), ember.tensor([np.nan]), equal_nan=True)
    assert not ember.allclose(ember.tensor([np.nan]), ember.tensor([np.nan]))
    assert ember.allclose(ember.ones(3, 1), ember.ones(1, 4))  # broadcasts


def test_checks_record_no_history():
    x = ember.randn(3, requires_grad=True)
    assert not x.isnan().requires_grad and not ember.isclose(x, x).requires_grad


@pytest.mark.parametrize("fn, exc, match", [
    (lambda: ember.isclose(ember.ones(2), ember.ones(2, dtype=ember.float64)), RuntimeError,
     "isclose: expected both inputs to have the same dtype, but got float32 and float64"),
    (lambda: ember.isclose(ember.ones(2), ember.ones(2), rtol=-1), RuntimeError, "isclose: rtol must be"),
    (lambda: ember.isclose(ember.ones(2), ember.ones(2), atol=-1), RuntimeError, "isclose: atol must be"),
    (lambda: ember.isclose(ember.ones(2), ember.ones(3)), RuntimeError, r"\[2\].*\[3\]"),
    (lambda: ember.isnan([1.0]), TypeError, "isnan"),
])
def test_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()
