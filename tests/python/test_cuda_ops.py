"""Cross-backend test: every OpCase row of every test module's CASES (the op
tables the fuzz test collects) runs on the CPU and on CUDA with the same
inputs, and the forward results and the input gradients must agree: in the
row's own dtypes, and for float32 rows also in bfloat16 and float16 with
loose tolerances.

Rows whose op has no CUDA kernel yet xfail with the op's name and message
(`pytest -rx` lists them), and the last test prints them all. Without a
usable GPU every test skips, saying why.
"""
import glob
import os

import numpy as np
import pytest

import ember
from harness import OpCase, random_array
from test_fuzz import discover_cases

AVAILABLE = ember._C._cuda.is_available()
REASON = ember._C._cuda.unavailable_reason()
pytestmark = pytest.mark.skipif(not AVAILABLE, reason=f"needs a CUDA GPU: {REASON}")

# Not named CASES: the fuzz test collects every module's CASES as OpCase rows.
ROWS, BROKEN = discover_cases([p for p in glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "test_*.py"))
                               if os.path.basename(p) not in ("test_fuzz.py", os.path.basename(__file__))])
ROWS = [(module, case) for module, case in ROWS if isinstance(case, OpCase)]
IDS = [f"{module}:{case.name}" for module, case in ROWS]
MISSING = {}  # row id -> why CUDA refused it
LOW_PRECISION = {"bfloat16": (ember.bfloat16, 3e-2, 3e-2), "float16": (ember.float16, 1e-2, 1e-2)}


def numpy_of(value):
    """A result as numpy arrays (tuples of tensors become lists)."""
    if isinstance(value, (tuple, list)):
        return [numpy_of(v) for v in value]
    if isinstance(value, ember.Tensor):
        t = value.detach().cpu()
        return (t.float() if t.dtype in (ember.bfloat16, ember.float16) else t).numpy()
    return np.asarray(value)


def assert_same(cpu, cuda, rtol, atol, msg):
    if isinstance(cpu, list):
        assert isinstance(cuda, list) and len(cpu) == len(cuda), msg
        for a, b in zip(cpu, cuda):
            assert_same(a, b, rtol, atol, msg)
        return
    assert cpu.shape == cuda.shape, f"{msg}: shape {cuda.shape} on CUDA, {cpu.shape} on the CPU"
    assert cpu.dtype == cuda.dtype, f"{msg}: dtype {cuda.dtype} on CUDA, {cpu.dtype} on the CPU"
    if cpu.dtype == np.bool_ or np.issubdtype(cpu.dtype, np.integer):
        np.testing.assert_array_equal(cuda, cpu, err_msg=msg)
    else:
        np.testing.assert_allclose(cuda.astype(np.float64), cpu.astype(np.float64), rtol=rtol, atol=atol,
                                   err_msg=msg, equal_nan=True)


def tensors_on(arrays, device, dtype=None, grad=False):
    out = []
    for a in arrays:
        t = ember.tensor(np.array(a, copy=True)).to(device)
        if dtype is not None:
            t = t.to(dtype)
        if grad:
            t.requires_grad_(True)
        out.append(t)
    return out


def outputs(result):
    if isinstance(result, ember.Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [r for r in result if isinstance(r, ember.Tensor)]
    return []


def run_both(case, arrays, dtype=None, grad=False, row=""):
    """(cpu result, cuda result, cpu grads, cuda grads) as numpy."""
    results, grads = [], []
    for device in ("cpu", "cuda"):
        inputs = tensors_on(arrays, device, dtype, grad)
        try:
            result = case.ember_fn(*inputs)
        except NotImplementedError as e:
            if device == "cuda":
                MISSING[row] = str(e).splitlines()[0]
                pytest.xfail(f"no CUDA kernel: {row}: {e}")
            raise
        results.append(numpy_of(result))
        if grad:
            outs = [o for o in outputs(result) if o.requires_grad and o.dtype.is_floating_point]
            if outs:
                loss = sum((o.float() * ember.tensor(np.linspace(-1, 1, o.numel()).reshape(o.shape),
                                                     dtype=ember.float32).to(device)).sum() for o in outs)
                loss.backward()
            grads.append([numpy_of(t.grad) if t.grad is not None else np.zeros(0) for t in inputs])
    return results[0], results[1], grads[0] if grad else None, grads[1] if grad else None


@pytest.mark.parametrize("module_case", ROWS, ids=IDS)
def test_forward_and_backward_match_the_cpu(module_case):
    module, case = module_case
    row = f"{module}:{case.name}"
    for shapes in case.shapes:
        for dtype in case.dtypes:
            arrays = [random_array(s, dtype, case.domain) for s in shapes]
            try:
                cpu, cuda, _, _ = run_both(case, arrays, row=row)
            except (RuntimeError, ValueError, TypeError, IndexError) as e:
                pytest.fail(f"{row} {shapes} {np.dtype(dtype).name}: raised on one backend: {e!r}")
            assert_same(cpu, cuda, max(case.rtol, 1e-4), max(case.atol, 1e-5),
                        f"{row} forward {shapes} {np.dtype(dtype).name}")
        if case.grad and np.float32 in [np.dtype(d).type for d in case.dtypes if not isinstance(d, str)]:
            arrays = [random_array(s, np.float32, case.domain) for s in shapes]
            _, _, gcpu, gcuda = run_both(case, arrays, grad=True, row=row)
            assert_same(gcpu, gcuda, 1e-3, 1e-4, f"{row} backward {shapes} float32")


@pytest.mark.parametrize("precision", sorted(LOW_PRECISION))
@pytest.mark.parametrize("module_case", ROWS, ids=IDS)
def test_half_precision_matches_the_cpu(module_case, precision):
    module, case = module_case
    row = f"{module}:{case.name}"
    if np.float32 not in [np.dtype(d).type for d in case.dtypes if not isinstance(d, str)]:
        pytest.skip(f"{row} has no float32 row")
    dtype, rtol, atol = LOW_PRECISION[precision]
    for shapes in case.shapes:
        arrays = [random_array(s, np.float32, case.domain) for s in shapes]
        try:
            cpu_inputs = tensors_on(arrays, "cpu", dtype)
            case.ember_fn(*cpu_inputs)
        except (RuntimeError, ValueError, TypeError, NotImplementedError):
            pytest.skip(f"{row} does not take {precision} on the CPU either")
        cpu, cuda, _, _ = run_both(case, arrays, dtype=dtype, row=row)
        assert_same(cpu, cuda, rtol, atol, f"{row} forward {shapes} {precision}")


def test_test_modules_import():
    assert not BROKEN, "\n".join(BROKEN)


def test_zz_report_ops_without_cuda_kernels(capsys):
    """Lists the rows that xfailed for want of a CUDA kernel (informational)."""
    with capsys.disabled():
        print(f"\nrows without a CUDA kernel: {len(MISSING)} of {len(ROWS)}")
        for row, why in sorted(MISSING.items()):
            print(f"  {row}: {why}")
