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
    a = ember.tensor(np.arange(24.0).reshape(2, 3, 4), device="cuda")
    b = ember.tensor(np.arange(12.0).reshape(4, 3), device="cuda")
    dims = ember.tensor([[2, 1], [0, 1]], device="cuda")
    got = ember.tensordot(a, b, dims=dims)
    np.testing.assert_allclose(to_numpy(got), np.tensordot(to_numpy(a), to_numpy(b), axes=([2, 1], [0, 1])))
