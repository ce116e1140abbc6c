"""ember.set_default_device / get_default_device and `with ember.device(...)`:
the device factory functions use when called without device=. On this CPU
machine the observable cases are the CPU round trip, the block nesting and
restoring, and the error that names CUDA when a factory must create a tensor
there without a GPU; test_cuda_default_device.py checks the GPU side."""
import threading

import numpy as np
import pytest

import ember
from harness import CUDA_AVAILABLE, torch

CASES = []  # no OpCase rows: a setting of the factories, not an op


@pytest.fixture(autouse=True)
def reset_default_device():
    ember.set_default_device(None)
    yield
    ember.set_default_device(None)


def factories():
    """One call of each factory that follows the default device, without device=."""
    return {
        "empty": lambda: ember.empty(2, 3),
        "zeros": lambda: ember.zeros(2, 3),
        "ones": lambda: ember.ones((2, 3)),
        "full": lambda: ember.full((2,), 7.0),
        "rand": lambda: ember.rand(2),
        "randn": lambda: ember.randn(2, 2),
        "randint": lambda: ember.randint(0, 5, (3,)),
        "randperm": lambda: ember.randperm(4),
        "normal": lambda: ember.normal(0.0, 1.0, size=(2,)),
        "arange": lambda: ember.arange(5),
        "linspace": lambda: ember.linspace(0, 1, 5),
        "logspace": lambda: ember.logspace(0, 1, 5),
        "eye": lambda: ember.eye(3),
        "tril_indices": lambda: ember.tril_indices(3, 3),
        "tensor": lambda: ember.tensor([1.0, 2.0]),
        "as_tensor": lambda: ember.as_tensor([1, 2]),
        "scalar_tensor": lambda: ember.scalar_tensor(3.0),
        "hann_window": lambda: ember.hann_window(4),
    }


def test_default_is_cpu():
    assert ember.get_default_device() == ember.device("cpu")
    for name, make in factories().items():
        assert make().device == ember.device("cpu"), name


def test_set_default_device_cpu_round_trip():
    ember.set_default_device("cpu")
    assert ember.get_default_device() == ember.device("cpu")
    assert ember.zeros(2).device.type == "cpu"
    ember.set_default_device(ember.device("cpu"))
    assert ember.get_default_device().type == "cpu"
    ember.set_default_device(None)
    assert ember.get_default_device() == ember.device("cpu")


def test_set_default_device_rejects_junk():
    with pytest.raises(TypeError, match="expected a device"):
        ember.set_default_device(3.5)
    with pytest.raises(ValueError, match="tpu"):  # as ember.device("tpu")
        ember.set_default_device("tpu")
    assert ember.get_default_device() == ember.device("cpu")


def test_set_default_device_cuda_is_remembered_without_checking():
    # As torch: setting does not touch the GPU; the first factory call does.
    ember.set_default_device("cuda")
    assert ember.get_default_device() == ember.device("cuda:0")
    ember.set_default_device("cuda:1")
    assert ember.get_default_device() == ember.device("cuda:1")


@pytest.mark.skipif(CUDA_AVAILABLE, reason="checks the error without a GPU")
@pytest.mark.parametrize("name", sorted(factories()))
def test_factory_on_unavailable_cuda_default_names_cuda(name):
    ember.set_default_device("cuda")
    with pytest.raises(RuntimeError, match="cuda"):
        factories()[name]()


@pytest.mark.skipif(CUDA_AVAILABLE, reason="checks the error without a GPU")
def test_nn_module_parameters_follow_the_default_device():
    ember.set_default_device("cuda")
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        ember.nn.Linear(2, 3)
    ember.set_default_device(None)
    assert ember.nn.Linear(2, 3).weight.device.type == "cpu"


def test_explicit_device_wins_over_the_default():
    ember.set_default_device("cuda")
    assert ember.zeros(2, device="cpu").device.type == "cpu"
    assert ember.tensor([1, 2], device="cpu").device.type == "cpu"
    assert ember.arange(3, device=ember.device("cpu")).device.type == "cpu"
    assert ember.nn.Linear(2, 3, device="cpu").weight.device.type == "cpu"


def test_like_factories_keep_their_input_device():
    x = ember.ones(2, 3)
    ember.set_default_device("cuda")
    for fn in (ember.zeros_like, ember.ones_like, ember.empty_like, ember.rand_like, ember.randn_like):
        assert fn(x).device.type == "cpu", fn.__name__
    assert ember.full_like(x, 2.0).device.type == "cpu"
    assert ember.randint_like(x, 5).device.type == "cpu"


def test_ops_on_existing_tensors_and_from_numpy_ignore_the_default():
    x = ember.ones(3)
    ember.set_default_device("cuda")
    assert (x + 1).device.type == "cpu"
    assert x.sum().device.type == "cpu"
    assert ember.from_numpy(np.ones(2)).device.type == "cpu"


def test_device_block_sets_and_restores():
    assert ember.get_default_device().type == "cpu"
    with ember.device("cuda") as d:
        assert d == ember.device("cuda:0")
        assert ember.get_default_device() == ember.device("cuda:0")
        assert ember.zeros(1, device="cpu").device.type == "cpu"
    assert ember.get_default_device() == ember.device("cpu")


def test_device_blocks_nest():
    ember.set_default_device("cuda:1")
    with ember.device("cpu"):
        assert ember.get_default_device().type == "cpu"
        assert ember.zeros(1).device.type == "cpu"
        with ember.device("cuda:0"):
            assert ember.get_default_device() == ember.device("cuda:0")
            with ember.device("cpu"):
                assert ember.rand(1).device.type == "cpu"
            assert ember.get_default_device() == ember.device("cuda:0")
        assert ember.get_default_device().type == "cpu"
    assert ember.get_default_device() == ember.device("cuda:1")


def test_same_device_object_entered_twice():
    cpu, gpu = ember.device("cpu"), ember.device("cuda")
    with gpu:
        with cpu:
            with gpu:
                assert ember.get_default_device().type == "cuda"
            assert ember.get_default_device().type == "cpu"
        assert ember.get_default_device().type == "cuda"
    assert ember.get_default_device().type == "cpu"


def test_device_block_restores_on_exception():
    with pytest.raises(ValueError, match="inside"):
        with ember.device("cuda"):
            raise ValueError("inside")
    assert ember.get_default_device() == ember.device("cpu")
    assert ember.zeros(1).device.type == "cpu"
    if not CUDA_AVAILABLE:
        with pytest.raises(RuntimeError, match="cuda"):
            with ember.device("cuda"):
                ember.zeros(1)
        assert ember.zeros(1).device.type == "cpu"


def test_default_device_is_per_thread():
    ember.set_default_device("cuda")
    seen = []
    worker = threading.Thread(target=lambda: seen.append((ember.get_default_device(), ember.zeros(1).device)))
    worker.start()
    worker.join(5)
    assert seen == [(ember.device("cpu"), ember.device("cpu"))]
    assert ember.get_default_device().type == "cuda"


def test_set_default_device_inside_a_block_is_undone_by_its_exit():
    # As torch: leaving the block goes back to what was in effect when it began.
    with ember.device("cpu"):
        ember.set_default_device("cuda")
        assert ember.get_default_device().type == "cuda"
    assert ember.get_default_device().type == "cpu"


@pytest.mark.skipif(torch is None, reason="torch not importable")
def test_matches_torch_on_the_cpu():
    try:
        torch.set_default_device("cpu")
        ember.set_default_device("cpu")
        assert str(torch.get_default_device()) == str(ember.get_default_device())
        with torch.device("cpu"), ember.device("cpu"):
            assert str(torch.zeros(2).device) == str(ember.zeros(2).device)
        torch.set_default_device(None)
        ember.set_default_device(None)
        assert str(torch.get_default_device()) == str(ember.get_default_device())
    finally:
        torch.set_default_device(None)
