"""ember.cuda: the device API, the caching allocator, streams and events, and
copies between the CPU and the GPU.

Tests marked `gpu` need a CUDA GPU and skip, saying why, without one; the
others check what a machine without a usable GPU does (clear errors, zero
counters) and run everywhere.
"""
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember
from harness import CUDA_AVAILABLE, needs_gpu

REASON = ember._C._cuda.unavailable_reason()  # checked by the tests without a GPU
BUILT_WITH_CUDA = ember._C._build_info()["cuda"] == "ON"
MiB = 2**20

gpu = needs_gpu
no_gpu = pytest.mark.skipif(CUDA_AVAILABLE, reason="checks the behaviour without a usable GPU")


# ---- without a usable GPU (runs on every machine without one)

@no_gpu
def test_is_available_is_false_and_says_why():
    ember.cuda._warned_unavailable = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert ember.cuda.is_available() is False
    assert ember.cuda.device_count() == 0
    assert REASON
    if BUILT_WITH_CUDA:
        assert len(caught) == 1 and issubclass(caught[0].category, UserWarning)
        assert REASON in str(caught[0].message)
        assert any(p in REASON for p in ("no NVIDIA driver", "driver supports CUDA up to",
                                         "found no CUDA GPU", "CUDA failed to initialise"))
    else:
        assert not caught
        assert REASON == "ember was built without CUDA support"


@no_gpu
@pytest.mark.parametrize("call", [
    lambda: ember.cuda.current_device(),
    lambda: ember.cuda.get_device_name(),
    lambda: ember.cuda.get_device_capability(0),
    lambda: ember.cuda.get_device_properties("cuda:0"),
    lambda: ember.cuda.synchronize(),
    lambda: ember.cuda.memory_summary(),
    lambda: ember.cuda.mem_get_info(),
    lambda: ember.cuda.current_stream(),
    lambda: ember.cuda.Stream(),
    lambda: ember.cuda.set_device(0),
], ids=["current_device", "get_device_name", "get_device_capability", "get_device_properties",
        "synchronize", "memory_summary", "mem_get_info", "current_stream", "Stream", "set_device"])
def test_queries_that_need_a_gpu_raise_clearly(call):
    with pytest.raises(RuntimeError, match="^ember.cuda: no CUDA GPU is available: " + re.escape(REASON)):
        call()


@no_gpu
@pytest.mark.parametrize("call", [
    lambda: ember.ones(2).cuda(),
    lambda: ember.ones(2).to("cuda"),
    lambda: ember.ones(2).to("cuda:1", ember.float64),
    lambda: ember.empty(3, device="cuda"),
    lambda: ember.nn.Linear(2, 2).cuda(),
], ids=["cuda()", "to(cuda)", "to(cuda:1, float64)", "empty(device=cuda)", "Module.cuda()"])
def test_moving_tensors_to_cuda_without_a_gpu_says_why(call):
    expected = "no CUDA GPU is available" if BUILT_WITH_CUDA else "built without CUDA support"
    with pytest.raises(RuntimeError, match=expected):
        call()


@no_gpu
def test_counters_are_zero_and_housekeeping_is_harmless_without_a_gpu():
    assert ember.cuda.memory_allocated() == 0
    assert ember.cuda.max_memory_allocated() == 0
    assert ember.cuda.memory_reserved() == 0
    assert ember.cuda.max_memory_reserved() == 0
    assert ember.cuda.memory_stats() == {}
    ember.cuda.reset_peak_memory_stats()
    ember.cuda.empty_cache()
    ember.cuda.manual_seed(3)
    ember.cuda.manual_seed_all(-1)
    ember.cuda.set_device(-1)  # a negative index is a no-op, as in torch
    with ember.cuda.stream(None):
        pass
    with pytest.raises(RuntimeError, match="no CUDA GPU is available"):
        with ember.cuda.device(0):
            pass


def test_out_of_memory_error_is_a_runtime_error():
    assert issubclass(ember.OutOfMemoryError, RuntimeError)
    assert ember.cuda.OutOfMemoryError is ember.OutOfMemoryError


def test_record_stream_needs_a_cuda_tensor():
    with pytest.raises(RuntimeError, match="^record_stream: expected a CUDA tensor, got one on cpu"):
        ember.ones(2).record_stream(None)


def test_device_arguments_are_parsed_like_torch():
    assert ember.cuda.device("cuda:1").idx == 1
    assert ember.cuda.device(ember.device("cuda", 2)).idx == 2
    assert ember.cuda.device(3).idx == 3
    assert ember.cuda.device(None).idx == -1
    assert ember.cuda.device("cuda").idx in (-1, 0)  # ember.device("cuda") is cuda:0
    with pytest.raises(ValueError, match="Expected a cuda device"):
        ember.cuda.device("cpu")
    with pytest.raises(TypeError, match="expected a CUDA device"):
        ember.cuda.device(1.5)


def test_build_info_records_the_build():
    info = ember._C._build_info()
    for key in ("version", "build_type", "compiler", "cuda", "cuda_toolkit", "cuda_archs", "cudnn", "nccl",
                "gloo", "blas"):
        assert key in info
    assert info["version"] == ember.__version__
    assert info["cuda"] in ("ON", "OFF")
    archs = ember.cuda.get_arch_list()
    if info["cuda"] == "ON":
        assert archs and all(a.startswith(("sm_", "compute_")) for a in archs)
        assert archs[-1].startswith("compute_")  # PTX for the last architecture
        assert info["cuda_toolkit"]
    else:
        assert archs == []


def test_launch_blocking_follows_the_environment():
    code = "import ember; print(ember._C._cuda.launch_blocking())"
    for value, expected in (("1", "True"), ("0", "False")):
        env = dict(os.environ, EMBER_LAUNCH_BLOCKING=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == expected


# ---- on a GPU

@gpu
def test_device_queries():
    n = ember.cuda.device_count()
    assert n >= 1
    assert 0 <= ember.cuda.current_device() < n
    p = ember.cuda.get_device_properties(0)
    assert p.name and p.total_memory > 2**30 and p.multi_processor_count > 0
    assert ember.cuda.get_device_capability(0) == (p.major, p.minor)
    assert ember.cuda.get_device_name("cuda:0") == p.name
    assert "_CudaDeviceProperties(name=" in repr(p)
    assert ember._C._cuda.arch_problem(0) == ""  # this build has code for the GPU it runs on
    free, total = ember.cuda.mem_get_info()
    assert 0 < free <= total
    ember.cuda.synchronize()


@gpu
def test_set_device_and_device_context():
    n = ember.cuda.device_count()
    before = ember.cuda.current_device()
    with ember.cuda.device(n - 1):
        assert ember.cuda.current_device() == n - 1
    assert ember.cuda.current_device() == before
    with pytest.raises(RuntimeError, match=f"invalid device cuda:{n}"):
        ember.cuda.set_device(n)
    with pytest.raises(RuntimeError, match=f"invalid device cuda:{n}"):
        ember.ones(1).to(f"cuda:{n}")


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
def test_copies_round_trip(dtype):
    a = (np.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
    x = ember.from_numpy(a)
    y = x.cuda()
    assert y.is_cuda and y.device == ember.device("cuda:0") and y.dtype == x.dtype
    np.testing.assert_array_equal(y.cpu().numpy(), a)
    # non-contiguous sources and destinations on both sides
    np.testing.assert_array_equal(x.transpose(0, 2).cuda().cpu().numpy(), a.transpose(2, 1, 0))
    np.testing.assert_array_equal(y.transpose(0, 2).cpu().numpy(), a.transpose(2, 1, 0))
    np.testing.assert_array_equal(y[:, 1].cpu().numpy(), a[:, 1])
    # CUDA to CUDA: clone, and a cast on the device
    np.testing.assert_array_equal(y.clone().cpu().numpy(), a)
    np.testing.assert_array_equal(y.to(ember.float64).cpu().numpy(), a.astype(np.float64))


@gpu
def test_copy_into_a_strided_cuda_tensor_keeps_the_rest():
    base = ember.from_numpy(np.full((3, 4), -1.0, dtype=np.float32)).cuda()
    view = base.transpose(0, 1)[1:3]  # columns 1..2, as a [2, 3] view
    view.copy_(ember.from_numpy(np.arange(6, dtype=np.float64).reshape(2, 3)))
    expected = np.full((3, 4), -1.0, dtype=np.float32)
    expected[:, 1:3] = np.arange(6).reshape(2, 3).T
    np.testing.assert_array_equal(base.cpu().numpy(), expected)


@gpu
def test_cpu_scalar_tensors_go_with_cuda_tensors_in_either_order():
    x = ember.tensor([1.0, 2.0, 3.0], device="cuda")
    two = ember.tensor(2.0)  # 0-d, on the CPU
    for result in (two * x, x * two, ember.where(x > 1, two, x), ember.maximum(two, x)):
        assert result.device == ember.device("cuda", 0)
    np.testing.assert_array_equal((two * x).cpu().numpy(), [2.0, 4.0, 6.0])
    both = two + ember.tensor(3.0, device="cuda")  # the CUDA operand decides, whatever the order
    assert both.device.type == "cuda" and both.item() == 5.0


@gpu
def test_cpu_tensors_do_not_mix_with_cuda_tensors():
    with pytest.raises(RuntimeError, match=r"add: expected all tensors to be on the same device.*cuda"):
        ember.ones(3) + ember.tensor(1.0, device="cuda")  # only CPU 0-d tensors are exempt, as in PyTorch
    with pytest.raises(RuntimeError, match="same device"):
        ember.ones(3, device="cuda") * ember.ones(3)


@gpu
def test_half_precision_round_trip():
    a = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    for dt in (ember.float16, ember.bfloat16):
        y = ember.from_numpy(a).to("cuda", dt)
        assert y.dtype == dt and y.is_cuda
        np.testing.assert_allclose(y.cpu().float().numpy(), a, rtol=1e-2, atol=1e-2)


@gpu
def test_allocator_counts_bytes_and_peaks():
    ember.cuda.synchronize()
    base = ember.cuda.memory_allocated()
    x = ember.empty(MiB, device="cuda")  # 4 MiB
    # A cached free block at most 1 MiB larger than the request is handed out
    # whole, not split (as PyTorch's allocator does): it counts in full.
    grown = ember.cuda.memory_allocated() - base
    assert 4 * MiB <= grown <= 5 * MiB
    assert ember.cuda.memory_reserved() >= ember.cuda.memory_allocated()
    assert ember.cuda.max_memory_allocated() >= base + grown
    del x
    assert ember.cuda.memory_allocated() == base
    ember.cuda.reset_peak_memory_stats()
    assert ember.cuda.max_memory_allocated() == base
    assert "allocated" in ember.cuda.memory_summary()


@gpu
def test_allocator_reuses_memory_across_steps():
    sizes = [100, 4096, 300_000, 3 * MiB, 15 * MiB, 777]

    def step():
        live = [ember.empty(n // 4 + 1, device="cuda") for n in sizes]
        tmp = ember.empty(50_000, device="cuda")
        del live[2], tmp
        del live

    step()
    before = ember.cuda.memory_stats()["num_device_alloc"]
    for _ in range(5):
        step()
    assert ember.cuda.memory_stats()["num_device_alloc"] == before


@gpu
def test_empty_cache_returns_free_segments():
    ember.cuda.empty_cache()
    r0 = ember.cuda.memory_reserved()
    x = ember.empty(16 * MiB, device="cuda")  # 64 MiB: a segment of its own
    assert ember.cuda.memory_reserved() == r0 + 64 * MiB
    del x
    assert ember.cuda.memory_reserved() == r0 + 64 * MiB  # cached
    ember.cuda.empty_cache()
    assert ember.cuda.memory_reserved() == r0


@gpu
def test_out_of_memory_raises_a_helpful_error_and_recovers():
    total = ember.cuda.get_device_properties(0).total_memory
    with pytest.raises(ember.OutOfMemoryError) as info:
        ember.empty(total, device="cuda")  # 4x the GPU's memory
    msg = str(info.value)
    assert "CUDA out of memory on cuda:0: tried to allocate" in msg
    assert "in total" in msg and "is free" in msg and "allocated by tensors" in msg
    assert "smaller batch size" in msg
    assert isinstance(info.value, RuntimeError)
    assert ember.cuda.memory_stats()["num_ooms"] >= 1
    y = ember.ones(4).cuda()  # the allocator still works
    assert y.cpu().sum().item() == 4


@gpu
def test_streams_and_the_stream_context():
    default = ember.cuda.current_stream()
    s = ember.cuda.Stream()
    assert s != default and s.device == ember.device("cuda:0")
    with ember.cuda.stream(s):
        assert ember.cuda.current_stream() == s
        y = ember.from_numpy(np.arange(8, dtype=np.float32)).cuda()
    assert ember.cuda.current_stream() == default
    s.synchronize()
    assert s.query()
    np.testing.assert_array_equal(y.cpu().numpy(), np.arange(8))
    high = ember.cuda.Stream(priority=-1)
    high.wait_stream(s)
    high.synchronize()
    assert "ember.cuda.Stream device=cuda:0" in repr(s)


@gpu
def test_events_time_work():
    start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
    start.record()
    ember.from_numpy(np.zeros(MiB, dtype=np.float32)).cuda()
    end.record()
    end.synchronize()
    assert end.query()
    assert start.elapsed_time(end) >= 0
    untimed = ember.cuda.Event()
    untimed.record()
    with pytest.raises(ValueError, match="enable_timing=True"):
        start.elapsed_time(untimed)
    with pytest.raises(ValueError, match="recorded"):
        ember.cuda.Event(enable_timing=True).elapsed_time(end)


@gpu
def test_record_stream_keeps_a_block_from_reuse_until_the_stream_is_done():
    n = 3 * MiB  # 12 MiB of float32: a segment of its own, so reuse is easy to see
    ember.cuda.synchronize()
    ember.cuda.empty_cache()  # no other cached block of that size
    x = ember.full((n,), 1.0, device="cuda")  # allocated on the default stream
    ptr = x.data_ptr()
    side = ember.cuda.Stream()
    side.wait_stream(ember.cuda.current_stream())
    with ember.cuda.stream(side):  # a long queue of kernels reading x
        acc = x.clone()
        for _ in range(200):
            acc = acc + x
    x.record_stream(side)
    del x
    # Work on the default stream may not get x's memory while `side` may still read it.
    z = ember.full((n,), 5.0, device="cuda")
    assert z.data_ptr() != ptr or ember.cuda.memory_stats()["pending_frees"] == 0
    side.synchronize()
    assert np.all(acc.cpu().numpy() == 201.0)  # x was not overwritten while in use
    # Once the side stream's work is done, the block is reused by its own stream
    # (z took it already when the side stream had finished before z was made).
    w = ember.empty((n,), device="cuda")
    if z.data_ptr() != ptr:
        assert w.data_ptr() == ptr
    assert ember.cuda.memory_stats()["pending_frees"] == 0
    del w, z, acc
    with pytest.raises(TypeError, match="record_stream: expected an ember.cuda.Stream"):
        ember.ones(2, device="cuda").record_stream(3)


@gpu
def test_empty_cache_waits_for_recorded_streams():
    n = 3 * MiB
    ember.cuda.synchronize()
    ember.cuda.empty_cache()
    reserved = ember.cuda.memory_reserved()
    x = ember.full((n,), 1.0, device="cuda")
    side = ember.cuda.Stream()
    side.wait_stream(ember.cuda.current_stream())
    with ember.cuda.stream(side):
        y = x * 2
    x.record_stream(side)
    del x
    ember.cuda.empty_cache()  # waits for side, then returns x's segment
    assert ember.cuda.memory_stats()["pending_frees"] == 0
    assert ember.cuda.memory_reserved() <= reserved + 16 * MiB  # y's segment may stay
    assert np.all(y.cpu().numpy() == 2.0)


@gpu
def test_manual_seed_seeds_the_gpu_generator():
    ember.cuda.manual_seed(1234)
    ember.cuda.manual_seed_all(1234)


@gpu
def test_cublas_workspace_comes_from_the_caching_allocator():
    a = ember.randn(64, 64, device="cuda")
    side = ember.cuda.Stream()  # from a pool: an earlier test may have run cuBLAS on it
    side.wait_stream(ember.cuda.current_stream())
    with ember.cuda.stream(side):
        before = ember.cuda.memory_allocated()
        c = a @ a
        first = ember.cuda.memory_allocated()
        allocs = ember.cuda.memory_stats()["num_device_alloc"]
        d = a @ a
        second = ember.cuda.memory_allocated()
    side.synchronize()
    out_bytes = 64 * 64 * 4
    workspace = (32 if ember.cuda.get_device_capability()[0] >= 9 else 4) * MiB
    # The stream's workspace is a block of ember's, taken at its first cuBLAS call ...
    assert first - before in (out_bytes, out_bytes + workspace)
    assert ember.cuda.memory_allocated() >= workspace
    # ... and reused: later calls take only their output.
    assert second - first == out_bytes
    assert ember.cuda.memory_stats()["num_device_alloc"] == allocs
    assert ember.allclose(c, d)
