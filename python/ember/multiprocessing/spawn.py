"""Starting worker processes that run fn(i, *args), as torch.multiprocessing.spawn.

Each child writes the traceback of an exception it raised to a file of its own
before exiting with code 1, so the parent can report the child's own traceback.
The parent waits on the children's sentinels; when one fails, the others are
sent SIGTERM, then SIGKILL after a grace period, and the failure is raised.
"""
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException",
           "ProcessSpawnContext", "SpawnContext", "spawn", "start_processes"]

# Seconds the others get between SIGTERM and SIGKILL after one process failed (torch waits 30).
_DEFAULT_GRACE_PERIOD = 30.0


class ProcessException(Exception):
    """A worker process failed; `error_index` is its rank, `error_pid` its pid."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A worker's fn raised; the message carries the worker's traceback."""


class ProcessExitedException(ProcessException):
    """A worker exited with a non-zero code or was killed by a signal without raising in fn."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _die_with_parent():
    """Asks Linux to SIGINT this process when its parent dies, so no worker outlives a killed parent."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, int(signal.SIGINT), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _write_traceback(path):
    # Written to a temporary name and renamed, so the parent never reads half a file.
    partial = path + ".partial"
    with open(partial, "w", encoding="utf-8") as f:
        f.write(traceback.format_exc())
    os.replace(partial, path)


def _run_worker(fn, i, args, error_file):
    """The child's entry point: fn(i, *args), reporting an exception through error_file."""
    _die_with_parent()
    parent = os.getppid()
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        # SIGINT from a dead parent needs no report; a user's Ctrl-C in a live parent does.
        if os.getppid() == parent:
            _write_traceback(error_file)
        sys.exit(128 + int(signal.SIGINT))
    except Exception:
        _write_traceback(error_file)
        sys.exit(1)


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"<Unknown signal {number}>"


class ProcessContext:
    """The processes start_processes started; join() waits for them and raises the first failure."""

    def __init__(self, processes, error_files):
        self.processes = processes
        self.error_files = error_files
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout):
        deadline = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))

    def _stop_others(self, grace_period):
        if grace_period is not None:  # a chance to finish on their own first
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        self._join_all(_DEFAULT_GRACE_PERIOD if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                p.kill()
            p.join()

    def _failure(self, index):
        p = self.processes[index]
        path = self.error_files[index]
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                trace = f.read()
            msg = f"\n\n-- Process {index} terminated with the following error:\n{trace}"
            return ProcessRaisedException(msg, index, p.pid)
        code = p.exitcode
        if code < 0:
            name = _signal_name(-code)
            return ProcessExitedException(f"process {index} terminated with signal {name}", index, p.pid,
                                          exit_code=code, signal_name=name)
        return ProcessExitedException(f"process {index} terminated with exit code {code}", index, p.pid,
                                      exit_code=code)

    def join(self, timeout=None, grace_period=None):
        """Waits up to `timeout` seconds (forever with None) for a process to exit.

        Returns True once every process has exited with code 0, False while some still run.
        When one failed, stops the others (SIGTERM, then SIGKILL after `grace_period`
        seconds, 30 by default) and raises ProcessRaisedException (fn raised: the message
        holds the child's traceback) or ProcessExitedException (it died or called exit)."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            p = self.processes[index]
            p.join()
            if p.exitcode != 0:
                failed = index
                break
        if failed is None:
            if not self.sentinels:
                self._cleanup()
            return not self.sentinels
        self._stop_others(grace_period)
        error = self._failure(failed)
        self.sentinels.clear()
        self._cleanup()
        raise error

    def _cleanup(self):
        folder = getattr(self, "_error_dir", None)
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
            self._error_dir = None


class SpawnContext(ProcessContext):
    """The pre-1.4 name of ProcessContext (torch warns on use, as here)."""

    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


# torch.multiprocessing.ProcessSpawnContext is the same class under another name.
ProcessSpawnContext = ProcessContext


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts `nprocs` processes with `start_method` ("spawn", "fork" or "forkserver"), each
    running fn(i, *args). With join=True waits for all and returns None (raising the first
    failure); with join=False returns the ProcessContext."""
    mp = multiprocessing.get_context(start_method)
    error_dir = tempfile.mkdtemp(prefix="ember-mp-errors-")
    error_files = [os.path.join(error_dir, f"rank{i}.traceback") for i in range(nprocs)]
    processes = []
    try:
        for i in range(nprocs):
            p = mp.Process(target=_run_worker, args=(fn, i, tuple(args), error_files[i]), daemon=daemon)
            p.start()
            processes.append(p)
    except BaseException:
        for p in processes:  # a later start failed (unpicklable args, ...): stop the started ones
            p.kill()
            p.join()
        shutil.rmtree(error_dir, ignore_errors=True)
        raise
    context = ProcessContext(processes, error_files)
    context._error_dir = error_dir
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Spawns `nprocs` processes running fn(i, *args), as torch.multiprocessing.spawn.

    fn must be defined at the top level of a module (it is pickled by name). If one process
    fails, the others are stopped and ProcessRaisedException / ProcessExitedException is
    raised. Returns None with join=True, else the ProcessContext. Always uses "spawn";
    another start_method warns (FutureWarning) and is ignored, as in torch."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t ember.multiprocessing.start_processes(...)",
                      FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
