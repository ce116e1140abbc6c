"""ember.random: the global generator functions and fork_rng."""
import numpy as np
import pytest

import ember
import ember.random as er
from harness import needs_gpu

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None


def test_functions_are_the_global_generators():
    er.manual_seed(123)
    assert er.initial_seed() == 123
    a = ember.rand(4)
    ember.manual_seed(123)
    assert ember.equal(a, ember.rand(4))
    state = er.get_rng_state()
    assert state.dtype == ember.uint8
    b = ember.randn(5)
    er.set_rng_state(state)
    assert ember.equal(b, ember.randn(5))
    s = er.seed()
    assert isinstance(s, int) and er.initial_seed() == s


def test_fork_rng_restores_the_cpu_generator():
    er.manual_seed(7)
    expected_next = ember.rand(6)
    er.manual_seed(7)
    with er.fork_rng():
        inside = ember.rand(6)
        er.manual_seed(99)  # even reseeding inside is undone
        ember.rand(100)
    assert ember.equal(inside, expected_next)
    # The draw after the block continues from the state before it.
    assert ember.equal(ember.rand(6), expected_next)


def test_fork_rng_restores_on_exception_and_disabled_does_nothing():
    er.manual_seed(1)
    state = er.get_rng_state()
    with pytest.raises(KeyError):
        with er.fork_rng():
            ember.rand(10)
            raise KeyError("boom")
    assert ember.equal(er.get_rng_state(), state)
    with er.fork_rng(enabled=False):
        ember.rand(10)
    assert not ember.equal(er.get_rng_state(), state)


def test_fork_rng_cuda_generator_state_without_gpu_devices_listed():
    # The CUDA generator of device 0 exists even without a GPU: an explicit
    # device list forks it too.
    ember.cuda.manual_seed(11)
    before = ember.cuda.get_rng_state(0)
    with er.fork_rng(devices=[0]):
        ember.cuda.manual_seed(12)
        assert not ember.equal(ember.cuda.get_rng_state(0), before)
    assert ember.equal(ember.cuda.get_rng_state(0), before)
    with pytest.raises(ValueError, match="fork_rng: device_type must be 'cuda'"):
        with er.fork_rng(device_type="xpu"):
            pass


@needs_gpu
def test_fork_rng_restores_gpu_generators():
    ember.cuda.manual_seed(5)
    expected = ember.rand(8, device="cuda")
    ember.cuda.manual_seed(5)
    with er.fork_rng():
        ember.rand(1000, device="cuda")
    assert ember.equal(ember.rand(8, device="cuda"), expected)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_same_names_as_torch_random():
    for name in ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"):
        assert hasattr(torch.random, name) and hasattr(er, name)
