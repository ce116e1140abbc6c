"""The default device on a GPU: factories without device= create their tensors
on CUDA under set_default_device("cuda") and inside `with ember.device("cuda")`,
with the same values as on the CPU where they are deterministic, and nn
modules get their parameters there. Skips without a GPU."""
import pytest

import ember
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: a setting of the factories, not an op


@pytest.fixture(autouse=True)
def reset_default_device():
    ember.set_default_device(None)
    yield
    ember.set_default_device(None)


DETERMINISTIC = {
    "zeros": lambda: ember.zeros(2, 3),
    "ones": lambda: ember.ones(4),
    "full": lambda: ember.full((2, 2), 3.5),
    "arange": lambda: ember.arange(1, 7, 2),
    "linspace": lambda: ember.linspace(-1, 1, 9),
    "eye": lambda: ember.eye(3, 4),
    "tensor": lambda: ember.tensor([[1.0, 2.0], [3.0, 4.0]]),
    "as_tensor": lambda: ember.as_tensor([1, 2, 3]),
    "tril_indices": lambda: ember.tril_indices(3, 3),
}


@pytest.mark.parametrize("name", sorted(DETERMINISTIC))
def test_factory_under_default_cuda_matches_cpu(name):
    make = DETERMINISTIC[name]
    on_cpu = make()
    ember.set_default_device("cuda")
    on_gpu = make()
    assert on_gpu.device.type == "cuda"
    ember.testing.assert_close(on_gpu.cpu(), on_cpu)


def test_random_factories_land_on_cuda():
    with ember.device("cuda"):
        for t in (ember.rand(3), ember.randn(3), ember.randint(0, 4, (3,)), ember.randperm(5),
                  ember.empty(2), ember.normal(0.0, 1.0, size=(2,))):
            assert t.device.type == "cuda"
    assert ember.rand(3).device.type == "cpu"


def test_nn_module_parameters_on_default_cuda_and_forward_runs():
    ember.set_default_device("cuda")
    layer = ember.nn.Linear(4, 3)
    assert layer.weight.device.type == "cuda" and layer.bias.device.type == "cuda"
    x = ember.randn(2, 4)
    out = layer(x)
    assert out.device.type == "cuda"
    ember.testing.assert_close(out.cpu(), x.cpu() @ layer.weight.detach().cpu().t() + layer.bias.detach().cpu())


def test_as_tensor_moves_a_cpu_tensor_to_the_default_device():
    x = ember.ones(2)
    with ember.device("cuda"):
        assert ember.as_tensor(x).device.type == "cuda"
    assert ember.as_tensor(x).device.type == "cpu"


def test_like_factories_keep_cpu_inputs_on_cpu_under_default_cuda():
    x = ember.ones(2)
    with ember.device("cuda"):
        assert ember.zeros_like(x).device.type == "cpu"
        y = ember.ones(2)
        assert ember.zeros_like(y).device.type == "cuda"
