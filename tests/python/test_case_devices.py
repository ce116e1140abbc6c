"""The op tables are device-agnostic: every OpCase row that test_cuda_ops.py
(and the fuzz test under EMBER_TEST_DEVICE=cuda) runs on CUDA builds its
constant tensors on its input's device, so a GPU run fails only for kernel
bugs, never for a row that mixes a CUDA input with a CPU constant.

Runs without a GPU. Two checks per row:
- at call time: every row's ember_fn runs on CPU inputs (all its shapes and
  dtypes) while ember's factory functions (ember.tensor, zeros, arange, ...)
  are watched. A tensor made without `device=` inside the call (by the
  lambda, a test helper it calls, or ember's own Python code such as an
  nn.functional composition) must be moved with `.to(<device or
  tensor>)` / `.cuda()` before the call returns; a call to harness.make()
  inside a row is refused too (it builds on harness.DEVICE, not the input's
  device). `.numpy()` / `np.asarray()` of a tensor that did not come from
  `.cpu()` is refused as well (PyTorch refuses it for a GPU tensor).
- at definition time: tensors, or nn.Modules holding parameters, that the
  row's ember_fn reaches through globals or closures (also through the test
  module's helper functions it calls) are refused: they were built on the
  CPU once, at import.
Fix a row with `device=x.device` on the factory call (or `ember.full_like`
and friends), or take the constant as one more input.
"""
import glob
import os
import sys
import types

import numpy as np
import pytest

import ember
import harness
from harness import OpCase, random_array
from test_fuzz import discover_cases

HERE = os.path.dirname(os.path.abspath(__file__))
TEST_DIRS = {HERE}  # where the rows' helper functions live (followed into by the capture check)
FACTORIES = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "arange", "linspace", "eye",
             "rand", "randn", "randint", "randperm", "normal"]

# Rows allowed to build a CPU tensor, and why. Keep each reason true.
ALLOWED = {
    # Advanced indexing takes CPU index tensors for a tensor on any device,
    # as PyTorch does (ember range-checks them on the CPU, then moves them).
    **{f"test_index:getitem_{n}": "a CPU index tensor is valid for a CUDA tensor in indexing"
       for n in ("tensor_2d", "adjacent_tensors", "nonadjacent_tensors", "broadcast_tensors", "mask",
                 "mask_dim1", "mask_and_slice", "int_tensor_0d", "int_dtypes")},
}


def collect_rows(paths=None):
    if paths is None:
        skip = {"test_fuzz.py", os.path.basename(__file__)}
        paths = [p for p in sorted(glob.glob(os.path.join(HERE, "test_*.py"))) if os.path.basename(p) not in skip]
    TEST_DIRS.update(os.path.dirname(os.path.abspath(p)) for p in paths)
    rows, broken = discover_cases(paths, include_unfuzzed=True)  # rows the fuzz test skips run on CUDA too
    return [(m, c) for m, c in rows if isinstance(c, OpCase)], broken


# ---- call-time check: factory calls without device= inside a row

class FactoryWatch:
    """While active, records ember tensors made by factory functions without
    an explicit device and forgets those later moved with .to(device)/.cuda(),
    and records .numpy() / np.asarray() of a tensor that did not come from
    .cpu() (on CUDA the row's tensors are on the GPU)."""

    def __init__(self):
        self.pending = {}  # id -> (tensor, where); the tensor is kept alive so ids stay unique
        self.on_host = {}  # id -> tensor: results of .cpu() / .to("cpu")
        self.reads = set()
        self.saved = []

    @staticmethod
    def _where(depth=2):
        frame = sys._getframe(depth)
        return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"

    def _factory(self, name, fn):
        def watched(*args, **kwargs):
            out = fn(*args, **kwargs)
            if kwargs.get("device") is None and isinstance(out, ember.Tensor):
                self.pending[id(out)] = (out, f"ember.{name}() without device= at {self._where()}")
            return out
        return watched

    def _make(self, fn):
        def watched(*args, **kwargs):
            out = fn(*args, **kwargs)
            self.pending[id(out)] = (out, f"harness.make() (builds on harness.DEVICE) at {self._where()}")
            return out
        return watched

    def _mover(self, fn, always):
        watch = self

        def watched(self, *args, **kwargs):
            out = fn(self, *args, **kwargs)
            moves = always or "device" in kwargs or any(
                isinstance(a, (ember.device, ember.Tensor)) or (isinstance(a, str)) for a in args)
            if moves:
                watch.pending.pop(id(self), None)
            to_cpu = fn.__name__ == "cpu" or str(kwargs.get("device", "")).startswith("cpu") or any(
                str(a).startswith("cpu") for a in args if isinstance(a, (str, ember.device)))
            if to_cpu and isinstance(out, ember.Tensor):
                watch.on_host[id(out)] = out
            return out
        return watched

    def _reader(self, fn, name):
        watch = self

        def watched(self, *args, **kwargs):
            if id(self) not in watch.on_host:
                watch.reads.add(f"Tensor.{name}() of a tensor not moved with .cpu() at {watch._where()}")
            return fn(self, *args, **kwargs)
        return watched

    def __enter__(self):
        for name in FACTORIES:
            self._patch(ember, name, self._factory(name, getattr(ember, name)))
        self._patch(ember.Tensor, "to", self._mover(ember.Tensor.to, False))
        self._patch(ember.Tensor, "cuda", self._mover(ember.Tensor.cuda, True))
        self._patch(ember.Tensor, "cpu", self._mover(ember.Tensor.cpu, False))
        for name in ("numpy", "__array__"):
            self._patch(ember.Tensor, name, self._reader(getattr(ember.Tensor, name), name))
        make = harness.make
        watched_make = self._make(make)
        for module in list(sys.modules.values()):  # test modules bound make at import
            if getattr(module, "make", None) is make:
                self._patch(module, "make", watched_make)
        return self

    def _patch(self, owner, name, value):
        self.saved.append((owner, name, owner.__dict__[name] if name in owner.__dict__ else getattr(owner, name)))
        setattr(owner, name, value)

    def __exit__(self, *exc):
        for owner, name, value in reversed(self.saved):
            setattr(owner, name, value)
        self.saved.clear()
        return False

    def take(self):
        found = sorted({where for _, where in self.pending.values()} | self.reads)
        self.pending.clear()
        self.on_host.clear()
        self.reads.clear()
        return found


def call_time_problems(case):
    problems = set()
    with FactoryWatch() as watch:
        for shapes in case.shapes:
            for dtype in case.dtypes:
                inputs = [ember.tensor(np.array(random_array(s, dtype, case.domain), copy=True)) for s in shapes]
                watch.take()
                try:
                    case.ember_fn(*inputs)
                except Exception:  # noqa: BLE001  the op tables' own tests judge the result
                    pass
                problems.update(watch.take())
    return sorted(problems)


# ---- definition-time check: tensors the row's function captured at import

def _is_test_code(fn):
    code = getattr(fn, "__code__", None)
    return code is not None and os.path.dirname(os.path.abspath(code.co_filename)) in TEST_DIRS


def _names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _held_tensors(value, path, depth=0):
    """(path, description) of CPU-built tensors inside a captured value."""
    if isinstance(value, ember.Tensor):
        return [(path, f"a {list(value.shape)} tensor on {value.device}")]
    if isinstance(value, ember.nn.Module):
        held = list(value.parameters()) + list(value.buffers())
        return [(path, f"an nn.Module with {len(held)} parameters/buffers")] if held else []
    if depth < 3 and isinstance(value, (list, tuple, set, frozenset)):
        return [hit for i, v in enumerate(value) for hit in _held_tensors(v, f"{path}[{i}]", depth + 1)]
    if depth < 3 and isinstance(value, dict):
        return [hit for k, v in value.items() for hit in _held_tensors(v, f"{path}[{k!r}]", depth + 1)]
    return []


def captured_problems(fn, seen=None):
    seen = set() if seen is None else seen
    if id(fn) in seen or not _is_test_code(fn):
        return []
    seen.add(id(fn))
    where = f"{fn.__code__.co_name} ({os.path.basename(fn.__code__.co_filename)}:{fn.__code__.co_firstlineno})"
    values = [(name, fn.__globals__[name]) for name in sorted(_names(fn.__code__)) if name in fn.__globals__]
    values += [(name, cell.cell_contents) for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ())
               if _cell_filled(cell)]
    for default in (fn.__defaults__ or ()) + tuple((fn.__kwdefaults__ or {}).values()):
        values.append(("<default>", default))
    problems = []
    for name, value in values:
        problems += [f"{where} captures {p}: {d}" for p, d in _held_tensors(value, name)]
        if isinstance(value, types.FunctionType):
            problems += captured_problems(value, seen)
    return problems


def _cell_filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def row_problems(case):
    return captured_problems(case.ember_fn) + call_time_problems(case)


ROWS, BROKEN = collect_rows()


@pytest.mark.parametrize("module_case", ROWS, ids=[f"{m}:{c.name}" for m, c in ROWS])
def test_row_builds_its_constants_on_the_inputs_device(module_case):
    module, case = module_case
    row = f"{module}:{case.name}"
    problems = row_problems(case)
    if row in ALLOWED:  # only its CPU-built tensors are allowed, nothing else
        allowed = [p for p in problems if p.startswith("ember.tensor() without device=")]
        problems = [p for p in problems if p not in allowed]
        if allowed and not problems:
            pytest.skip(f"{row}: {ALLOWED[row]}")
    assert not problems, (f"{row} would fail on CUDA for a test reason (build constants with device=x.device or "
                          f"move them with .to(x.device); read tensors through .cpu()):\n  " + "\n  ".join(problems))


def test_the_rows_were_found():
    assert not BROKEN, "\n".join(BROKEN)
    assert len(ROWS) > 200 and len({m for m, _ in ROWS}) >= 10, len(ROWS)


def test_the_check_catches_cpu_constants(tmp_path):
    """A row of each kind of mistake is caught and named; the fixed forms pass."""
    module = tmp_path / "case_devices_sample.py"
    module.write_text(
        "import numpy as np\n"
        "import ember\n"
        "from harness import OpCase, make\n"
        "W = ember.ones(3)\n"
        "def helper(a):\n"
        "    return a + ember.arange(3)\n"
        "CASES = [\n"
        "    OpCase('bad_factory', lambda a: a * ember.tensor([1.0, 2.0, 3.0]), lambda a: a, [[(3,)]]),\n"
        "    OpCase('bad_keyword_none', lambda a: a * ember.zeros(3, device=None), lambda a: a, [[(3,)]]),\n"
        "    OpCase('bad_global', lambda a: a * W, lambda a: a, [[(3,)]]),\n"
        "    OpCase('bad_helper', lambda a: helper(a), lambda a: a, [[(3,)]]),\n"
        "    OpCase('bad_make', lambda a: a * make(np.ones(3)), lambda a: a, [[(3,)]]),\n"
        "    OpCase('bad_cast_then_move', lambda a: a * ember.ones(3).double().to(a.device), lambda a: a, [[(3,)]]),\n"
        "    OpCase('bad_numpy', lambda a: a * float(a.numpy().sum()), lambda a: a, [[(3,)]]),\n"
        "    OpCase('good_cpu_numpy', lambda a: a * float(a.detach().cpu().numpy().sum()), lambda a: a, [[(3,)]]),\n"
        "    OpCase('good_device', lambda a: a * ember.tensor([1.0, 2.0, 3.0], device=a.device), lambda a: a,"
        " [[(3,)]]),\n"
        "    OpCase('good_moved', lambda a: a * ember.ones(3).to(a.device), lambda a: a, [[(3,)]]),\n"
        "    OpCase('good_like', lambda a: a * ember.full_like(a, 2.0) + 1.5, lambda a: a, [[(3,)]]),\n"
        "]\n")
    factory, make = ember.tensor, harness.make
    rows, broken = collect_rows([str(module)])
    assert not broken and len(rows) == 11, broken
    found = {case.name: row_problems(case) for _, case in rows}
    for name in ("bad_factory", "bad_keyword_none", "bad_global", "bad_helper", "bad_make", "bad_cast_then_move",
                 "bad_numpy"):
        assert found[name], f"{name} was not caught"
    assert "ember.tensor() without device=" in found["bad_factory"][0]
    assert "captures W" in found["bad_global"][0]
    assert "ember.arange() without device=" in found["bad_helper"][0]
    assert "harness.make()" in found["bad_make"][0]
    assert "Tensor.numpy() of a tensor not moved with .cpu()" in found["bad_numpy"][0]
    for name in ("good_device", "good_moved", "good_like", "good_cpu_numpy"):
        assert not found[name], f"{name}: {found[name]}"
    # The watch undoes its patches.
    assert ember.tensor is factory and harness.make is make and "watched" not in ember.Tensor.numpy.__name__


def test_the_device_rehearsal_plugin_reports_mixing(tmp_path):
    """sim_device.py (the EMBER_TEST_DEVICE=cuda rehearsal without a GPU)
    fails a test that mixes a harness-made tensor with a CPU-built one or
    reads it with .numpy(), and passes the device-agnostic forms."""
    import subprocess
    sample = tmp_path / "test_sim_sample.py"
    sample.write_text(
        "import ember\n"
        "from harness import make, to_numpy\n"
        "def test_mixes():\n"
        "    x = make([1.0, 2.0])\n"
        "    x + ember.tensor([1.0, 1.0])\n"
        "def test_numpy():\n"
        "    make([1.0, 2.0]).numpy()\n"
        "def test_clean():\n"
        "    x = make([1.0, 2.0])\n"
        "    y = x * ember.ones(2, device=x.device) + ember.tensor(3.0)\n"
        "    assert to_numpy(y.sum()) == 9.0 and y.device.type == 'cuda'\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([HERE, os.path.dirname(os.path.dirname(ember.__file__))]))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "sim_device", "-p", "no:cacheprovider",
                           str(sample)], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert "test_mixes" in out and "mixes a simulated GPU tensor with a CPU tensor of shape [2]" in out, out
    assert "numpy() of a simulated GPU tensor" in out, out
    assert "2 failed, 1 passed" in out, out
