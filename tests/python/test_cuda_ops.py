"""Cross-backend test: every OpCase row of every test module's CASES (the op
tables the fuzz test collects) runs on the CPU and on CUDA with the same
inputs, and the forward results and the input gradients must agree: in the
row's own dtypes, and for float32 rows also in bfloat16 and float16 with
loose tolerances.

Rows whose op has no CUDA kernel yet xfail with the op's name and message
(`pytest -rx` lists them), and the last test prints them all. A row's
extra={"cpu_only_dtypes": [...]} (harness.py) names dtypes that are CPU-only
by design, as in PyTorch (integer matmul): in those CUDA must raise
NotImplementedError naming the dtype. Without a usable GPU every test skips,
saying why.
"""
import glob
import os

import numpy as np
import pytest

import ember
from harness import OpCase, needs_gpu, random_array, runs_on_device
from test_fuzz import discover_cases

pytestmark = needs_gpu

# Not named CASES: the fuzz test collects every module's CASES as OpCase rows.
ROWS, BROKEN = discover_cases([p for p in glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "test_*.py"))
                               if os.path.basename(p) not in ("test_fuzz.py", os.path.basename(__file__))],
                              include_unfuzzed=True)
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
            if not runs_on_device(case, dtype, "cuda"):
                # CPU-only by design where the op reaches a GEMM; a shape that
                # does not (inner with a 0-d operand is a plain mul) runs as usual.
                try:
                    case.ember_fn(*tensors_on(arrays, "cuda"))
                except NotImplementedError as e:
                    assert np.dtype(dtype).name in str(e), f"{row} {shapes}: {e}"
                    continue
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


# ---- kernel paths the op tables' small shapes do not reach

def both(array):
    return ember.tensor(np.array(array, copy=True)), ember.tensor(np.array(array, copy=True)).cuda()


def test_long_reductions_take_the_two_pass_path_and_agree():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(3_000_001).astype(np.float32)
    cpu, gpu = both(a)
    np.testing.assert_allclose(gpu.sum().cpu().numpy(), a.astype(np.float64).sum(), rtol=1e-4, atol=1e-2)
    np.testing.assert_allclose(gpu.mean().cpu().numpy(), a.astype(np.float64).mean(), rtol=1e-4, atol=1e-6)
    assert gpu.max().item() == a.max() and gpu.min().item() == a.min()
    assert gpu.argmax().item() == int(np.argmax(a))
    b = rng.standard_normal((3, 100_000, 2)).astype(np.float32)  # few columns, inner > 1
    np.testing.assert_allclose(ember.tensor(b).cuda().sum(1).cpu().numpy(), b.astype(np.float64).sum(1),
                               rtol=1e-4, atol=1e-2)
    i = rng.integers(-3, 4, size=1_000_003).astype(np.int64)
    assert ember.tensor(i).cuda().sum().item() == int(i.sum())
    assert ember.tensor(i > 2).cuda().any().item() and not ember.tensor(i > 3).cuda().any().item()


def test_arg_reductions_pick_the_first_extreme_and_nans():
    a = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, np.nan, 5.0, np.nan]], dtype=np.float32)
    cpu, gpu = both(a)
    for dim in (0, 1):
        np.testing.assert_array_equal(gpu.argmax(dim).cpu().numpy(), cpu.argmax(dim).numpy())
        np.testing.assert_array_equal(gpu.argmin(dim).cpu().numpy(), cpu.argmin(dim).numpy())
        values, indices = gpu.max(dim)
        cv, ci = cpu.max(dim)
        np.testing.assert_array_equal(indices.cpu().numpy(), ci.numpy())
        np.testing.assert_array_equal(values.cpu().numpy(), cv.numpy())


@pytest.mark.parametrize("src", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("dst", ["float32", "float64", "float16", "bfloat16", "int64", "int8", "bool"])
def test_casting_copies_match_the_cpu(src, dst):
    a = ember.tensor(np.linspace(-3, 300, 24).reshape(4, 6).astype(np.float32)).to(getattr(ember, src))
    expected = numpy_of(a.t().to(getattr(ember, dst)))
    g = a.cuda()
    assert_same(expected, numpy_of(g.t().to(getattr(ember, dst))), 0, 0, "cast on the GPU")
    assert_same(expected, numpy_of(a.t().to("cuda", getattr(ember, dst))), 0, 0, "cast on the way up")
    assert_same(expected, numpy_of(g.t().to("cpu", getattr(ember, dst))), 0, 0, "cast on the way down")


def test_strided_copies_and_fills_on_the_gpu():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    g = ember.tensor(a).cuda()
    np.testing.assert_array_equal(g.permute(2, 0, 1).contiguous().cpu().numpy(), a.transpose(2, 0, 1))
    dst = ember.zeros(5, 3, 4, device="cuda")
    dst.permute(1, 2, 0).copy_(g)
    np.testing.assert_array_equal(dst.cpu().numpy(), a.transpose(2, 0, 1))
    g[:, ::2].fill_(-1.0)
    expected = a.copy()
    expected[:, ::2] = -1
    np.testing.assert_array_equal(g.cpu().numpy(), expected)
    np.testing.assert_array_equal(ember.full((2, 3), 7, device="cuda").cpu().numpy(), np.full((2, 3), 7))
    np.testing.assert_array_equal(ember.arange(5, device="cuda").cpu().numpy(), np.arange(5))


def test_numbers_mix_with_gpu_tensors():
    a = np.linspace(-2, 2, 1001).astype(np.float32)  # odd length: vector path plus a tail
    g = ember.tensor(a).cuda()
    np.testing.assert_allclose((g * 2 + 1).cpu().numpy(), a * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose((g[1:] - 0.5).cpu().numpy(), a[1:] - 0.5, rtol=1e-6)  # unaligned
    np.testing.assert_allclose(ember.where(g > 0, g, 0.0).cpu().numpy(), np.where(a > 0, a, 0), rtol=1e-6)
    g.mul_(3)
    np.testing.assert_allclose(g.cpu().numpy(), a * 3, rtol=1e-6)


def test_random_fills_on_the_gpu():
    ember.manual_seed(5)
    u = ember.rand(1_000_000, device="cuda")
    ember.manual_seed(5)
    u_cpu = ember.rand(1_000_000)
    # uniform uses no transcendental functions: the same stream gives the same numbers.
    np.testing.assert_array_equal(u.cpu().numpy(), u_cpu.numpy())
    n = ember.randn(1_000_001, device="cuda").cpu().numpy().astype(np.float64)
    assert abs(n.mean()) < 5e-3 and abs(n.std() - 1) < 5e-3
    b = ember.empty(1_000_000, device="cuda").bernoulli_(0.3).cpu().numpy()
    assert abs(b.mean() - 0.3) < 3e-3
    r = ember.randint(0, 10, (100_000,), device="cuda").cpu().numpy()
    assert r.min() == 0 and r.max() == 9
    h = ember.randn(1001, device="cuda", dtype=ember.bfloat16).float().cpu().numpy()
    assert np.isfinite(h).all()
    t = ember.empty(10, 10, device="cuda").t()
    t.uniform_(2, 3)
    assert ((t.cpu().numpy() >= 2) & (t.cpu().numpy() < 3)).all()


def test_softmax_over_a_long_and_an_inner_dim():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 5000)).astype(np.float32)
    cpu, gpu = both(a)
    np.testing.assert_allclose(gpu.softmax(1).cpu().numpy(), cpu.softmax(1).numpy(), rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(gpu.log_softmax(0).cpu().numpy(), cpu.log_softmax(0).numpy(), rtol=1e-4, atol=1e-5)


def test_zz_report_ops_without_cuda_kernels(capsys):
    """Lists the rows that xfailed for want of a CUDA kernel (informational)."""
    with capsys.disabled():
        print(f"\nrows without a CUDA kernel: {len(MISSING)} of {len(ROWS)}")
        for row, why in sorted(MISSING.items()):
            print(f"  {row}: {why}")
