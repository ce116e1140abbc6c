"""Collecting events while a profile is active.

One Recorder at a time (`active`). Each thread keeps a stack of open events, so an
event's parent is the innermost event open on its thread when it began. Wrapped ops,
module calls and record_function regions all go through begin()/end().

With CUDA timing on, begin() synchronizes the GPU before taking the start time and
end() synchronizes again: the GPU is idle when an op starts, so the time until the
sync returns is the op's launch plus its GPU work. This serializes the GPU while
profiling. The syncs happen outside the event's CPU interval and are recorded as
overhead, so a parent's self CPU time does not include its children's waits.
"""
import os
import sys
import threading
import time

active = None  # the Recorder of the running profile, or None

_PROFILER_DIR = os.path.dirname(os.path.abspath(__file__))


# Shapes are kept as tuples while recording: tuples of ints leave the garbage collector's
# tracking, which keeps collections cheap when a profile holds many events.
def _shape_of(value, tensor):
    if isinstance(value, tensor):
        return tuple(value.shape)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, tensor) for v in value):
        return tuple(tuple(v.shape) for v in value)
    return ()


def _input_shapes(args, kwargs):
    from ember._C import Tensor
    try:
        shapes = [_shape_of(a, Tensor) for a in args]
        if kwargs:
            shapes += [_shape_of(v, Tensor) for v in kwargs.values()]
    except Exception:  # a tensor without a shape yet (an uninitialized lazy parameter): record none
        return ()
    return tuple(shapes)


def shapes_as_lists(shapes):
    """torch's form of recorded shapes: nested lists."""
    return [shapes_as_lists(s) if isinstance(s, tuple) else s for s in shapes]


def _caller_stack():
    """The Python call stack outside the profiler, innermost first, as "file(line): function"."""
    frame = sys._getframe(1)
    out = []
    while frame is not None:
        code = frame.f_code
        if not code.co_filename.startswith(_PROFILER_DIR):
            out.append(f"{code.co_filename}({frame.f_lineno}): {code.co_name}")
        frame = frame.f_back
    return out


def _is_cuda(value):
    try:
        return getattr(value, "is_cuda", False) is True
    except Exception:  # an uninitialized lazy parameter raises on every attribute
        return False


def _touches_cuda(value):
    if _is_cuda(value):
        return True
    if isinstance(value, (list, tuple)):
        return any(_is_cuda(v) for v in value)
    return False


class _Open:
    """An event being timed."""
    __slots__ = ("name", "kind", "parent", "start_ns", "end_ns", "device_ns", "memory", "shapes",
                 "stack", "overhead_ns", "enter_ns", "mem0", "cuda", "thread")


class Recorder:
    def __init__(self, record_shapes=False, with_stack=False, time_cuda=False, cuda_memory=False):
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.time_cuda = time_cuda
        self.cuda_memory = cuda_memory
        self.finished = []  # _Open records in the order they ended
        self._local = threading.local()
        self.origin_ns = time.perf_counter_ns()
        self.origin_epoch_us = time.time_ns() / 1000.0  # wall clock at origin_ns, for trace timestamps
        self._pid = os.getpid()  # a forked DataLoader worker records nothing (and must not touch CUDA)
        if time_cuda or cuda_memory:
            import ember.cuda
            self._cuda = ember.cuda

    def _stack(self):
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def begin(self, name, kind, args=(), kwargs=None):
        """Opens an event; kind is "op", "module", "call" (optimizer step, DataLoader batch) or
        "annotation". Returns None for an op or call made directly by one of the same name (a
        method delegating to its function, a step calling its base class's step)."""
        if os.getpid() != self._pid:
            return None
        enter = time.perf_counter_ns()
        stack = self._stack()
        parent = stack[-1] if stack else None
        if kind in ("op", "call") and parent is not None and parent.kind == kind and parent.name == name:
            return None
        ev = _Open()
        ev.name, ev.kind, ev.parent = name, kind, parent
        ev.thread = threading.get_native_id()
        ev.enter_ns = enter
        ev.shapes = _input_shapes(args, kwargs or {}) if self.record_shapes else None
        ev.stack = _caller_stack() if self.with_stack else None
        ev.device_ns = 0
        ev.memory = 0
        if self.time_cuda:
            ev.cuda = kind != "op" or _touches_cuda(args) or _touches_cuda(tuple((kwargs or {}).values()))
            self._cuda.synchronize()
        if self.cuda_memory:
            ev.mem0 = self._cuda.memory_allocated()
        stack.append(ev)
        ev.start_ns = time.perf_counter_ns()
        return ev

    def end(self, ev, result=None):
        if ev is None:
            return
        ev.end_ns = time.perf_counter_ns()
        if self.time_cuda:
            self._cuda.synchronize()
            if ev.cuda or _touches_cuda(result):
                ev.device_ns = time.perf_counter_ns() - ev.start_ns
        if self.cuda_memory:
            ev.memory = self._cuda.memory_allocated() - ev.mem0
        stack = self._stack()
        if stack and stack[-1] is ev:
            stack.pop()
        elif ev in stack:  # closed out of order (a generator, an exception): drop what it enclosed
            del stack[stack.index(ev):]
        ev.overhead_ns = (ev.start_ns - ev.enter_ns) + (time.perf_counter_ns() - ev.end_ns)
        self.finished.append(ev)

    def close_open(self):
        """Ends the events still open on this thread (the profile stopped inside them)."""
        stack = self._stack()
        while stack:
            self.end(stack[-1])


class record_function:
    """Times a region under `name` while a profile is active (nothing otherwise).
    A context manager and a decorator; regions nest."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._event = None
        self._recorder = None

    def __enter__(self):
        recorder = active
        if recorder is not None:
            self._recorder = recorder
            self._event = recorder.begin(self.name, "annotation")
        return self

    def __exit__(self, *exc):
        if self._event is not None:
            self._recorder.end(self._event)
        self._event = self._recorder = None
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def timed(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return timed
