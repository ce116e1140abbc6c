"""Randomized fuzz test over every op case of the test suite.

Every tests/python/test_*.py module that defines a module-level CASES list
(OpCase rows, see harness.py) is imported, so families added later are
picked up automatically. With a fixed seed, a few thousand random calls are
made: a random case, on shapes that are mostly the case's own (sometimes
0-sized variants of them, sometimes random and likely invalid ones incl. 0-d),
random dtypes (including ones the op may reject) and random non-contiguous
layouts (transposed, sliced with an offset, permuted, stride-0 expanded).

Each call must either match the case's numpy_fn (when numpy succeeds and the
dtype is one the case lists) or raise one of the Python exceptions ember
uses; on the case's own shapes and dtypes it must not raise at all. Some calls
also run backward through the result. The calls run in a child process, so a
crash is reported with the op and inputs that caused it, and the child is
restarted after the crashing call so one crash does not hide the rest.

A row opts out with extra={"fuzz": False}, or limits the layouts it is given
with extra={"fuzz_layouts": [...]} (decompositions whose vectors a rank-1
"expanded" input leaves ambiguous). Off the CPU (EMBER_TEST_DEVICE), a call
in a dtype the row lists in extra={"cpu_only_dtypes": [...]} may raise.

Environment: EMBER_FUZZ_CALLS (default 4000) and EMBER_FUZZ_SEED (default 1234).
"""
import glob
import importlib
import os
import subprocess
import sys
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CALLS = int(os.environ.get("EMBER_FUZZ_CALLS", "4000"))
SEED = int(os.environ.get("EMBER_FUZZ_SEED", "1234"))
ALLOWED = (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError)
# numpy dtypes the fuzzer draws from, plus "bfloat16" (built through float32).
ALL_DTYPES = [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int32, np.int64, np.bool_, "bfloat16"]
LAYOUTS = ["contiguous", "transposed", "transposed_view", "sliced", "permuted", "expanded"]


# ---- discovery

def discover_cases(paths=None, include_unfuzzed=False):
    """(module name, OpCase) for every CASES row of the suite's test modules
    (or of the modules at `paths`), and the modules that failed to import.
    Rows with extra={"fuzz": False} are left out unless `include_unfuzzed`
    (the device checks, test_case_devices.py and test_cuda_ops.py, want them)."""
    if paths is None:
        paths = [p for p in sorted(glob.glob(os.path.join(HERE, "test_*.py")))
                 if os.path.basename(p) != "test_fuzz.py"]
    cases, broken = [], []
    for path in paths:
        folder, name = os.path.split(os.path.splitext(os.path.abspath(path))[0])
        for d in (HERE, folder):
            if d not in sys.path:
                sys.path.insert(0, d)
        try:
            module = importlib.import_module(name)
        except Exception:  # a module that does not import is a failure of its own
            broken.append(f"{name}: {traceback.format_exc(limit=2)}")
            continue
        for case in getattr(module, "CASES", None) or []:
            if include_unfuzzed or getattr(case, "extra", {}).get("fuzz", True):
                cases.append((name, case))
    return cases, broken


# ---- one random call, a pure function of (seed, index)

class Call:
    """shape_kind: "case" (the case's own shapes), "zero" (those with a
    dimension set to 0) or "random". numpy references often bake in the
    shapes they were written for (a chunk size, 0-d handling that differs
    from torch's), so values are compared for "case" and "zero" only."""

    def __init__(self, module, case, shapes, dtypes, layouts, shape_kind, listed_dtype, backward):
        self.module, self.case, self.shapes, self.dtypes = module, case, shapes, dtypes
        self.layouts, self.shape_kind, self.backward = layouts, shape_kind, backward
        self.strict = shape_kind == "case" and listed_dtype  # must not raise

    def describe(self):
        ins = ", ".join(f"{_dtype_name(d)}{list(s)}:{lay}" for s, d, lay in zip(self.shapes, self.dtypes, self.layouts))
        return f"{self.module}::{self.case.name}({ins}) [{self.shape_kind} shapes{', backward' if self.backward else ''}]"


def _dtype_name(d):
    return d if isinstance(d, str) else np.dtype(d).name


def _random_shape(rng):
    ndim = int(rng.choice([0, 1, 1, 2, 2, 3, 4]))
    return tuple(int(rng.choice([0, 1, 1, 2, 3, 4, 5])) for _ in range(ndim))


def _zero_sized(shapes, rng):
    """The case's shapes with one aligned (from the right) dimension set to 0
    wherever it is not a broadcast 1: still broadcast-compatible."""
    ndim = max((len(s) for s in shapes), default=0)
    if ndim == 0:
        return shapes
    k = int(rng.integers(1, ndim + 1))  # dimension counted from the right
    out = []
    for s in shapes:
        s = list(s)
        if len(s) >= k and s[-k] != 1:
            s[-k] = 0
        out.append(tuple(s))
    return out


def make_call(cases, seed, index):
    rng = np.random.default_rng([seed, index])
    module, case = cases[int(rng.integers(len(cases)))]
    shapes = [tuple(s) for s in case.shapes[int(rng.integers(len(case.shapes)))]]
    mode = rng.random()
    shape_kind = "case"
    if 0.65 <= mode < 0.8:
        shape_kind, shapes = "zero", _zero_sized(shapes, rng)
    elif mode >= 0.8:
        shape_kind, shapes = "random", [_random_shape(rng) for _ in shapes]
    listed_dtype = rng.random() < 0.75
    if listed_dtype:
        dt = case.dtypes[int(rng.integers(len(case.dtypes)))]
        dtypes = [dt] * len(shapes)
    else:
        if rng.random() < 0.6:
            dtypes = [ALL_DTYPES[int(rng.integers(len(ALL_DTYPES)))]] * len(shapes)
        else:
            dtypes = [ALL_DTYPES[int(rng.integers(len(ALL_DTYPES)))] for _ in shapes]
    allowed = getattr(case, "extra", {}).get("fuzz_layouts", LAYOUTS)  # a row may rule layouts out
    layouts = [allowed[int(rng.integers(len(allowed)))] if rng.random() < 0.6 else "contiguous" for _ in shapes]
    backward = bool(getattr(case, "grad", False)) and rng.random() < 0.15
    # A dtype the row marks CPU-only may raise on another device: the call is then not strict.
    from harness import runs_on_device  # imports ember, as the rest of this file does, lazily
    listed_here = listed_dtype and all(runs_on_device(case, d) for d in dtypes)
    return Call(module, case, shapes, dtypes, layouts, shape_kind, listed_here, backward), rng


def _values(shape, dtype, domain, rng):
    if isinstance(dtype, str):  # bfloat16: float32 values, rounded by the cast
        dtype = np.float32
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        low, high = -5, 6
        if domain is not None and np.ceil(domain[0]) <= np.floor(domain[1]):
            low, high = int(np.ceil(domain[0])), int(np.floor(domain[1])) + 1
        info = np.iinfo(dtype)
        low, high = max(low, info.min), min(high, info.max + 1)
        return rng.integers(low, high, size=shape).astype(dtype)
    low, high = domain or (-2.0, 2.0)
    return rng.uniform(low, high, size=shape).astype(dtype)


def build_inputs(call, rng):
    """numpy arrays (the reference's inputs) and ember tensors holding the
    same values in the chosen layouts."""
    import ember
    device = os.environ.get("EMBER_TEST_DEVICE", "cpu")
    arrays, tensors = [], []
    for shape, dtype, layout in zip(call.shapes, call.dtypes, call.layouts):
        a = _values(shape, dtype, call.case.domain, rng)
        nd = a.ndim
        t = None
        if layout == "expanded" and nd >= 1 and a.shape[0] > 1:
            a = np.ascontiguousarray(np.broadcast_to(a[:1], a.shape))  # rows equal, so expand() can build it
            t = ember.tensor(a[:1]).expand(*a.shape)
        elif layout == "transposed" and nd >= 2:
            t = ember.from_numpy(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
        elif layout == "transposed_view" and nd >= 2:
            t = ember.from_numpy(np.swapaxes(np.ascontiguousarray(np.swapaxes(a, 0, -1)), 0, -1))
        elif layout == "sliced" and nd >= 1:
            d = int(rng.integers(nd))
            padded_shape = list(a.shape)
            padded_shape[d] = 2 * a.shape[d] + 1
            buf = np.zeros(padded_shape, dtype=a.dtype)
            index = [slice(None)] * nd
            index[d] = slice(1, None, 2)  # offset 1, stride 2
            buf[tuple(index)] = a
            t = ember.from_numpy(buf[tuple(index)])
        elif layout == "permuted" and nd >= 3:
            order = list(rng.permutation(nd))
            inverse = list(np.argsort(order))
            t = ember.from_numpy(np.ascontiguousarray(a.transpose(order)).transpose(inverse))
        if t is None:
            t = ember.tensor(a)
        if isinstance(dtype, str):
            t = t.to(ember.bfloat16)
        if device != "cpu":
            t = t.to(device)
        arrays.append(a)
        tensors.append(t)
    return arrays, tensors


# ---- checking one call

def _to_numpy(x):
    import ember
    if isinstance(x, ember.Tensor):
        x = x.detach().cpu()
        if x.dtype == ember.bfloat16:
            x = x.float()
        return x.numpy()
    return np.asarray(x)


def _compare(got, expected, case, dtype, path="output"):
    """None when equal, else a message."""
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return f"{path}: expected a sequence of {len(expected)} results, got {type(got).__name__}"
        for i, (g, e) in enumerate(zip(got, expected)):
            msg = _compare(g, e, case, dtype, f"{path}[{i}]")
            if msg:
                return msg
        return None
    g, e = _to_numpy(got), np.asarray(expected)
    if g.shape != e.shape:
        return f"{path}: shape {g.shape}, expected {e.shape}"
    if e.dtype == np.bool_ or np.issubdtype(e.dtype, np.integer):
        if not np.array_equal(g.astype(np.float64), e.astype(np.float64)):
            return f"{path}: values differ\n got {g.tolist()}\n expected {e.tolist()}"
        return None
    rtol, atol = case.rtol, case.atol
    if not isinstance(dtype, str) and np.dtype(dtype) == np.float16:
        rtol, atol = max(rtol, 1e-2), max(atol, 1e-2)
    if not np.allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True):
        return f"{path}: values differ\n got {g.tolist()}\n expected {e.tolist()}"
    return None


def run_call(call, rng, stats):
    """None when the call behaved, else a failure message. Counts what was
    checked in `stats`, so a vacuous fuzz run can be noticed."""
    import ember
    arrays, tensors = build_inputs(call, rng)
    try:
        with np.errstate(all="ignore"):
            expected = call.case.numpy_fn(*[a.copy() for a in arrays])
        numpy_error = None
    except Exception as e:  # numpy rejects the inputs: ember only has to fail cleanly
        expected, numpy_error = None, e
    try:
        got = call.case.ember_fn(*tensors)
    except ALLOWED as e:
        stats["raised"] += 1
        if call.strict and numpy_error is None:
            return f"raised {type(e).__name__} on the case's own shapes and dtypes: {e}"
        return None
    except Exception as e:
        return f"raised {type(e).__name__} (not one of ember's exception types): {e}"
    # Only compare values for dtypes the case lists and numpy computes.
    listed = all(not isinstance(d, str) and any(np.dtype(d) == np.dtype(c) for c in call.case.dtypes
                                                if not isinstance(c, str)) for d in call.dtypes)
    if numpy_error is None and listed and call.shape_kind != "random":
        stats["compared"] += 1
        msg = _compare(got, expected, call.case, call.dtypes[0])
        if msg:
            return msg
    if call.backward:
        stats["backward"] += 1
        return run_backward(call, tensors, stats)
    return None


def run_backward(call, tensors, stats):
    """Gradients through the op on floating leaves: no crash, right shapes."""
    import ember
    leaves = []
    for t in tensors:
        if t.is_leaf and t.is_floating_point() and t.dtype != ember.bfloat16:
            t.requires_grad_(True)
            leaves.append(t)
    if not leaves:
        return None
    try:
        out = call.case.ember_fn(*tensors)
        if not isinstance(out, ember.Tensor) or not out.requires_grad:
            return None
        out.sum().backward()
    except ALLOWED:
        return None
    except Exception as e:
        return f"backward raised {type(e).__name__} (not one of ember's exception types): {e}"
    for i, t in enumerate(leaves):
        if t.grad is not None and (t.grad.shape != t.shape or t.grad.dtype != t.dtype):
            return (f"backward: gradient of input {i} has shape {t.grad.shape} {t.grad.dtype}, "
                    f"expected {t.shape} {t.dtype}")
    # float64 on the case's shapes: the gradients must also be right, in
    # whatever layout the inputs came.
    if call.shape_kind != "random" and all(not isinstance(d, str) and np.dtype(d) == np.float64
                                           for d in call.dtypes):
        stats["gradcheck"] += 1
        try:
            ember.autograd.gradcheck(call.case.ember_fn, tensors)
        except ember.autograd.GradcheckError as e:
            return f"gradcheck failed: {str(e)[:1500]}"
        except ALLOWED:
            return None
    return None


# ---- child process: runs calls [start, stop), reporting as it goes

def child_main(seed, start, stop, paths=None):
    import faulthandler
    import warnings
    faulthandler.enable()  # a crash prints the Python stack to stderr
    warnings.simplefilter("ignore")  # numpy's warnings on empty/odd inputs would bury it
    cases, _ = discover_cases(paths)
    stats = {"compared": 0, "raised": 0, "backward": 0, "gradcheck": 0}
    out = sys.stdout
    for index in range(start, stop):
        call, rng = make_call(cases, seed, index)
        out.write(f"START {index} {call.describe()}\n")
        out.flush()
        try:
            msg = run_call(call, rng, stats)
        except Exception:  # a bug in the fuzzer or in building inputs
            msg = "fuzzer error: " + traceback.format_exc(limit=4)
        if msg:
            out.write(f"FAIL {index} {call.describe()}: {msg}".replace("\n", "\\n") + "\n")
    out.write("STATS " + " ".join(f"{k}={v}" for k, v in stats.items()) + "\nDONE\n")
    out.flush()


def run_children(seed, calls, paths=None, timeout=240):
    """Runs all calls in child processes, restarting after a crash; returns
    the failure messages. `paths`: test modules to take CASES from."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([HERE] + sys.path))
    failures, start = [], 0
    stats = {}
    while start < calls:
        try:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), str(seed), str(start), str(calls)]
                                  + list(paths or []),
                                  capture_output=True, text=True, timeout=timeout, env=env)
            stdout, stderr, rc = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            stderr, rc = "timed out (hang?)", None
        last = None
        for line in stdout.splitlines():
            if line.startswith("START "):
                last = line[len("START "):]
            elif line.startswith("FAIL "):
                failures.append(line[len("FAIL "):].replace("\\n", "\n"))
            elif line.startswith("STATS "):
                for item in line.split()[1:]:
                    k, v = item.split("=")
                    stats[k] = stats.get(k, 0) + int(v)
        if "DONE" in stdout.splitlines():
            break
        if last is None:
            failures.append(f"fuzz child died before its first call (rc={rc}):\n{stderr[-3000:]}")
            break
        index, desc = last.split(" ", 1)
        failures.append(f"CRASH (rc={rc}) in call {index}: {desc}\n{stderr[-2000:]}")
        start = int(index) + 1
    return failures, stats


def test_fuzz_all_cases():
    cases, broken = discover_cases()
    assert not broken, "test modules that do not import:\n" + "\n".join(broken)
    assert cases, "no CASES found"
    failures, stats = run_children(SEED, CALLS)
    report = "\n\n".join(failures[:40])
    assert not failures, f"{len(failures)} of {CALLS} fuzz calls failed (seed {SEED}):\n\n{report}"
    # Not vacuous: a good share of the calls was checked against numpy.
    assert stats.get("compared", 0) > CALLS // 4, stats


def test_fuzz_detects_a_crash_and_a_wrong_answer(tmp_path):
    """The harness itself: a segfaulting call and a wrong result are both reported."""
    module = tmp_path / "fake_cases.py"
    module.write_text(
        "import ctypes\n"
        "from harness import OpCase\n"
        "CASES = [OpCase('wrong', lambda a: a * 2, lambda a: a * 3, [[(2,)]], grad=False),\n"
        "         OpCase('crash', lambda a: ctypes.string_at(0), lambda a: a, [[(2,)]], grad=False)]\n")
    failures, _ = run_children(1, 8, paths=[str(module)])
    text = "\n".join(failures)
    assert "fake_cases::wrong" in text and "values differ" in text, text
    # each crash is reported and the child restarted after it
    assert sum(f.startswith("CRASH") and "fake_cases::crash" in f for f in failures) >= 2, text


if __name__ == "__main__":
    child_main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:] or None)
