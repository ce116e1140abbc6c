"""The small device-selection modules scripts touch in their first lines:
ember.backends.mps, ember.backends.opt_einsum, ember.cpu and ember.accelerator,
checked against what they must answer on this machine and, where torch is
importable, against torch's answers on a machine without MPS or opt_einsum."""
import importlib
import warnings

import pytest

import ember
from harness import CUDA_AVAILABLE, needs_gpu, torch

CASES = []  # no OpCase rows: module-level switches, not ops

BUILT_WITH_CUDA = ember._C._build_info()["cuda"] == "ON"
HAS_OPT_EINSUM_PACKAGE = importlib.util.find_spec("opt_einsum") is not None


# ---- the usual device pick -------------------------------------------------------------------

def test_usual_device_pick_runs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ember.cuda.is_available() warns why CUDA cannot be used
        device = "cuda" if ember.cuda.is_available() else "mps" if ember.backends.mps.is_available() else "cpu"
    assert device == ("cuda" if CUDA_AVAILABLE else "cpu")
    x = ember.ones(2, device=device)
    assert x.device.type == device


# ---- ember.backends.mps ----------------------------------------------------------------------

def test_mps_is_never_there():
    assert ember.backends.mps.is_available() is False
    assert ember.backends.mps.is_built() is False
    assert ember.backends.mps.is_macos13_or_newer() is False
    assert ember.backends.mps.is_macos_or_newer(14, 0) is False


def test_mps_importable_as_module():
    import ember.backends.mps as mps
    assert mps is ember.backends.mps


@pytest.mark.skipif(torch is None, reason="torch not importable")
def test_mps_matches_torch_off_macos():
    assert ember.backends.mps.is_available() == torch.backends.mps.is_available()
    assert ember.backends.mps.is_built() == torch.backends.mps.is_built()


# ---- ember.backends.opt_einsum ---------------------------------------------------------------

def test_opt_einsum_reports_unavailable():
    oe = ember.backends.opt_einsum
    assert oe.is_available() is False
    assert oe.get_opt_einsum() is None
    assert oe.enabled is False
    assert oe.strategy is None


def test_opt_einsum_set_flags_rejects_enabling_and_assignment_changes_nothing():
    oe = ember.backends.opt_einsum
    with pytest.raises(ValueError, match="opt_einsum is not available"):
        oe.set_flags(True)
    with pytest.raises(ValueError, match="strategy"):
        oe.set_flags(None, "greedy")
    assert oe.enabled is False
    oe.enabled = True  # accepted, as torch without the package; einsum is unchanged
    try:
        a, b = ember.ones(2, 3), ember.ones(3, 4)
        assert ember.einsum("ij,jk->ik", a, b).tolist() == [[3.0] * 4] * 2
    finally:
        oe.enabled = False


def test_opt_einsum_flags():
    oe = ember.backends.opt_einsum
    assert oe.set_flags(False) == (False, None)
    with oe.flags(enabled=False):
        assert oe.enabled is False
    with pytest.raises(ValueError):
        with oe.flags(enabled=True):
            pass


def test_einsum_still_works_with_opt_einsum_off():
    a, b = ember.ones(2, 3), ember.ones(3, 4)
    assert ember.einsum("ij,jk->ik", a, b).tolist() == [[3.0] * 4] * 2


@pytest.mark.skipif(torch is None or HAS_OPT_EINSUM_PACKAGE, reason="needs torch, without the opt_einsum package")
def test_opt_einsum_matches_torch_without_the_package():
    t, e = torch.backends.opt_einsum, ember.backends.opt_einsum
    assert (e.is_available(), e.enabled, e.strategy) == (t.is_available(), t.enabled, t.strategy)
    for mod in (t, e):
        with pytest.raises(ValueError, match="opt_einsum is not available"):
            mod.set_flags(True)


# ---- ember.cpu --------------------------------------------------------------------------------

def test_cpu_device_api():
    assert ember.cpu.is_available() is True
    assert ember.cpu.is_initialized() is True
    assert ember.cpu.device_count() == 1
    assert ember.cpu.current_device() == "cpu"
    assert ember.cpu.synchronize() is None
    assert ember.cpu.synchronize("cpu") is None
    assert ember.cpu.set_device("cpu") is None


def test_devices_pickle_and_deepcopy():
    # copy.deepcopy(nn.DataParallel(...)) and spawned workers pickle the devices they hold.
    import copy
    import pickle
    for spec in ("cpu", "cuda", "cuda:1"):
        d = ember.device(spec)
        for back in (pickle.loads(pickle.dumps(d)), copy.deepcopy(d)):
            assert back == d and back.type == d.type and back.index == d.index


def test_cpu_device_agnostic_lookup():
    # getattr(torch, device.type) is how device-agnostic code reaches the device module.
    for name in ("cpu", "cuda"):
        module = getattr(ember, ember.device(name).type)
        assert callable(module.synchronize) and callable(module.device_count)


def test_cpu_stream_context_selects_and_restores():
    default = ember.cpu.current_stream()
    s = ember.cpu.Stream()
    assert s is not default
    with ember.cpu.stream(s):
        assert ember.cpu.current_stream() is s
        inner = ember.cpu.Stream(priority=0)
        with ember.cpu.stream(inner):
            assert ember.cpu.current_stream() is inner
        assert ember.cpu.current_stream() is s
    assert ember.cpu.current_stream() is default
    with ember.cpu.stream(None):
        assert ember.cpu.current_stream() is default
    with pytest.raises(KeyError):
        with ember.cpu.stream(s):
            raise KeyError("x")
    assert ember.cpu.current_stream() is default


def test_cpu_stream_and_event_methods_are_no_ops():
    s, e = ember.cpu.Stream(), ember.cpu.Event()
    s.wait_stream(ember.cpu.Stream())
    s.wait_event(e)
    s.record_event()
    e.record()
    e.wait()
    e.synchronize()
    assert e.query() is True


def test_cpu_amp_autocast_is_the_deprecated_spelling():
    from ember.cpu.amp import autocast
    a, b = ember.ones(2, 3), ember.ones(3, 2)
    with pytest.warns(FutureWarning, match=r"ember.amp.autocast\('cpu'"):
        ctx = autocast()
    with ctx:
        out = a @ b
    assert out.dtype == ember.bfloat16
    assert (a @ b).dtype == ember.float32
    with pytest.warns(FutureWarning):
        with ember.cpu.amp.autocast(enabled=False):
            assert (a @ b).dtype == ember.float32


def test_cpu_amp_grad_scaler_is_the_deprecated_spelling():
    with pytest.warns(FutureWarning, match="GradScaler"):
        scaler = ember.cpu.amp.GradScaler(init_scale=8.0)
    assert isinstance(scaler, ember.amp.GradScaler)
    assert scaler.get_scale() == 8.0


@pytest.mark.skipif(torch is None, reason="torch not importable")
def test_cpu_matches_torch():
    assert ember.cpu.is_available() == torch.cpu.is_available()
    assert ember.cpu.device_count() == torch.cpu.device_count()
    assert ember.cpu.current_device() == torch.cpu.current_device()
    public = {n for n in ("is_available", "device_count", "current_device", "synchronize", "Stream",
                          "StreamContext", "Event", "stream", "current_stream", "set_device", "is_initialized",
                          "amp")}
    assert public <= set(dir(torch.cpu))
    assert public <= set(dir(ember.cpu))


# ---- ember.accelerator ------------------------------------------------------------------------

def test_accelerator_availability_follows_cuda():
    acc = ember.accelerator
    assert acc.is_available() == CUDA_AVAILABLE
    assert acc.device_count() == ember.cuda.device_count()
    if BUILT_WITH_CUDA:
        assert acc.current_accelerator().type == "cuda"
    else:
        assert acc.current_accelerator() is None
    checked = acc.current_accelerator(check_available=True)
    assert (checked is not None) == CUDA_AVAILABLE


def test_accelerator_device_index_none_is_a_no_op():
    with ember.accelerator.device_index(None):
        pass


def test_accelerator_set_device_index_rejects_another_device_type():
    with pytest.raises(ValueError, match="cpu doesn't match the current accelerator cuda"):
        ember.accelerator.set_device_index("cpu")


def test_accelerator_negative_index_is_a_no_op():
    ember.accelerator.set_device_index(-1)


@pytest.mark.skipif(CUDA_AVAILABLE, reason="checks the answers without a GPU")
def test_accelerator_without_gpu_raises_where_torch_does():
    for call in (ember.accelerator.current_device_index, ember.accelerator.synchronize,
                 lambda: ember.accelerator.set_device_index(0)):
        with pytest.raises(RuntimeError, match="no CUDA GPU"):
            call()
    with pytest.raises(RuntimeError):
        with ember.accelerator.device_index(0):
            pass
    assert ember.accelerator.memory_allocated() == 0


@needs_gpu
def test_accelerator_with_gpu():
    acc = ember.accelerator
    assert acc.current_device_index() == ember.cuda.current_device()
    with acc.device_index(0):
        assert acc.current_device_index() == 0
    x = ember.ones(4, device=acc.current_accelerator())
    acc.synchronize()
    assert x.device.type == "cuda"
    assert acc.memory_allocated() >= 16


@pytest.mark.skipif(torch is None, reason="torch not importable")
def test_accelerator_matches_torch_availability():
    assert ember.accelerator.is_available() == torch.accelerator.is_available()
    assert ember.accelerator.device_count() == torch.accelerator.device_count()
    t_acc = torch.accelerator.current_accelerator(check_available=True)
    e_acc = ember.accelerator.current_accelerator(check_available=True)
    assert (t_acc is None) == (e_acc is None)
