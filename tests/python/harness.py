"""Shared helpers for the op tests: numpy references, PyTorch when importable,
finite-difference gradient checks, and non-contiguous input layouts.

An op family's test file describes its ops as OpCase rows; the generic tests
(forward vs numpy, layouts, gradcheck, the random fuzz test) run every row.
"""
import os
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np
import pytest

import ember

try:  # PyTorch is a second reference when it is installed.
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

# EMBER_TEST_DEVICE=cuda runs the op tables on the GPU: inputs are made there
# and results come back through .cpu() (to_numpy) to be compared.
DEVICE = os.environ.get("EMBER_TEST_DEVICE", "cpu")

# Whether this machine can run CUDA, and why not. Tests that need a GPU take
# `@needs_gpu` (a whole file: `pytestmark = needs_gpu`); tests/gpu/run.sh
# looks for "needs a CUDA GPU" in the skip reasons.
CUDA_AVAILABLE = ember._C._cuda.is_available()
CUDA_UNAVAILABLE_REASON = ember._C._cuda.unavailable_reason()
needs_gpu = pytest.mark.skipif(not CUDA_AVAILABLE, reason=f"needs a CUDA GPU: {CUDA_UNAVAILABLE_REASON}")

RNG = np.random.default_rng(0)


def to_numpy(t):
    return t.detach().cpu().numpy()


def make(array, requires_grad=False, device=DEVICE):
    """An ember tensor holding a copy of a numpy array."""
    t = ember.tensor(np.array(array, copy=True), device=device)  # keeps 0-d arrays 0-d
    if requires_grad:
        t.requires_grad_(True)
    return t


def random_array(shape, dtype=np.float32, domain=None, rng=RNG):
    """Random values for an op's inputs; `domain` = (low, high) restricts them."""
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        low, high = domain or (-5, 6)
        return rng.integers(low, high, size=shape).astype(dtype)
    low, high = domain or (-2.0, 2.0)
    return rng.uniform(low, high, size=shape).astype(dtype)


def assert_close(actual, expected, rtol=1e-5, atol=1e-6, msg=""):
    actual = to_numpy(actual) if isinstance(actual, ember.Tensor) else np.asarray(actual)
    expected = to_numpy(expected) if isinstance(expected, ember.Tensor) else np.asarray(expected)
    assert actual.shape == expected.shape, f"{msg} shape {actual.shape} != {expected.shape}"
    if expected.dtype == np.bool_ or np.issubdtype(expected.dtype, np.integer):
        np.testing.assert_array_equal(actual, expected, err_msg=msg)
    else:
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol,
                                   err_msg=msg, equal_nan=True)


# ---- layouts: the same values through non-contiguous tensors

def layouts(array):
    """(name, ember tensor) pairs holding `array` as contiguous, transposed,
    sliced and (when its rows are equal) expanded tensors."""
    out = [("contiguous", make(array))]
    if array.ndim >= 2:
        # Stored transposed, viewed back: same values, swapped strides.
        out.append(("transposed", make(np.ascontiguousarray(np.swapaxes(array, -1, -2))).transpose(-1, -2)))
    if array.ndim >= 1:
        padded = np.zeros(array.shape[:-1] + (array.shape[-1] * 2,), dtype=array.dtype)
        padded[..., ::2] = array
        out.append(("sliced", make(padded)[..., ::2]))
        if array.shape[0] > 1 and np.all(array == array[:1]):
            out.append(("expanded", make(array[:1]).expand(*array.shape)))
    return out


def expanded_array(shape, dtype=np.float32, domain=None):
    """An array whose rows are equal, so it can also be built by expand()."""
    row = random_array((1,) + tuple(shape[1:]), dtype, domain)
    return np.broadcast_to(row, shape).copy()


# ---- the op table

@dataclass
class OpCase:
    """One op: how to call it in ember and in numpy, and on what inputs.

    ember_fn / numpy_fn take the inputs positionally. `shapes` lists input
    shape tuples to try (broadcasting cases included). `domain` restricts
    random values (e.g. (0.1, 3) for log). `grad` says whether to gradcheck.
    `torch_fn`, when given, is checked too where PyTorch is importable.
    `extra` holds row options the generic tests read: {"fuzz": False} (see
    test_fuzz.py) and {"cpu_only_dtypes": (...)}, dtypes that have no kernel
    off the CPU (integer matmul on CUDA, as in PyTorch): the table tests and
    the fuzz test skip them on other devices, test_cuda_ops.py checks that
    CUDA refuses them.
    """
    name: str
    ember_fn: Callable
    numpy_fn: Callable
    shapes: Sequence[Sequence[tuple]]
    dtypes: Sequence = (np.float32,)
    domain: Optional[tuple] = None
    grad: bool = True
    rtol: float = 1e-5
    atol: float = 1e-6
    torch_fn: Optional[Callable] = None
    extra: dict = field(default_factory=dict)

    def __str__(self):
        return self.name


# extra= for a row whose integer dtypes reach a matrix product: cuBLAS has no
# integer GEMM, so ember refuses these on CUDA with NotImplementedError, as PyTorch.
INT_MATMUL_CPU_ONLY = {"cpu_only_dtypes": (np.int8, np.uint8, np.int32, np.int64)}


def _dtype_name(dtype):
    return dtype if isinstance(dtype, str) else np.dtype(dtype).name  # "bfloat16" is a name already


def runs_on_device(case: OpCase, dtype, device=None):
    """Whether the row's `dtype` runs on `device` (default DEVICE): not when
    the row lists it in extra["cpu_only_dtypes"] and the device is not the CPU."""
    cpu_only = {_dtype_name(d) for d in case.extra.get("cpu_only_dtypes", ())}
    return (device or DEVICE) == "cpu" or _dtype_name(dtype) not in cpu_only


def device_dtypes(case: OpCase):
    """The row's dtypes that run on DEVICE."""
    return [d for d in case.dtypes if runs_on_device(case, d)]


def check_forward(case: OpCase, shapes, dtype):
    if not runs_on_device(case, dtype):
        return
    arrays = [random_array(s, dtype, case.domain) for s in shapes]
    result = case.ember_fn(*[make(a) for a in arrays])
    expected = case.numpy_fn(*arrays)
    assert_close(result, expected, case.rtol, case.atol, msg=f"{case.name} {shapes} {np.dtype(dtype).name}")
    if torch is not None and case.torch_fn is not None:
        ref = case.torch_fn(*[torch.from_numpy(a.copy()) for a in arrays])
        assert_close(result, ref.numpy(), case.rtol, case.atol, msg=f"{case.name} vs torch")


def check_layouts(case: OpCase, shape):
    """The op on transposed / sliced / expanded inputs equals the op on contiguous ones."""
    dtypes = device_dtypes(case)
    if not dtypes:
        return
    base = random_array(shape, dtypes[0], case.domain)
    expected = case.numpy_fn(base)
    for name, t in layouts(base):
        assert_close(case.ember_fn(t), expected, case.rtol, case.atol, msg=f"{case.name} {name}")


def check_grad(case: OpCase, shapes):
    if not runs_on_device(case, np.float64):
        return
    arrays = [random_array(s, np.float64, case.domain) for s in shapes]
    if DEVICE == "cpu":
        inputs = [make(a, requires_grad=True) for a in arrays]
        assert ember.autograd.gradcheck(case.ember_fn, inputs), case.name
        return
    # gradcheck perturbs its inputs through numpy, in host memory: check the
    # formulas on the CPU, then that the device's gradients equal the CPU's.
    cpu_inputs = [make(a, requires_grad=True, device="cpu") for a in arrays]
    assert ember.autograd.gradcheck(case.ember_fn, cpu_inputs), case.name
    grads = []
    for device in ("cpu", DEVICE):
        inputs = [make(a, requires_grad=True, device=device) for a in arrays]
        out = case.ember_fn(*inputs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        outs = [o for o in outs if isinstance(o, ember.Tensor) and o.requires_grad]
        if not outs:
            return
        loss = sum((o * make(np.linspace(-1, 1, o.numel()).reshape(o.shape), device=device)).sum() for o in outs)
        loss.backward()
        grads.append([None if t.grad is None else to_numpy(t.grad) for t in inputs])
    for i, (g_cpu, g_dev) in enumerate(zip(*grads)):
        assert (g_cpu is None) == (g_dev is None), f"{case.name}: input {i} gradient on one device only"
        if g_cpu is not None:
            assert_close(g_dev, g_cpu, 1e-7, 1e-9, msg=f"{case.name} gradient of input {i} on {DEVICE}")


def cases_ids(cases):
    return [c.name for c in cases]


def parametrize_cases(cases):
    return pytest.mark.parametrize("case", cases, ids=cases_ids(cases))


def table_tests(cases):
    """The two tests every op table gets: forward against numpy on each row's
    shapes and dtypes, and float64 gradcheck on each differentiable row.
    Use as `test_forward, test_gradcheck = table_tests(CASES)`."""

    @parametrize_cases(cases)
    def test_forward(case):
        dtypes = device_dtypes(case)
        if not dtypes:
            pytest.skip(f"{case.name}: every dtype is CPU-only, and the device is {DEVICE}")
        for shapes in case.shapes:
            for dtype in dtypes:
                check_forward(case, shapes, dtype)

    @parametrize_cases([c for c in cases if c.grad])
    def test_gradcheck(case):
        for shapes in case.shapes:
            check_grad(case, shapes)

    return test_forward, test_gradcheck
