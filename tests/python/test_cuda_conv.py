"""ember.backends.cudnn's flags and the cached convolution plans of
cuda/conv.cpp.

The flag tests run everywhere (the flags are C++ settings whether or not a GPU
is there); the GPU tests compare cuDNN's results under each flag with the CPU
path and skip, saying why, without a GPU and cuDNN.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import ember
import ember.backends.cudnn as cudnn
import ember.nn.functional as F
from harness import CUDA_AVAILABLE, CUDA_UNAVAILABLE_REASON

gpu = pytest.mark.skipif(not (CUDA_AVAILABLE and cudnn.is_available()),
                         reason=f"needs a CUDA GPU and cuDNN: {CUDA_UNAVAILABLE_REASON or 'cuDNN is missing'}")

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy

FLAGS = ("enabled", "benchmark", "deterministic", "allow_tf32")


@pytest.fixture(autouse=True)
def restore_flags():
    before = ember._C._get_cudnn_flags()
    yield
    for name in FLAGS:
        ember._C._set_cudnn_flag(name, before[name])


# ---- the flags (everywhere)

def test_flags_default_like_torch():
    # In a fresh process: conftest.py turns TF32 off in this one under EMBER_TEST_DEVICE=cuda.
    code = ("import ember, ember.backends.cudnn as c; "
            "print(ember._C._get_cudnn_flags(), (c.enabled, c.benchmark, c.deterministic, c.allow_tf32))")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ember.__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    want = dict(enabled=True, benchmark=False, deterministic=False, allow_tf32=True)
    assert out.stdout.strip() == f"{want} (True, False, False, True)", out.stdout + out.stderr


@pytest.mark.parametrize("name", FLAGS)
def test_each_flag_is_the_cpp_setting(name):
    start = getattr(cudnn, name)
    setattr(cudnn, name, not start)
    assert getattr(cudnn, name) is (not start)
    assert ember._C._get_cudnn_flags()[name] is (not start)
    assert ember.backends.cudnn.__dict__.get(name) is None  # not shadowed by a plain attribute
    others = {k: v for k, v in ember._C._get_cudnn_flags().items() if k != name}
    setattr(cudnn, name, start)
    assert ember._C._get_cudnn_flags()[name] is start
    assert {k: v for k, v in ember._C._get_cudnn_flags().items() if k != name} == others


def test_flags_context_sets_and_restores():
    cudnn.allow_tf32 = True  # PyTorch's default (conftest.py turns it off under EMBER_TEST_DEVICE=cuda)
    with cudnn.flags(enabled=False, benchmark=True, deterministic=True, allow_tf32=False):
        assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (False, True, True, False)
        with cudnn.flags(benchmark=False):  # None leaves the others alone
            assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (False, False, True)
        assert cudnn.benchmark is True
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (True, False, False, True)
    with pytest.raises(ZeroDivisionError):
        with cudnn.flags(deterministic=True):
            1 / 0
    assert cudnn.deterministic is False


def test_unknown_flag_is_refused():
    with pytest.raises(ValueError, match="unknown flag 'fast'"):
        ember._C._set_cudnn_flag("fast", True)


def test_cpu_convolutions_ignore_the_flags():
    x = ember.tensor(np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4))
    w = ember.ones(3, 2, 3, 3)
    want = F.conv2d(x, w).numpy()
    with cudnn.flags(enabled=False, deterministic=True, benchmark=True, allow_tf32=False):
        np.testing.assert_array_equal(F.conv2d(x, w).numpy(), want)


def test_plan_count_is_zero_before_any_gpu_convolution():
    if CUDA_AVAILABLE:
        pytest.skip("a GPU may have run convolutions already in this process")
    assert ember._C._cudnn_conv_plan_count(0) == 0


# ---- on a GPU with cuDNN

def rand(shape, seed, dtype=ember.float32):
    # Full-mantissa values: TF32 rounding would show in the results.
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=dtype)


def conv_both(x, w, b, dtype, **kw):
    """conv2d forward and backward on the CPU and on CUDA, as float64 numpy arrays."""
    results = []
    for dev in ("cpu", "cuda"):
        xs, ws, bs = (t.to(dev).to(dtype).detach().requires_grad_(True) for t in (x, w, b))
        out = F.conv2d(xs, ws, bs, **kw)
        out.backward(ember.ones_like(out))
        results.append([t.detach().cpu().to(ember.float64).numpy() for t in (out, xs.grad, ws.grad, bs.grad)])
    return results


TOL = {ember.float32: (1e-4, 1e-4), ember.float64: (1e-10, 1e-10)}
# float32 with TF32 allowed: the inputs are rounded to 10 mantissa bits. On
# these inputs, TF32 rounding (to nearest, or truncation) simulated in float64
# uses at most a third of this tolerance.
TF32_TOL = (1e-2, 2e-2)
# Each sets allow_tf32 itself, so it does not depend on the default (which
# conftest.py turns off under EMBER_TEST_DEVICE=cuda).
SETTINGS = [
    dict(allow_tf32=False),
    dict(benchmark=True, allow_tf32=False),
    dict(deterministic=True, allow_tf32=False),
    dict(benchmark=True, deterministic=True, allow_tf32=False),
    dict(allow_tf32=True),
    dict(benchmark=True, allow_tf32=True),
]


@gpu
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=str)
@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()))
def test_convolutions_match_cpu_under_each_flag(settings, dtype):
    x, w, b = rand((2, 16, 11, 9), 1), rand((8, 4, 3, 3), 2), rand((8,), 3)
    with cudnn.flags(**settings):
        cpu, gpu_ = conv_both(x, w, b, dtype, stride=2, padding=1, groups=4)
    rtol, atol = TF32_TOL if settings["allow_tf32"] and dtype == ember.float32 else TOL[dtype]
    for name, c, g in zip(("output", "input grad", "weight grad", "bias grad"), cpu, gpu_):
        np.testing.assert_allclose(g, c, rtol=rtol, atol=atol, err_msg=name)


@gpu
def test_allow_tf32_false_keeps_float32_precision():
    # A long reduction (C * KH * KW = 1152): TF32's 10-bit mantissa would be off by ~1e-3 relative.
    x, w = rand((2, 128, 12, 12), 4), rand((64, 128, 3, 3), 5)
    want = F.conv2d(x.to(ember.float64), w.to(ember.float64)).numpy()
    with cudnn.flags(allow_tf32=False):
        got = F.conv2d(x.cuda(), w.cuda()).cpu().to(ember.float64).numpy()
    scale = np.abs(want).max()
    assert np.abs(got - want).max() <= 2e-5 * scale


@gpu
def test_deterministic_gives_identical_results_run_to_run():
    x, w = rand((4, 32, 16, 16), 6).cuda(), rand((32, 32, 3, 3), 7).cuda()
    grads = []
    with cudnn.flags(deterministic=True):
        for _ in range(3):
            xs, ws = x.detach().requires_grad_(True), w.detach().requires_grad_(True)
            F.conv2d(xs, ws, padding=1).square().sum().backward()
            grads.append((xs.grad.cpu().numpy(), ws.grad.cpu().numpy()))
    for gx, gw in grads[1:]:
        np.testing.assert_array_equal(gx, grads[0][0])
        np.testing.assert_array_equal(gw, grads[0][1])


@gpu
def test_plans_are_cached_per_shape_and_flags():
    cudnn.allow_tf32 = False  # full precision: the benchmarked algorithm's numbers match to 1e-4
    x, w = rand((3, 5, 13, 7), 8).cuda(), rand((6, 5, 3, 3), 9).cuda()
    before = ember._C._cudnn_conv_plan_count(0)
    first = F.conv2d(x, w).cpu().numpy()
    assert ember._C._cudnn_conv_plan_count(0) == before + 1  # one forward plan
    for _ in range(3):
        np.testing.assert_array_equal(F.conv2d(x, w).cpu().numpy(), first)
    assert ember._C._cudnn_conv_plan_count(0) == before + 1  # reused, not re-chosen
    F.conv2d(x[:2], w)
    assert ember._C._cudnn_conv_plan_count(0) == before + 2  # another batch size: another plan
    with cudnn.flags(benchmark=True):
        np.testing.assert_allclose(F.conv2d(x, w).cpu().numpy(), first, rtol=1e-4, atol=1e-4)
        assert ember._C._cudnn_conv_plan_count(0) == before + 3  # the flags are part of the key
        F.conv2d(x, w)
        assert ember._C._cudnn_conv_plan_count(0) == before + 3
    xg, wg = x.detach().requires_grad_(True), w.detach().requires_grad_(True)
    F.conv2d(xg, wg).sum().backward()
    assert ember._C._cudnn_conv_plan_count(0) == before + 5  # backward data and backward filter


@gpu
def test_disabled_cudnn_refuses_cuda_convolutions():
    x, w = rand((1, 2, 5, 5), 10).cuda(), rand((3, 2, 3, 3), 11).cuda()
    with cudnn.flags(enabled=False):
        with pytest.raises(NotImplementedError, match="conv2d: ember.backends.cudnn.enabled is False"):
            F.conv2d(x, w)
        with pytest.raises(NotImplementedError, match="conv_transpose2d: ember.backends.cudnn.enabled is False"):
            F.conv_transpose2d(x, w.transpose(0, 1).contiguous())
    assert F.conv2d(x, w).is_cuda
