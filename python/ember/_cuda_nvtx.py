"""ember.cuda.nvtx: NVTX ranges and markers for Nsight Systems, as
torch.cuda.nvtx. NVTX does nothing until a profiler is attached; a
CPU-only build of ember raises RuntimeError."""
import contextlib

from ember import _C

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]

_cuda = _C._cuda


def range_push(msg):
    """Opens a nested range named msg on this thread; returns its zero-based depth."""
    return _cuda.nvtx_range_push(str(msg))


def range_pop():
    """Closes this thread's innermost range; returns the depth it had."""
    return _cuda.nvtx_range_pop()


def range_start(msg):
    """Starts a range that may end on another thread; returns its id for range_end."""
    return _cuda.nvtx_range_start(str(msg))


def range_end(range_id):
    _cuda.nvtx_range_end(int(range_id))


def mark(msg):
    """An instantaneous event named msg."""
    _cuda.nvtx_mark(str(msg))


@contextlib.contextmanager
def range(msg, *args, **kwargs):  # noqa: A001  (torch.cuda.nvtx.range)
    """A range around a block (or a decorated function): msg.format(*args, **kwargs)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
