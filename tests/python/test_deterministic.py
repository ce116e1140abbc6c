"""ember.use_deterministic_algorithms and its debug-mode spellings: the switch, warn_only, the error an op
without a deterministic variant raises (or the warning it gives), and that CPU results do not change.
The CUDA paths it changes are tested in test_cuda_deterministic.py."""
import warnings

import numpy as np
import pytest

import ember

CASES = []  # no OpCase rows: a global switch, not an op


@pytest.fixture(autouse=True)
def restore_switch():
    yield
    ember.use_deterministic_algorithms(False)


def test_switch_and_warn_only():
    assert not ember.are_deterministic_algorithms_enabled()
    ember.use_deterministic_algorithms(True)
    assert ember.are_deterministic_algorithms_enabled()
    assert not ember.is_deterministic_algorithms_warn_only_enabled()
    assert ember.get_deterministic_debug_mode() == 2
    ember.use_deterministic_algorithms(True, warn_only=True)
    assert ember.is_deterministic_algorithms_warn_only_enabled()
    assert ember.get_deterministic_debug_mode() == 1
    ember.use_deterministic_algorithms(False, warn_only=True)
    assert not ember.are_deterministic_algorithms_enabled()
    assert ember.is_deterministic_algorithms_warn_only_enabled()  # torch keeps the flag with the switch off
    ember.use_deterministic_algorithms(False)
    assert not ember.is_deterministic_algorithms_warn_only_enabled()


@pytest.mark.parametrize("mode, enabled, warn_only", [
    ("default", False, False), ("warn", True, True), ("error", True, False), (0, False, False), (1, True, True),
    (2, True, False)])
def test_debug_mode_spellings(mode, enabled, warn_only):
    ember.set_deterministic_debug_mode(mode)
    assert ember.are_deterministic_algorithms_enabled() == enabled
    assert ember.is_deterministic_algorithms_warn_only_enabled() == warn_only
    assert ember.get_deterministic_debug_mode() == (0 if not enabled else 1 if warn_only else 2)


def test_bad_arguments():
    with pytest.raises(TypeError, match="use_deterministic_algorithms"):
        ember.use_deterministic_algorithms(1)
    with pytest.raises(RuntimeError, match="`default`, `warn`, `error`"):
        ember.set_deterministic_debug_mode("loud")
    with pytest.raises(RuntimeError, match="0, 1, or 2"):
        ember.set_deterministic_debug_mode(3)
    with pytest.raises(TypeError, match="str or int"):
        ember.set_deterministic_debug_mode(1.0)


def test_an_op_without_a_deterministic_variant_raises_or_warns():
    ember.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError, match="some_op_cuda does not have a deterministic implementation.*warn_only"):
        ember._C._alert_not_deterministic("some_op_cuda")
    ember.use_deterministic_algorithms(True, warn_only=True)
    with pytest.warns(UserWarning, match="some_op_cuda does not have a deterministic implementation"):
        ember._C._alert_not_deterministic("some_op_cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning filter that raises turns the warning into the exception
        with pytest.raises(UserWarning, match="some_op_cuda"):
            ember._C._alert_not_deterministic("some_op_cuda")


def test_cpu_results_do_not_change():
    rng = np.random.default_rng(0)
    index = ember.tensor(rng.integers(0, 4, 500))
    src = ember.tensor(rng.standard_normal((500, 3)).astype(np.float32))
    weight = ember.randn(10, 4, requires_grad=True)
    tokens = ember.tensor(rng.integers(0, 10, (6, 7)))
    results = []
    for mode in (False, True):
        ember.use_deterministic_algorithms(mode)
        summed = ember.zeros(4, 3).index_add(0, index, src)
        weight.grad = None
        ember.nn.functional.embedding(tokens, weight).sum().backward()
        results.append((summed.numpy(), weight.grad.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_warn_only_is_reported_with_the_switch_off_too():
    try:
        ember.use_deterministic_algorithms(False, warn_only=True)
        assert ember.is_deterministic_algorithms_warn_only_enabled()
        assert not ember.are_deterministic_algorithms_enabled() and ember.get_deterministic_debug_mode() == 0
    finally:
        ember.use_deterministic_algorithms(False)
    assert not ember.is_deterministic_algorithms_warn_only_enabled()
