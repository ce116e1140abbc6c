"""Arguments that ember reads on the host (a std checked for signs, a tensor
given where a list of ints is expected) work when they live on the GPU: they
are copied over first instead of being read through a device pointer."""
import numpy as np
import pytest

import ember
from harness import needs_gpu, to_numpy

pytestmark = needs_gpu


def test_normal_with_gpu_mean_and_std():
    mean = ember.zeros(4000, device="cuda")
    std = ember.full((4000,), 2.0, device="cuda")
    for out in (ember.normal(mean, std), ember.normal(mean, 2.0), ember.normal(0.0, std)):
        assert out.is_cuda and out.shape == (4000,)
        assert abs(float(to_numpy(out).std()) - 2.0) < 0.2
    with pytest.raises(RuntimeError, match="std >= 0"):
        ember.normal(mean, ember.full((4000,), -1.0, device="cuda"))


def test_gpu_tensor_as_a_list_of_ints():
    # tile and movedim hand their tensor arguments to the int-list reader as they are.
    x = ember.tensor(np.arange(24.0).reshape(2, 3, 4), device="cuda")
    tiled = ember.tile(x, ember.tensor([1, 2, 1], device="cuda"))
    np.testing.assert_array_equal(to_numpy(tiled), np.tile(to_numpy(x), (1, 2, 1)))
    moved = ember.movedim(x, ember.tensor([0, 1], device="cuda"), ember.tensor([1, 2], device="cuda"))
    np.testing.assert_array_equal(to_numpy(moved), np.moveaxis(to_numpy(x), [0, 1], [1, 2]))
