"""Pinned host memory and non_blocking copies: Tensor.pin_memory / is_pinned,
to(..., non_blocking=True), copy_(non_blocking=True), DataLoader(pin_memory=True).
The GPU half compares every asynchronous copy with the blocking one; without a
GPU, pinning must fail with a clear error and everything else must still work."""
import collections

import numpy as np
import pytest

import ember
from ember.utils.data import DataLoader, TensorDataset
from harness import CUDA_AVAILABLE, needs_gpu

gpu = needs_gpu
no_gpu = pytest.mark.skipif(CUDA_AVAILABLE, reason="checks the machine without a GPU")


def test_non_blocking_is_accepted_on_the_cpu():
    x = ember.arange(6.0).reshape(2, 3)
    assert ember.equal(x.to("cpu", non_blocking=True), x)
    assert x.to("cpu", ember.float64, True, True).dtype == ember.float64  # positional non_blocking, copy
    y = ember.zeros(2, 3)
    y.copy_(x, non_blocking=True)
    assert ember.equal(y, x)
    assert not x.is_pinned()


@no_gpu
def test_pin_memory_without_a_gpu_says_why():
    with pytest.raises(RuntimeError, match="pin_memory: .*(GPU|CUDA)"):
        ember.ones(3).pin_memory()


@no_gpu
def test_dataloader_pin_memory_without_a_gpu_warns_and_yields_plain_batches():
    data = TensorDataset(ember.arange(8.0).reshape(4, 2), ember.arange(4))
    with pytest.warns(UserWarning, match="pin_memory=True, but no usable CUDA GPU"):
        loader = DataLoader(data, batch_size=2, pin_memory=True)
    x, y = next(iter(loader))
    assert x.shape == (2, 2) and not x.is_pinned()


@gpu
def test_pin_memory_copies_and_reports_pinned():
    x = ember.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4)).t()  # not contiguous
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned() and p.device.type == "cpu"
    assert p.is_contiguous() and ember.equal(p, x)
    assert p.pin_memory() is p or p.pin_memory().data_ptr() == p.data_ptr()  # already pinned: no copy
    assert p[1:].is_pinned()  # a view of pinned memory is pinned


@gpu
@pytest.mark.parametrize("dtype", [ember.float32, ember.bfloat16, ember.int64])
def test_non_blocking_round_trip_matches_the_blocking_copy(dtype):
    x = ember.from_numpy(np.random.default_rng(0).standard_normal((257, 33)).astype(np.float32)).to(dtype)
    host = x.pin_memory()
    dev = host.to("cuda", non_blocking=True)
    assert ember.equal(dev.cpu(), x)
    back = ember.empty(x.shape, dtype=dtype).pin_memory()
    back.copy_(dev * 2, non_blocking=True)
    ember.cuda.synchronize()  # as in PyTorch: wait before reading a non_blocking copy to the host
    assert ember.equal(back, x * 2)


@gpu
def test_non_blocking_to_cpu_returns_pinned_memory():
    x = ember.from_numpy(np.arange(3000, dtype=np.float32).reshape(30, 100))
    d = x.cuda() * 3
    h = d.to("cpu", non_blocking=True)
    assert h.is_pinned() and h.device.type == "cpu"
    ember.cuda.synchronize()  # as in PyTorch: the copy may still run after to() returns
    assert ember.equal(h, x * 3)
    assert not d.to("cpu").is_pinned()  # a blocking copy: ordinary memory
    h64 = d.t().to("cpu", ember.float64, non_blocking=True)  # with a cast and a layout change
    ember.cuda.synchronize()
    assert h64.is_pinned() and ember.equal(h64, (x * 3).t().double())


@gpu
def test_non_blocking_copy_with_a_cast_and_a_layout_change():
    x = ember.from_numpy(np.random.default_rng(1).standard_normal((40, 30)).astype(np.float32)).pin_memory()
    dev = x.to("cuda", ember.float64, non_blocking=True)
    assert dev.dtype == ember.float64 and ember.equal(dev.cpu(), x.double())
    dst = ember.zeros(30, 40, device="cuda").t()  # a strided destination
    dst.copy_(x, non_blocking=True)
    assert ember.equal(dst.cpu(), x)
    out = ember.empty(30, 40, dtype=ember.float64).pin_memory()
    out.copy_(dev.t(), non_blocking=True)
    ember.cuda.synchronize()
    assert ember.equal(out, x.double().t())


@gpu
def test_a_pinned_block_is_not_reused_while_its_copy_waits_on_the_stream():
    # Queue enough GPU work that the copy below runs long after it was queued.
    busy = ember.randn(4096, 4096, device="cuda")
    for _ in range(30):
        busy = (busy @ busy).tanh()
    src = np.full((1024, 1024), 7.0, dtype=np.float32)
    pinned = ember.from_numpy(src).pin_memory()
    on_gpu = pinned.to("cuda", non_blocking=True)
    del pinned  # its block must wait for the copy ...
    other = ember.from_numpy(np.full((1024, 1024), -1.0, dtype=np.float32)).pin_memory()  # ... not be refilled
    assert np.all(on_gpu.cpu().numpy() == 7.0)
    assert np.all(other.numpy() == -1.0)


@gpu
def test_one_pinned_buffer_copied_every_step():
    rng = np.random.default_rng(2)
    buf = ember.empty(512, 256).pin_memory()
    for _ in range(50):
        batch = rng.standard_normal((512, 256)).astype(np.float32)
        ember.cuda.current_stream().synchronize()  # the previous copy has read buf
        buf.copy_(ember.from_numpy(batch))
        d = buf.to("cuda", non_blocking=True)
        np.testing.assert_array_equal(d.cpu().numpy(), batch)


@gpu
def test_dataloader_pins_nested_batches():
    Pair = collections.namedtuple("Pair", "x y")

    class Data(ember.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return {"pair": Pair(ember.full((2,), float(i)), ember.tensor(i)), "id": i}

    batch = next(iter(DataLoader(Data(), batch_size=2, pin_memory=True)))
    assert batch["pair"].x.is_pinned() and batch["pair"].y.is_pinned()
    assert isinstance(batch["pair"], Pair)
    assert batch["pair"].x.to("cuda", non_blocking=True).cpu().tolist() == [[0.0, 0.0], [1.0, 1.0]]


@gpu
def test_pin_memory_is_differentiable():
    x = ember.randn(5, requires_grad=True)
    (x.pin_memory() * 3).sum().backward()
    assert x.grad.tolist() == [3.0] * 5


@gpu
def test_pinning_a_gpu_tensor_is_refused():
    with pytest.raises(RuntimeError, match="pin_memory: cannot pin a cuda:0 tensor"):
        ember.ones(2, device="cuda").pin_memory()
