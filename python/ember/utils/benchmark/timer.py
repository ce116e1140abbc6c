"""Timer: times a Python statement as torch.utils.benchmark.Timer does, with
ember's thread count set to `num_threads` (1 by default, as torch) while it
measures and the GPU synchronized around each timed block when there is one."""
import textwrap
import timeit

import ember
from ember.utils.benchmark.common import Measurement, TaskSpec

__all__ = ["Timer"]


def _synchronized_timer():
    """timeit's clock, after the queued GPU work is done (when a GPU is used)."""
    if ember._C._cuda.is_available():
        ember.cuda.synchronize()
    return timeit.default_timer()


class Timer:
    """Timer(stmt, setup, global_setup, timer, globals, label, sub_label,
    description, env, num_threads): `stmt` and `setup` are Python source
    (or callables), run with `globals` (plus ``ember``)."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=None, globals=None,  # noqa: A002
                 label=None, sub_label=None, description=None, env=None, num_threads=1, language="python"):
        if str(getattr(language, "name", language)).lower() != "python":
            raise ValueError(f"ember.utils.benchmark.Timer: only Python statements can be timed, got {language!r}")
        if not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"ember.utils.benchmark.Timer: num_threads must be a positive int, got {num_threads!r}")
        self._globals = dict(globals or {})
        self._globals.setdefault("ember", ember)
        if global_setup:
            exec(textwrap.dedent(global_setup), self._globals)  # noqa: S102  (the caller's own setup code)
        self._stmt = textwrap.dedent(stmt).strip() if isinstance(stmt, str) else stmt
        self._setup = textwrap.dedent(setup).strip() if isinstance(setup, str) else setup
        self._timer = timeit.Timer(stmt=self._stmt, setup=self._setup, timer=timer or _synchronized_timer,
                                   globals=self._globals)
        self._task_spec = TaskSpec(
            stmt=self._stmt if isinstance(self._stmt, str) else getattr(self._stmt, "__name__", repr(self._stmt)),
            setup=self._setup if isinstance(self._setup, str) else getattr(self._setup, "__name__", "setup"),
            global_setup=global_setup, label=label, sub_label=sub_label, description=description, env=env,
            num_threads=num_threads)

    def _run(self, number):
        """Seconds for `number` executions, with ember on num_threads threads."""
        before = ember.get_num_threads()
        ember.set_num_threads(self._task_spec.num_threads)
        try:
            return self._timer.timeit(number=number)
        finally:
            ember.set_num_threads(before)

    def _measurement(self, number, times):
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def timeit(self, number=1000000):
        """One measurement of `number` executions (after a short warm-up)."""
        self._run(max(number // 100, 2))
        return self._measurement(number, [self._run(number)])

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("ember.utils.benchmark.Timer.repeat: use timeit() or blocked_autorange()")

    def autorange(self, callback=None):
        raise NotImplementedError("ember.utils.benchmark.Timer.autorange: use blocked_autorange()")

    def _block_size(self, min_run_time):
        """The smallest power of 10 of executions whose block takes 10 ms (so the
        clock's own cost is negligible), or min_run_time when that is shorter."""
        min_block_time = min(max(min_run_time / 1000, 0.01), min_run_time)
        number = 1
        while True:
            if self._run(number) >= min_block_time or number >= 10**9:
                return number
            number *= 10

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of a fixed number of executions (a power of 10, so a block takes
        at least 10 ms or min_run_time), repeated until min_run_time seconds were
        measured; one time per block."""
        number = self._block_size(min_run_time)
        times, total = [], 0.0
        while total < min_run_time or not times:
            t = self._run(number)
            times.append(t)
            total += t
            if callback is not None:
                callback(number, t)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Blocks as blocked_autorange, until the IQR is under `threshold` times the
        median (after at least min_run_time seconds and 4 blocks) or max_run_time
        seconds have been measured."""
        number = self._block_size(min_run_time)
        times, total = [], 0.0
        while True:
            t = self._run(number)
            times.append(t)
            total += t
            if callback is not None:
                callback(number, t)
            if total >= max_run_time:
                break
            if total >= min_run_time and len(times) >= 4:
                if self._measurement(number, times).meets_confidence(threshold):
                    break
        return self._measurement(number, times)
