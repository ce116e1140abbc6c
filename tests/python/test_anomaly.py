"""ember.autograd anomaly detection and the autograd namespace (grad modes,
Variable, gradgradcheck). Anomaly mode is process-wide: every test restores it."""
import warnings

import numpy as np
import pytest

import ember
from ember import autograd

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None


@pytest.fixture(autouse=True)
def _anomaly_off():
    yield
    ember._C._set_anomaly_enabled(False, True)


def _quiet():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore")
    return ctx


def _nan_backward(x):
    y = ember.sqrt(x)  # FORWARD-LINE: d sqrt at 0 is inf, times 0 is nan
    return (y * 0).sum()


def test_nan_gradient_raises_with_forward_traceback():
    x = ember.tensor([1.0, 0.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = autograd.detect_anomaly()
    with mode:
        loss = _nan_backward(x)
        with pytest.warns(UserWarning, match="Error detected in SqrtBackward0"):
            with pytest.raises(RuntimeError) as info:
                loss.backward()
    message = str(info.value)
    assert message.startswith("Function 'SqrtBackward0' returned nan values in its 0th output.")
    assert "Traceback of forward call that caused the error" in message
    assert "test_anomaly.py" in message and "FORWARD-LINE" in message
    assert not ember.is_anomaly_enabled()


def test_without_anomaly_mode_nan_flows_silently():
    x = ember.tensor([1.0, 0.0], requires_grad=True)
    _nan_backward(x).backward()
    assert np.isnan(x.grad.numpy()[1])


def test_output_index_and_check_nan_false():
    x = ember.tensor([0.0], requires_grad=True)
    ctx = _quiet()
    try:
        with autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match=r"Function 'DivBackward0' returned nan values in its 1th output\."):
                (x / x).sum().backward()
        with autograd.detect_anomaly(check_nan=False):
            assert ember.is_anomaly_enabled() and not ember.is_anomaly_check_nan_enabled()
            (x / x).sum().backward()  # no error: NaN checks are off
    finally:
        ctx.__exit__(None, None, None)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_flags_follow_torch():
    states = []
    for lib in (ember, torch):
        seen = [lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()]
        lib.autograd.set_detect_anomaly(False, check_nan=False)
        seen += [lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()]
        with lib.autograd.set_detect_anomaly(True):
            seen += [lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()]
        seen += [lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()]
        lib.autograd.set_detect_anomaly(False)
        states.append(seen)
    assert states[0] == states[1]


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_message_matches_torch():
    def first_line(lib):
        x = lib.tensor([1.0, 0.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                with pytest.raises(RuntimeError) as info:
                    (lib.sqrt(x) * 0).sum().backward()
        return str(info.value).splitlines()[0]
    assert first_line(ember) == first_line(torch)


def test_other_backward_errors_report_the_forward_call():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    ctx = _quiet()
    try:
        with autograd.detect_anomaly():
            y = x.exp()  # SAVED-OUTPUT-LINE
            z = y.sum()
            y.add_(1)  # invalidates the saved output
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                    z.backward()
    finally:
        ctx.__exit__(None, None, None)
    reports = [str(w.message) for w in caught if "Error detected in ExpBackward0" in str(w.message)]
    assert reports and "SAVED-OUTPUT-LINE" in reports[0]


def test_forward_outside_anomaly_mode_has_no_traceback():
    x = ember.tensor([1.0, 0.0], requires_grad=True)
    loss = _nan_backward(x)  # recorded with anomaly mode off
    ctx = _quiet()
    try:
        with autograd.detect_anomaly():
            with pytest.raises(RuntimeError) as info:
                loss.backward()
    finally:
        ctx.__exit__(None, None, None)
    assert str(info.value) == "Function 'SqrtBackward0' returned nan values in its 0th output."


def test_custom_function_nodes_are_checked():
    class BadGrad(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = ember.tensor([1.0], requires_grad=True)
    ctx = _quiet()
    try:
        with autograd.detect_anomaly():
            y = BadGrad.apply(x)  # CUSTOM-LINE
            with pytest.raises(RuntimeError, match="Function 'BadGradBackward' returned nan") as info:
                y.sum().backward()
    finally:
        ctx.__exit__(None, None, None)
    assert "CUSTOM-LINE" in str(info.value)


def test_autograd_grad_is_checked_too():
    x = ember.tensor([0.0], requires_grad=True)
    ctx = _quiet()
    try:
        with autograd.detect_anomaly():
            y = ember.log(x) * 0
            with pytest.raises(RuntimeError, match="returned nan values"):
                autograd.grad(y.sum(), [x])
    finally:
        ctx.__exit__(None, None, None)


def test_decorator_and_set_detect_anomaly():
    ctx = _quiet()
    try:
        @autograd.detect_anomaly()
        def inside():
            return ember.is_anomaly_enabled(), ember.is_anomaly_check_nan_enabled()

        assert inside() == (True, True)
        assert not ember.is_anomaly_enabled()
    finally:
        ctx.__exit__(None, None, None)
    autograd.set_detect_anomaly(True)
    assert autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()
    autograd.set_detect_anomaly(False)
    # As in torch, the check_nan flag is reported whether or not the mode is on.
    assert not autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()
    with autograd.set_detect_anomaly(True, check_nan=False):
        assert ember.is_anomaly_enabled() and not ember.is_anomaly_check_nan_enabled()
    assert not ember.is_anomaly_enabled() and ember.is_anomaly_check_nan_enabled()
    # Nested: the inner block restores the outer setting.
    with autograd.set_detect_anomaly(True):
        with autograd.set_detect_anomaly(False):
            assert not ember.is_anomaly_enabled()
        assert ember.is_anomaly_enabled()


def test_many_nodes_under_anomaly_mode():
    # The node table is swept as it grows; graphs keep their tracebacks.
    x = ember.tensor([1.0], requires_grad=True)
    ctx = _quiet()
    try:
        with autograd.detect_anomaly():
            for _ in range(3000):
                (x * 2).sum().backward()
            y = ember.sqrt(x - 1)  # LATE-LINE
            with pytest.raises(RuntimeError) as info:
                (y * 0).sum().backward()
    finally:
        ctx.__exit__(None, None, None)
    assert "LATE-LINE" in str(info.value)


# ---- the rest of the autograd namespace

def test_grad_modes_in_autograd_namespace():
    assert autograd.no_grad is ember.no_grad and autograd.enable_grad is ember.enable_grad
    assert autograd.set_grad_enabled is ember.set_grad_enabled and autograd.inference_mode is ember.inference_mode
    x = ember.ones(2, requires_grad=True)
    with autograd.no_grad():
        assert not (x * 2).requires_grad
    assert autograd.grad_mode.no_grad is ember.no_grad


def test_variable_returns_a_tensor():
    t = ember.tensor([1.0, 2.0])
    v = autograd.Variable(t, requires_grad=True)
    assert isinstance(v, ember.Tensor) and v.requires_grad and v.is_leaf
    assert isinstance(t, autograd.Variable)
    assert not isinstance(3.0, autograd.Variable)
    (v * v).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [2.0, 4.0])
    v.data.mul_(0)  # shares t's memory
    assert t.sum().item() == 0
    assert not autograd.Variable(ember.ones(1)).requires_grad
    with pytest.raises(TypeError, match="Variable: data must be a Tensor"):
        autograd.Variable([1.0])


def test_gradgradcheck_detects_wrong_second_derivatives():
    x = ember.tensor([0.3, 1.1], dtype=ember.float64, requires_grad=True)
    assert autograd.gradgradcheck(lambda t: (t ** 3).sin(), (x,))

    class WrongSecond(autograd.Function):
        # First derivative right (3 t^2) but written so its own derivative is wrong.
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t ** 3

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * 3 * t.detach() ** 2

    assert autograd.gradcheck(WrongSecond.apply, (x,))
    with pytest.raises(autograd.GradcheckError):
        autograd.gradgradcheck(WrongSecond.apply, (x,))
    assert not autograd.gradgradcheck(WrongSecond.apply, (x,), raise_exception=False)
    g = ember.tensor([0.5, -1.0], dtype=ember.float64, requires_grad=True)
    assert autograd.gradgradcheck(lambda t: t.exp() * t, (x,), (g,))
