"""ember.linalg.LinAlgError on numerical failures, linalg.diagonal / vander / tensorinv / tensorsolve,
the deprecated nn.init spellings and the conv weight memory-format converters: against numpy (always) and
torch (when importable), gradcheck, errors."""
import warnings

import numpy as np
import pytest

import ember
import ember.linalg as LA
from harness import OpCase, table_tests, torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
RNG = np.random.default_rng(29)


def np_vander(x, n=None):
    return np.vander(x, N=n, increasing=True)


CASES = [
    OpCase("linalg.diagonal", lambda a: LA.diagonal(a, offset=1), lambda a: np.diagonal(a, 1, -2, -1).copy(),
           [[(3, 4)], [(2, 3, 3)]], dtypes=(np.float32, np.int64)),
    OpCase("linalg.vander", lambda x: LA.vander(x), np_vander, [[(4,)]], dtypes=(np.float64,), domain=(0.5, 2.0)),
    OpCase("linalg.vander_N", lambda x: LA.vander(x, N=3), lambda a: np_vander(a, 3), [[(5,)]],
           dtypes=(np.float64,), domain=(0.5, 2.0)),
    OpCase("linalg.tensorinv", lambda a: LA.tensorinv(a.reshape(2, 3, 6) + 3 * ember.eye(
           6, dtype=a.dtype, device=a.device).reshape(2, 3, 6), ind=2),
           lambda a: np.linalg.tensorinv(a.reshape(2, 3, 6) + 3 * np.eye(6, dtype=a.dtype).reshape(2, 3, 6), ind=2),
           [[(36,)]], dtypes=(np.float64,), rtol=1e-8, atol=1e-10, extra={"fuzz": False}),
    OpCase("linalg.tensorsolve", lambda a, b: LA.tensorsolve(a.reshape(6, 2, 3) + 3 * ember.eye(
           6, dtype=a.dtype, device=a.device).reshape(6, 2, 3), b),
           lambda a, b: np.linalg.tensorsolve(a.reshape(6, 2, 3) + 3 * np.eye(6, dtype=a.dtype).reshape(6, 2, 3), b),
           [[(36,), (6,)]], dtypes=(np.float64,), rtol=1e-8, atol=1e-10, extra={"fuzz": False}),
]

test_forward, test_gradcheck = table_tests(CASES)


@pytest.mark.parametrize("call", [
    lambda: LA.inv(ember.zeros(2, 2)), lambda: LA.cholesky(-ember.eye(3)), lambda: LA.solve(ember.zeros(2, 2),
                                                                                            ember.ones(2)),
    lambda: LA.matrix_power(ember.zeros(2, 2), -1),
])
def test_numerical_failures_raise_linalg_error_which_is_a_runtime_error(call):
    with pytest.raises(LA.LinAlgError) as info:
        call()
    assert isinstance(info.value, RuntimeError)
    assert "singular" in str(info.value) or "positive-definite" in str(info.value)


def test_other_errors_stay_runtime_errors():
    with pytest.raises(RuntimeError) as info:
        LA.inv(ember.ones(2, 3))
    assert not isinstance(info.value, LA.LinAlgError)


def test_vander_and_tensor_errors():
    with pytest.raises(RuntimeError, match="N must be greater than 1"):
        LA.vander(ember.ones(3), N=1)
    with pytest.raises(RuntimeError, match="strictly positive integer"):
        LA.tensorinv(ember.eye(4), ind=0)
    with pytest.raises(RuntimeError, match="but got 3 != 2"):
        LA.tensorsolve(ember.ones(2, 3), ember.ones(2))
    assert LA.vander(ember.tensor([2, 3])).tolist() == [[1, 2], [1, 3]]  # integers stay integers


def test_deprecated_init_spellings_warn_and_work():
    w = ember.empty(3, 4)
    with pytest.warns(FutureWarning, match="nn.init.constant` is now deprecated in favor of `nn.init.constant_"):
        out = ember.nn.init.constant(w, 2.5)
    assert out is w and (w == 2.5).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ember.nn.init.xavier_uniform(w)
    assert float(w.abs().max()) <= np.sqrt(6 / 7) + 1e-6


def test_memory_format_converters_return_the_module():
    model = ember.nn.Sequential(ember.nn.Conv2d(1, 2, 3), ember.nn.Conv3d(2, 2, 1))
    assert ember.nn.utils.convert_conv2d_weight_memory_format(model, ember.channels_last) is model
    assert ember.nn.utils.convert_conv3d_weight_memory_format(model, ember.channels_last_3d) is model
    with pytest.raises(TypeError, match="memory_format"):
        ember.nn.utils.convert_conv2d_weight_memory_format(model, "channels_last")


@needs_torch
def test_match_torch():
    x = RNG.standard_normal(4)
    np.testing.assert_allclose(LA.vander(ember.tensor(x), N=5).numpy(),
                               torch.linalg.vander(torch.tensor(x), N=5).numpy(), rtol=1e-12)
    a = RNG.standard_normal((6, 2, 3)) + 3 * np.eye(6).reshape(6, 2, 3)
    np.testing.assert_allclose(LA.tensorinv(ember.tensor(a), 1).numpy(), torch.linalg.tensorinv(torch.tensor(a),
                                                                                                 1).numpy(),
                               rtol=1e-10, atol=1e-12)
    assert issubclass(torch.linalg.LinAlgError, RuntimeError) and issubclass(LA.LinAlgError, RuntimeError)
