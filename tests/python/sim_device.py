"""A pytest plugin that rehearses `EMBER_TEST_DEVICE=cuda` on a machine
without a GPU, to find tests that would fail there for a test reason (a
harness-made GPU tensor mixed with a CPU-built one, `.numpy()` on a GPU
tensor) rather than for a kernel bug.

    PYTHONPATH=python:tests/python python3 -m pytest -p sim_device tests/python

Everything still runs on the CPU. Tensors made by harness.make (the GPU
inputs under EMBER_TEST_DEVICE=cuda) are marked "simulated GPU"; the mark
follows them through every ember function (the top level, ember.nn.functional,
ember.autograd, ember.linalg, ember.special, ember.fft) and Tensor method (a
result is marked when an input is), `x.device` of a marked tensor reads as a
CUDA device, and factories given that device (or "cuda") make marked tensors.
A call that mixes a marked tensor with an unmarked one of one or more
dimensions (PyTorch refuses those; 0-d CPU tensors are allowed as
scalars, and indexing takes CPU indices), and `.numpy()` / `np.asarray`
of a marked tensor, are recorded; a test with records fails, naming the
first few with the test line that made the call. This is an audit tool, not
part of the suite: its verdicts approximate PyTorch's device rules.

Expected reports that are not test bugs: test_cuda.py's no-GPU tests (the
simulated .cuda() succeeds) and test_case_devices.py's self-test (its
deliberately broken rows mix devices; the real check swallows that).
"""
import functools
import os
import sys

import pytest

import ember
from ember import _out_arg
import harness

MARK = "_sim_gpu"
FACTORIES = {"tensor", "as_tensor", "zeros", "ones", "full", "empty", "arange", "linspace", "eye", "rand", "randn",
             "randint", "randperm", "normal", "zeros_like", "ones_like", "full_like", "empty_like", "rand_like",
             "randn_like", "randint_like"}
# Calls that may take CPU tensors next to GPU ones.
MIXING_ALLOWED = {"__getitem__", "__setitem__", "index_put", "index_put_", "copy_", "to", "type_as", "cpu", "cuda",
                  "tensor", "as_tensor", "__repr__", "__str__", "__format__"}
UNWRAPPED = {"__init__", "__new__", "_pybind11_conduit_v1_", "__repr__", "__hash__", "__len__", "__iter__",
             "__reduce_ex__", "__deepcopy__", "__copy__", "size", "dim", "numel", "nelement", "stride",
             "storage_offset", "element_size", "is_contiguous", "is_floating_point", "data_ptr", "is_inference",
             "register_hook", "_register_hook_raw", "_remove_hook", "register_post_accumulate_grad_hook",
             "_register_post_accumulate_grad_hook", "_remove_post_accumulate_grad_hook", "backward",
             "item", "tolist", "__bool__", "__float__", "__int__", "__index__", "requires_grad_", "retain_grad"}
# Tensor arguments read as Python ints on the host, not operands: PyTorch's
# tensordot takes a CPU `dims` tensor next to CUDA inputs.
HOST_ARGUMENTS = {"dims"}
RECORDS = []
_active = [0]  # nesting depth of wrapped calls (records name calls made inside another)


class SimDevice(ember.device):
    """A CPU device that says it is CUDA."""

    @property
    def type(self):
        return "cuda"

    @property
    def index(self):
        return 0

    def __str__(self):
        return "cuda:0"

    def __repr__(self):
        return "device(type='cuda', index=0)"

    def __eq__(self, other):
        return str(other) in ("cuda", "cuda:0")

    def __hash__(self):
        return hash("cuda:0")


SIM = SimDevice("cpu")


def marked(t):
    return isinstance(t, ember.Tensor) and getattr(t, MARK, False)


def mark(value, on=True):
    if isinstance(value, ember.Tensor):
        try:
            object.__setattr__(value, MARK, on)
        except AttributeError:
            pass
    elif isinstance(value, (list, tuple)):
        for v in value:
            mark(v, on)
    return value


def _is_gpu(device):
    return isinstance(device, SimDevice) or (isinstance(device, str) and device.startswith("cuda")) \
        or (isinstance(device, ember.device) and device.type == "cuda")


def _is_cpu(device):
    return (isinstance(device, str) and device.startswith("cpu")) or \
        (isinstance(device, ember.device) and not isinstance(device, SimDevice) and device.type == "cpu")


def _tensors(args, kwargs):
    out = []
    for a in list(args) + [v for k, v in kwargs.items() if k not in HOST_ARGUMENTS]:
        if isinstance(a, ember.Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out += [x for x in a if isinstance(x, ember.Tensor)]
    return out


def _caller():
    """The innermost frame in a test file (not harness, not this plugin, not ember)."""
    frame = sys._getframe(2)
    here = os.path.dirname(os.path.abspath(__file__))
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if os.path.dirname(path) == here and os.path.basename(path) not in ("sim_device.py", "harness.py"):
            return f"{os.path.basename(path)}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


def _record(what):
    RECORDS.append(f"{what} at {_caller()}")


def _swap_devices(args, kwargs):
    """Arguments with simulated/cuda devices replaced by the CPU; whether any was a GPU."""
    gpu = False

    def fix(a):
        nonlocal gpu
        if _is_gpu(a):
            gpu = True
            return "cpu"
        return a
    args = tuple(fix(a) for a in args)
    kwargs = {k: fix(v) if k == "device" else v for k, v in kwargs.items()}
    return args, kwargs, gpu


def wrap(name, fn):
    if getattr(fn, "_sim_wrapped", False):
        return fn

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if name in ("numpy", "__array__") and args and marked(args[0]):
            _record(f"{name}() of a simulated GPU tensor (use .cpu() first)")
        tensors = _tensors(args, kwargs)
        gpu_in = [t for t in tensors if marked(t)]
        if gpu_in and name not in MIXING_ALLOWED:
            cpu_in = [t for t in tensors if not marked(t) and t.dim() > 0]
            if cpu_in:
                inside = " (inside another ember call)" if _active[0] else ""
                _record(f"{name}(){inside} mixes a simulated GPU tensor with a CPU tensor of shape "
                        f"{list(cpu_in[0].shape)}")
            elif not marked(tensors[0]):
                # PyTorch takes a 0-d CPU tensor anywhere; ember's common_device
                # (core/type_promotion.cpp) takes the first operand's device.
                _record(f"{name}() gets a 0-d CPU tensor before a simulated GPU tensor (PyTorch accepts it; "
                        f"ember's common_device picks the first operand's device)")
        cpu_target = gpu_target = False
        if name in FACTORIES or name in ("to", "cuda", "cpu"):  # other calls take "cuda" as a name (autocast)
            cpu_target = any(_is_cpu(a) for a in args) or _is_cpu(kwargs.get("device"))
            args, kwargs, gpu_target = _swap_devices(args, kwargs)
        tensor_target = (next((a for a in args[1:] if isinstance(a, ember.Tensor)), None)
                         if name in ("to", "type_as") else None)
        _active[0] += 1
        try:
            out = fn(*args, **kwargs)
        finally:
            _active[0] -= 1
        if name in ("cpu",) or (name == "to" and cpu_target):
            return mark(out, False)
        if name == "cuda" or gpu_target:
            return mark(out, True)
        if tensor_target is not None:
            return mark(out, marked(tensor_target))
        if name in FACTORIES and "device" in kwargs:
            return mark(out, False)
        if gpu_in:
            mark(out, True)
        return out
    call._sim_wrapped = True
    return call


def _cuda_method(self, *args, **kwargs):
    return mark(self.clone(), True)


def _property(name, prop):
    def get(self):
        value = prop.__get__(self)
        if name == "device":
            return SIM if marked(self) else value
        if name in ("is_cuda", "is_cpu"):
            return marked(self) == (name == "is_cuda")
        if marked(self) and isinstance(value, ember.Tensor):
            mark(value, True)
        return value
    return property(get, prop.fset, prop.fdel, prop.__doc__)


def _sim_make(array, requires_grad=False, device=None):
    on_gpu = device is None or _is_gpu(device)
    t = _orig_make(array, requires_grad=requires_grad, device="cpu")
    return mark(t, on_gpu)


_orig_make = harness.make


def _owners():
    """The modules whose functions are wrapped. One left out would return
    unmarked results from marked inputs: CPU tensors, as far as the checks can tell."""
    import ember.autograd
    import ember.fft
    import ember.linalg
    import ember.nn.functional
    import ember.special
    return (ember, ember._C, ember._C._nn, ember._C._linalg, ember.nn.functional, ember.autograd, ember.linalg,
            ember.special, ember.fft)


def install():
    for owner in _owners():
        for name, value in list(vars(owner).items()):
            if name.startswith("__") or isinstance(value, type) or not callable(value):
                continue
            out_arg = getattr(value, "_ember_out_arg", None)
            if out_arg:  # watch the function itself, inside its out= wrapper, so that its result is marked
                setattr(owner, name, _out_arg.with_out(wrap(name, value.__wrapped__), *out_arg))
            elif type(value).__name__ in ("builtin_function_or_method", "function"):
                setattr(owner, name, wrap(name, value))
    for name, value in list(vars(ember.Tensor).items()):
        if isinstance(value, property):
            if name in ("device", "is_cuda", "is_cpu", "grad", "data", "T", "mT"):
                setattr(ember.Tensor, name, _property(name, value))
        elif callable(value) and name not in UNWRAPPED:
            setattr(ember.Tensor, name, wrap(name, value))
    ember.Tensor.cuda = wrap("cuda", _cuda_method)
    harness.make = _sim_make
    harness.DEVICE = "cuda"


def pytest_configure(config):
    install()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    RECORDS.clear()
    result = yield  # a failing test raises here and keeps its own failure
    found = list(dict.fromkeys(RECORDS))
    RECORDS.clear()
    if found:
        pytest.fail("would fail under EMBER_TEST_DEVICE=cuda:\n  " + "\n  ".join(found[:5]), pytrace=False)
    return result
