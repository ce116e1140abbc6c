"""ember.testing: assert_close's semantics and messages, make_tensor's ranges
and layouts. Messages are compared with torch.testing's when it is importable
(after spelling torch's dtypes as ember's)."""
import warnings

import numpy as np
import pytest

import ember
from ember.testing import assert_allclose, assert_close, make_tensor
from harness import needs_gpu

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

T = ember.tensor


def _error(fn):
    with pytest.raises((AssertionError, TypeError, ValueError)) as info:
        fn()
    return info.type, str(info.value)


# (name, actual, expected, kwargs): cases that must fail, with torch's exact message.
FAILING = [
    ("float", [1., 2, 3], [1., 2.5, 3], {}),
    ("int2d", [[1, 2], [3, 4]], [[1, 2], [3, 5]], {}),
    ("bool", [True, False], [False, False], {}),
    ("inf", [1., float("inf")], [1., float("-inf")], {}),
    ("nan", [float("nan")], [float("nan")], {}),
    ("zero_expected", [0., 1.], [1e-9, 1.5], {}),
    ("custom_tol", [1., 2.], [1.1, 2.], dict(rtol=0.01, atol=0.01)),
    ("exact_tol", [1., 2.], [1.1, 2.], dict(rtol=0, atol=0)),
]


def _make(values, lib):
    return lib.tensor(values)


@pytest.mark.parametrize("name,actual,expected,kwargs", FAILING, ids=[c[0] for c in FAILING])
def test_tensor_mismatch_messages(name, actual, expected, kwargs):
    kind, message = _error(lambda: assert_close(T(actual), T(expected), **kwargs))
    assert kind is AssertionError
    assert "Mismatched elements" in message and "Greatest absolute difference" in message
    if torch is not None:
        t_kind, t_message = _error(lambda: torch.testing.assert_close(torch.tensor(actual),
                                                                      torch.tensor(expected), **kwargs))
        assert (kind, message) == (t_kind, t_message)


def test_message_content_without_torch():
    _, message = _error(lambda: assert_close(T([1., 2, 3]), T([1., 2.5, 3])))
    assert message == ("Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
                       "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
                       "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)")
    _, message = _error(lambda: assert_close(T([[1, 2], [3, 4]]), T([[1, 2], [3, 5]])))
    assert message.startswith("Tensor-likes are not equal!")
    assert "Greatest absolute difference: 1 at index (1, 1)\n" in message
    assert "allowed" not in message


def test_worst_element_is_reported_not_the_first():
    a = T([0., 0., 0., 0.])
    e = T([0.1, 0.0, 3.0, 0.2])
    _, message = _error(lambda: assert_close(a, e))
    assert "Mismatched elements: 3 / 4 (75.0%)" in message
    assert "Greatest absolute difference: 3.0 at index (2,)" in message


def test_scalar_tensors_and_numbers():
    _, message = _error(lambda: assert_close(T(1.), T(2.)))
    assert message.startswith("Scalars are not close!\n\nExpected 2.0 but got 1.0.\n")
    _, message = _error(lambda: assert_close(1.0, 1.5))
    assert "Absolute difference: 0.5 (up to 1e-07 allowed)" in message
    _, message = _error(lambda: assert_close(1, 2))
    assert message == ("Scalars are not equal!\n\nExpected 2 but got 1.\nAbsolute difference: 1\n"
                       "Relative difference: 0.5")
    kind, message = _error(lambda: assert_close(1, 1.0))
    assert kind is AssertionError and "The (d)types do not match" in message
    assert_close(1, 1.0, check_dtype=False)
    assert_close(1.0, 1.0 + 1e-9)
    kind, _ = _error(lambda: assert_close(float("nan"), float("nan")))
    assert kind is AssertionError
    assert_close(float("nan"), float("nan"), equal_nan=True)
    _, message = _error(lambda: assert_close(True, False))
    assert message == "Booleans mismatch: True is not False"
    _, message = _error(lambda: assert_close(None, 1))
    assert message == "None mismatch: None is not 1"
    assert_close(None, None)


def test_attributes_checked_in_order():
    _, message = _error(lambda: assert_close(T([1.]), T([1., 2.])))
    assert message == "The values for attribute 'shape' do not match: ember.Size([1]) != ember.Size([2])."
    _, message = _error(lambda: assert_close(T([1.]), T([1.], dtype=ember.float64)))
    assert message == "The values for attribute 'dtype' do not match: ember.float32 != ember.float64."
    assert_close(T([1.]), T([1.], dtype=ember.float64), check_dtype=False)
    # Mixed dtypes use the looser of the two defaults (float16's here).
    assert_close(T([1.]), T([1.001], dtype=ember.float16), check_dtype=False)
    x = ember.arange(6.).reshape(2, 3)
    assert_close(x.t(), x.t().contiguous())
    _, message = _error(lambda: assert_close(x.t(), x.t().contiguous(), check_stride=True))
    assert message == "The values for attribute 'stride()' do not match: (1, 3) != (2, 1)."


def test_default_tolerances_by_dtype():
    # Within float16's rtol (1e-3) but far outside float32's (1.3e-6).
    a, e = [1.0, 2.0], [1.0005, 2.0]
    assert_close(T(a, dtype=ember.float16), T(e, dtype=ember.float16))
    with pytest.raises(AssertionError, match="up to 1.3e-06 allowed"):
        assert_close(T(a), T(e))
    assert_close(T(a, dtype=ember.bfloat16), T([1.01, 2.0], dtype=ember.bfloat16))
    with pytest.raises(AssertionError, match="up to 1e-07 allowed"):
        assert_close(T(a, dtype=ember.float64), T([1.000001, 2.0], dtype=ember.float64))
    with pytest.raises(AssertionError, match="not equal"):
        assert_close(T([1, 2]), T([1, 3]))
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted, but got no atol"):
        assert_close(T(a), T(a), rtol=1e-3)


def test_equal_nan_and_grad_tensors():
    nan = float("nan")
    with pytest.raises(AssertionError):
        assert_close(T([nan, 1.]), T([nan, 1.]))
    assert_close(T([nan, 1.]), T([nan, 1.]), equal_nan=True)
    x = ember.ones(3, requires_grad=True)
    assert_close(x * 2, ember.full((3,), 2.0))
    assert_close(T([]), T([]))


def test_containers_name_the_failing_item():
    _, message = _error(lambda: assert_close([T(1.), T(2.)], [T(1.), T(3.)]))
    assert message.endswith("\n\nThe failure occurred for item [1]")
    _, message = _error(lambda: assert_close([{"a": T(1.)}], [{"a": T(3.)}], msg=lambda m: "<" + m + ">"))
    assert message.startswith("<Scalars are not close!") and message.endswith("item [0]['a']>")
    _, message = _error(lambda: assert_close({"a": T(1.)}, {"b": T(1.)}))
    assert message == ("The keys of the mappings do not match:\nMissing keys in the actual mapping: ['b']\n"
                       "Additional keys in the actual mapping: ['a']")
    _, message = _error(lambda: assert_close([1, 2], [1, 2, 3]))
    assert message == "The length of the sequences mismatch: 2 != 3"
    assert_close((T([1.]), 2), [T([1.]), 2])
    assert_close({"w": T([1., 2.]), "n": [3, 4.0]}, {"w": T([1., 2.]), "n": [3, 4.0]})


def test_msg_string_and_unsupported_pairs():
    kind, message = _error(lambda: assert_close(T([1.]), T([2.]), msg="custom"))
    assert (kind, message) == (AssertionError, "custom")
    kind, message = _error(lambda: assert_close(T(1.), 1.0))
    assert kind is TypeError and "No comparison pair was able to handle inputs of type" in message
    kind, _ = _error(lambda: assert_close("a", "a"))
    assert kind is TypeError
    assert_close(np.array([1., 2.]), np.array([1., 2.]))
    with pytest.raises(AssertionError, match="Greatest absolute difference: 1.0 at index"):
        assert_close(np.array([1., 2.]), np.array([1., 3.]))


def test_assert_allclose_is_deprecated_and_loose():
    with pytest.warns(FutureWarning, match="assert_allclose"):
        assert_allclose(T([1.0, 2.0]), [1.00001, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(AssertionError, match="up to 0.0001 allowed"):
            assert_allclose(T([1.]), [1.5])
        assert_allclose(T([float("nan")]), [float("nan")])  # equal_nan defaults to True here


# ---- make_tensor

@pytest.mark.parametrize("dtype,low,high", [
    (ember.float32, -9, 9), (ember.float64, -9, 9), (ember.float16, -9, 9), (ember.bfloat16, -9, 9),
    (ember.int64, -9, 9), (ember.int32, -9, 9), (ember.int8, -9, 9), (ember.uint8, 0, 9),
])
def test_make_tensor_default_ranges(dtype, low, high):
    t = make_tensor(400, dtype=dtype, device="cpu")
    assert t.dtype == dtype and tuple(t.shape) == (400,)
    v = t.float().numpy()
    assert v.min() >= low and v.max() <= high
    assert len(np.unique(v)) > 5  # actually random


def test_make_tensor_shapes_and_options():
    assert tuple(make_tensor(2, 3, dtype=ember.float32, device="cpu").shape) == (2, 3)
    assert tuple(make_tensor((2, 3), dtype=ember.float32, device="cpu").shape) == (2, 3)
    assert tuple(make_tensor([4], dtype=ember.float32, device="cpu").shape) == (4,)
    assert make_tensor((), dtype=ember.float32, device="cpu").dim() == 0
    b = make_tensor(200, dtype=ember.bool, device="cpu")
    assert b.dtype == ember.bool and 0 < int(b.sum()) < 200
    v = make_tensor(300, dtype=ember.int64, device="cpu", low=2.5, high=5.5).numpy()
    assert set(np.unique(v)) == {3, 4, 5}
    v = make_tensor(300, dtype=ember.float32, device="cpu", low=0.5, high=0.75).numpy()
    assert v.min() >= 0.5 and v.max() <= 0.75
    assert (make_tensor(5, dtype=ember.float32, device="cpu", low=2, high=2).numpy() == 2).all()
    v = make_tensor(300, dtype=ember.int64, device="cpu", low=-1, high=2, exclude_zero=True).numpy()
    assert 0 not in v and set(np.unique(v)) == {-1, 1}
    v = make_tensor(50, dtype=ember.float32, device="cpu", low=0, high=1e-30, exclude_zero=True).numpy()
    assert (v != 0).all()
    v = make_tensor(50, dtype=ember.int8, device="cpu", low=-1000, high=1000).numpy()
    assert v.min() >= -128 and v.max() <= 127
    assert np.isfinite(make_tensor(50, dtype=ember.float32, device="cpu", low=-float("inf")).numpy()).all()
    g = make_tensor(3, dtype=ember.float64, device="cpu", requires_grad=True)
    assert g.requires_grad and g.is_leaf


def test_make_tensor_noncontiguous():
    t = make_tensor(2, 3, dtype=ember.float32, device="cpu", noncontiguous=True)
    assert not t.is_contiguous() and tuple(t.shape) == (2, 3)
    assert make_tensor(1, dtype=ember.float32, device="cpu", noncontiguous=True).is_contiguous()


def test_make_tensor_errors():
    with pytest.raises(ValueError, match="make_tensor: `requires_grad=True` is not supported"):
        make_tensor(2, dtype=ember.int64, device="cpu", requires_grad=True)
    with pytest.raises(ValueError, match="make_tensor: `low` must be less than or equal to `high`"):
        make_tensor(2, dtype=ember.float32, device="cpu", low=3, high=1)
    with pytest.raises(ValueError, match="make_tensor: `low` must be less than `high`"):
        make_tensor(2, dtype=ember.int64, device="cpu", low=2, high=2)
    with pytest.raises(ValueError, match="cannot be NaN"):
        make_tensor(2, dtype=ember.float32, device="cpu", low=float("nan"))
    with pytest.raises(ValueError, match=r"ember.uint8 only supports \[0, 256\)"):
        make_tensor(2, dtype=ember.uint8, device="cpu", low=-5, high=-1)
    with pytest.raises(TypeError):
        make_tensor(2, dtype=ember.float32)  # device is required, as in torch


@needs_gpu
def test_on_cuda():
    t = make_tensor(3, 4, dtype=ember.float32, device="cuda", noncontiguous=True)
    assert t.device.type == "cuda" and not t.is_contiguous()
    assert_close(t, t.cpu().cuda())
    _, message = _error(lambda: assert_close(t, t.cpu()))
    assert message.startswith("The values for attribute 'device' do not match: cuda:0 != cpu.")
    assert_close(t, t.cpu(), check_device=False)
    u = t.clone()
    u[1, 2] += 1
    _, message = _error(lambda: assert_close(u, t))
    assert "Mismatched elements: 1 / 12" in message and "at index (1, 2)" in message
