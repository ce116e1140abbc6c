"""ember.use_deterministic_algorithms on CUDA: index accumulation (index_add, index_put_ with accumulate,
scatter_add), embedding and max-pool gradients give the same bits run after run and the CPU's bits
(float32: both add each target's values in element order); an overlapping avg-pool gradient raises or
warns; convolutions and attention still run (deterministic cuDNN algorithms, attention's math path).

Every test needs a CUDA GPU and skips, saying why, without one.
"""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare runs and backends, not ember with numpy

RNG = np.random.default_rng(43)


@pytest.fixture(autouse=True)
def deterministic():
    ember.use_deterministic_algorithms(True)
    yield
    ember.use_deterministic_algorithms(False)


def on_devices(fn):
    """fn("cpu"), fn("cuda") and fn("cuda") again, as numpy arrays."""
    return [np.asarray(fn(device)) for device in ("cpu", "cuda", "cuda")]


def assert_same_bits(results):
    cpu, first, second = results
    np.testing.assert_array_equal(first, second)  # run to run
    np.testing.assert_array_equal(first, cpu)  # and the CPU's element order


def test_index_add_index_put_and_scatter_add():
    index = RNG.integers(0, 7, 20000)
    src = RNG.standard_normal((20000, 5)).astype(np.float32)

    def index_add(device):
        return ember.zeros(7, 5, device=device).index_add(0, ember.tensor(index, device=device),
                                                          ember.tensor(src, device=device)).cpu().numpy()

    def index_put(device):
        out = ember.zeros(7, 5, device=device)
        out.index_put_((ember.tensor(index, device=device),), ember.tensor(src, device=device), accumulate=True)
        return out.cpu().numpy()

    def scatter_add(device):
        idx = ember.tensor(np.broadcast_to(index[:, None], (20000, 5)).copy(), device=device)
        return ember.zeros(7, 5, device=device).scatter_add(0, idx, ember.tensor(src, device=device)).cpu().numpy()

    for fn in (index_add, index_put, scatter_add):
        assert_same_bits(on_devices(fn))


def test_embedding_and_max_pool_gradients():
    tokens = RNG.integers(0, 50, (64, 128))
    weight = RNG.standard_normal((50, 16)).astype(np.float32)
    images = RNG.standard_normal((4, 3, 17, 17)).astype(np.float32)

    def embedding_grad(device):
        w = ember.tensor(weight, device=device, requires_grad=True)
        out = F.embedding(ember.tensor(tokens, device=device), w)
        (out * ember.linspace(-1, 1, 16, device=device)).sum().backward()
        return w.grad.cpu().numpy()

    def max_pool_grad(device):
        x = ember.tensor(images, device=device, requires_grad=True)
        y = F.max_pool2d(x, 3, 2)  # overlapping windows: an input can win several
        (y * ember.linspace(-1, 1, y.numel(), device=device).reshape(y.shape)).sum().backward()
        return x.grad.cpu().numpy()

    assert_same_bits(on_devices(embedding_grad))
    assert_same_bits(on_devices(max_pool_grad))


def test_overlapping_avg_pool_gradient_raises_or_warns_and_disjoint_windows_run():
    x = ember.randn(2, 3, 8, 8, device="cuda", requires_grad=True)
    F.avg_pool2d(x, 2).sum().backward()  # one add per input element
    F.adaptive_avg_pool2d(x, 1).sum().backward()
    with pytest.raises(RuntimeError, match="avg_pool2d_backward_cuda does not have a deterministic"):
        F.avg_pool2d(x, 3, 1).sum().backward()
    with pytest.raises(RuntimeError, match="adaptive_avg_pool2d_backward_cuda"):
        F.adaptive_avg_pool2d(x, 3).sum().backward()
    ember.use_deterministic_algorithms(True, warn_only=True)
    with pytest.warns(UserWarning, match="avg_pool2d_backward_cuda"):
        F.avg_pool2d(x, 3, 1).sum().backward()


def test_convolution_and_attention_run_and_repeat():
    images = RNG.standard_normal((4, 3, 16, 16)).astype(np.float32)
    w = RNG.standard_normal((8, 3, 3, 3)).astype(np.float32)
    q = RNG.standard_normal((2, 4, 64, 32)).astype(np.float32)

    def conv_grads(device):
        x = ember.tensor(images, device=device, requires_grad=True)
        weight = ember.tensor(w, device=device, requires_grad=True)
        F.conv2d(x, weight, padding=1).square().sum().backward()
        return np.concatenate([x.grad.cpu().numpy().ravel(), weight.grad.cpu().numpy().ravel()])

    def attention_grad(device):
        t = ember.tensor(q, device=device).to(ember.bfloat16).requires_grad_()
        F.scaled_dot_product_attention(t, t, t, is_causal=True).float().square().sum().backward()
        return t.grad.float().cpu().numpy()

    _, first, second = on_devices(conv_grads)
    np.testing.assert_array_equal(first, second)
    _, first, second = on_devices(attention_grad)
    np.testing.assert_array_equal(first, second)
