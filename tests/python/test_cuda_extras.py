"""ember.cuda extras (capability checks, init, deprecated memory names,
nested/accumulated stats, the per-process memory fraction, NVTX) and
ember.amp.custom_fwd/custom_bwd. GPU-only checks skip without a GPU."""
import warnings

import numpy as np
import pytest

import ember
from ember import cuda
from harness import CUDA_AVAILABLE, needs_gpu

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

BUILT_WITH_CUDA = ember._C._build_info()["cuda"] == "ON"


@pytest.fixture
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.skipif(CUDA_AVAILABLE, reason="checks the answers without a GPU")
def test_without_a_gpu(quiet):
    assert cuda.is_bf16_supported() is False and cuda.is_tf32_supported() is False
    assert cuda.is_initialized() is False
    assert cuda.ipc_collect() is None
    assert cuda.memory_stats_as_nested_dict() == {}
    with pytest.raises(RuntimeError, match="no CUDA GPU is available"):
        cuda.init()
    with pytest.raises(RuntimeError, match="no CUDA GPU is available"):
        cuda.set_per_process_memory_fraction(0.5)
    with pytest.raises(RuntimeError, match="no CUDA GPU is available"):
        cuda.get_per_process_memory_fraction()
    cuda.reset_accumulated_memory_stats()  # nothing to reset: no error


def test_fraction_argument_checks():
    with pytest.raises(TypeError, match="set_per_process_memory_fraction: invalid type"):
        cuda.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match="set_per_process_memory_fraction: invalid fraction value: 1.5"):
        cuda.set_per_process_memory_fraction(1.5)
    with pytest.raises(ValueError, match="Allowed range: 0~1"):
        cuda.set_per_process_memory_fraction(-0.5)


def test_deprecated_memory_names_warn_and_alias():
    with pytest.warns(FutureWarning, match="memory_cached has been renamed to ember.cuda.memory_reserved"):
        assert cuda.memory_cached() == cuda.memory_reserved()
    with pytest.warns(FutureWarning, match="max_memory_reserved"):
        assert cuda.max_memory_cached() == cuda.max_memory_reserved()
    with pytest.warns(FutureWarning, match="reset_peak_memory_stats"):
        cuda.reset_max_memory_cached()


def test_nested_stats_and_accumulated_reset(monkeypatch):
    # The nesting and the baseline are Python logic: checked on a stand-in
    # for the allocator's dict.
    counters = {"allocated_bytes": 512, "allocated_bytes.all.current": 512, "allocated_bytes.all.peak": 1024,
                "reserved_bytes.all.current": 2048, "num_ooms": 3, "num_device_alloc": 7, "num_alloc_retries": 2}
    monkeypatch.setattr(cuda, "_raw_memory_stats", lambda device=None: dict(counters))
    monkeypatch.setattr(cuda, "_accumulated_baseline", {})
    nested = cuda.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"] == {"all": {"current": 512, "peak": 1024}}
    assert nested["reserved_bytes"]["all"]["current"] == 2048
    assert nested["num_ooms"] == 3
    cuda.reset_accumulated_memory_stats()
    stats = cuda.memory_stats()
    assert stats["num_ooms"] == 0 and stats["num_device_alloc"] == 0 and stats["num_alloc_retries"] == 0
    assert stats["allocated_bytes.all.current"] == 512  # current values are not accumulated counters
    counters["num_ooms"] = 5
    assert cuda.memory_stats()["num_ooms"] == 2


@pytest.mark.skipif(not BUILT_WITH_CUDA, reason="NVTX comes with the CUDA toolkit")
def test_nvtx_ranges_and_marks():
    import ember.cuda.nvtx as nvtx
    assert nvtx is cuda.nvtx
    # Without a profiler attached NVTX answers "not tracking" (negative depths).
    assert isinstance(nvtx.range_push("outer"), int)
    assert isinstance(nvtx.range_pop(), int)
    nvtx.mark("event")
    rid = nvtx.range_start("async")
    assert isinstance(rid, int)
    nvtx.range_end(rid)
    with nvtx.range("step {} of {n}", 3, n=10):
        pass

    @nvtx.range("decorated")
    def f(x):
        return x + 1

    assert f(1) == 2


@pytest.mark.skipif(BUILT_WITH_CUDA, reason="checks the CPU-only build's message")
def test_nvtx_without_cuda_build():
    with pytest.raises(RuntimeError, match="ember.cuda.nvtx.range_push: ember was built without CUDA"):
        cuda.nvtx.range_push("x")


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_names_match_torch():
    for name in ("is_bf16_supported", "is_tf32_supported", "memory_cached", "max_memory_cached",
                 "memory_stats_as_nested_dict", "reset_accumulated_memory_stats", "init", "is_initialized",
                 "ipc_collect", "set_per_process_memory_fraction", "get_per_process_memory_fraction"):
        assert hasattr(torch.cuda, name) and hasattr(cuda, name), name
    for name in ("range_push", "range_pop", "range_start", "range_end", "mark", "range"):
        assert hasattr(torch.cuda.nvtx, name) and hasattr(cuda.nvtx, name), name


# ---- custom_fwd / custom_bwd (CPU autocast)

def _make_function(cast_inputs):
    seen = {}

    class MatmulTwice(ember.autograd.Function):
        @staticmethod
        @ember.amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx, a, b):
            seen["forward_dtypes"] = (a.dtype, b.dtype)
            seen["forward_autocast"] = ember.is_autocast_enabled("cpu")
            ctx.save_for_backward(a, b)
            return ember.matmul(a, b)

        @staticmethod
        @ember.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["backward_autocast"] = ember.is_autocast_enabled("cpu")
            a, b = ctx.saved_tensors
            return ember.matmul(g, b.t()), ember.matmul(a.t(), g)

    return MatmulTwice, seen


def test_custom_fwd_casts_inputs_and_disables_autocast():
    fn, seen = _make_function(ember.float32)
    a = ember.randn(3, 4, dtype=ember.bfloat16, requires_grad=True)
    b = ember.randn(4, 2, requires_grad=True)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        out = fn.apply(a, b)
    assert seen["forward_dtypes"] == (ember.float32, ember.float32)
    assert seen["forward_autocast"] is False
    assert out.dtype == ember.float32  # the matmul was not autocast to bfloat16
    out.sum().backward()
    assert seen["backward_autocast"] is False
    assert a.grad.dtype == ember.bfloat16 and b.grad.dtype == ember.float32


def test_custom_fwd_without_cast_keeps_the_autocast_state_for_backward():
    fn, seen = _make_function(None)
    a = ember.randn(3, 4, requires_grad=True)
    b = ember.randn(4, 2, requires_grad=True)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        out = fn.apply(a, b)
    assert seen["forward_autocast"] is True and out.dtype == ember.bfloat16
    out.float().sum().backward()  # backward runs outside the region...
    assert seen["backward_autocast"] is True  # ...but under the forward's autocast state
    # Outside autocast nothing is cast and the values are right.
    fn2, seen2 = _make_function(ember.float64)
    x, y = ember.randn(2, 3), ember.randn(3, 2)
    np.testing.assert_allclose(fn2.apply(x, y).numpy(), x.numpy() @ y.numpy(), rtol=1e-5)
    assert seen2["forward_dtypes"] == (ember.float32, ember.float32)


def test_custom_fwd_argument_errors():
    with pytest.raises(TypeError):
        ember.amp.custom_fwd(lambda ctx: None)  # device_type is keyword-only and required
    with pytest.raises(ValueError, match="custom_fwd: expected `device_type` of type `str`"):
        ember.amp.custom_fwd(device_type=1)
    with pytest.raises(ValueError, match="custom_bwd: expected `device_type` of type `str`"):
        ember.amp.custom_bwd(device_type=None)
    with pytest.warns(FutureWarning, match="ember.cuda.amp.custom_fwd"):
        ember.cuda.amp.custom_fwd(cast_inputs=ember.float32)


# ---- with a GPU

@needs_gpu
def test_capabilities_on_the_gpu():
    major = cuda.get_device_capability()[0]
    assert cuda.is_bf16_supported() == (major >= 8)
    assert cuda.is_tf32_supported() == (major >= 8)
    cuda.init()
    assert cuda.is_initialized()


@needs_gpu
def test_memory_fraction_caps_allocations():
    total = cuda.get_device_properties().total_memory
    assert cuda.get_per_process_memory_fraction() == 1.0
    try:
        cuda.empty_cache()
        cuda.set_per_process_memory_fraction(0.05)
        assert cuda.get_per_process_memory_fraction() == 0.05
        small = ember.empty(int(total * 0.01) // 4, device="cuda")  # within the cap
        with pytest.raises(ember.OutOfMemoryError, match="memory fraction 0.05"):
            ember.empty(int(total * 0.06) // 4, device="cuda")
        del small
        cuda.set_per_process_memory_fraction(1.0)
        big = ember.empty(int(total * 0.06) // 4, device="cuda")  # the cap is lifted
        del big
    finally:
        cuda.set_per_process_memory_fraction(1.0)
        cuda.empty_cache()


@needs_gpu
def test_accumulated_stats_reset_on_the_gpu():
    x = ember.empty(10 << 20, device="cuda")
    del x
    cuda.empty_cache()
    assert cuda.memory_stats()["num_device_alloc"] > 0
    cuda.reset_accumulated_memory_stats()
    assert cuda.memory_stats()["num_device_alloc"] == 0
    nested = cuda.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["current"] == cuda.memory_allocated()
