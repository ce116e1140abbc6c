"""What a benchmark measured: TaskSpec (what ran) and Measurement (the times),
as torch.utils.benchmark's, with the same statistics and a similar repr."""
import dataclasses
import math
import statistics

__all__ = ["TaskSpec", "Measurement", "select_unit", "trim_sigfig"]

# The IQR, as a fraction of the median, above which a measurement is flagged as noisy.
_NOISY_IQR = 0.1


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """The statement timed and the labels that describe it."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        """label (with its sub_label) when given, else the statement."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n" + _indent(self.stmt)

    def summarize(self):
        """The header lines of a Measurement's repr."""
        lines = [self.title]
        if self.description:
            lines.append(self.description)
        if self.label is None and self.setup and self.setup != "pass":
            lines.append(f"setup: {self.setup}" if "\n" not in self.setup else "setup:\n" + _indent(self.setup))
        return "\n".join(lines)


def _indent(text):
    return "\n".join("  " + line for line in text.splitlines())


def select_unit(t):
    """(unit, scale) to show t seconds with: ns, us, ms or s."""
    for unit, scale, below in (("ns", 1e-9, 1e-6), ("us", 1e-6, 1e-3), ("ms", 1e-3, 1.0)):
        if t < below:  # literal bounds: scale * 1000 is not exact in floating point
            return unit, scale
    return "s", 1.0


def trim_sigfig(x, n):
    """x rounded to n significant figures."""
    if x == 0 or not math.isfinite(x):
        return x
    magnitude = int(math.floor(math.log10(abs(x))))
    return round(x, n - 1 - magnitude)


def _quantile(sorted_values, q):
    """Linear interpolation between the two nearest ranks (numpy's default)."""
    pos = (len(sorted_values) - 1) * q
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


class Measurement:
    """The times of `number_per_run` executions of a statement, once per entry of
    raw_times. `times` are per execution; mean/median/iqr are over them."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        if not raw_times:
            raise ValueError("Measurement: raw_times is empty")
        self.number_per_run = int(number_per_run)
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata
        self.times = [t / self.number_per_run for t in self.raw_times]
        self._sorted = sorted(self.times)

    # ---- statistics -------------------------------------------------------------------------
    @property
    def median(self):
        return _quantile(self._sorted, 0.5)

    @property
    def mean(self):
        return statistics.fmean(self.times)

    @property
    def iqr(self):
        return _quantile(self._sorted, 0.75) - _quantile(self._sorted, 0.25)

    def meets_confidence(self, threshold=_NOISY_IQR):
        """Whether the IQR is below `threshold` times the median."""
        return self.iqr / self.median < threshold

    @property
    def has_warnings(self):
        return len(self.times) >= 4 and not self.meets_confidence()

    @property
    def significant_figures(self):
        """How many digits of the median the spread supports (1 to 4): the median's
        90% interval, estimated from the IQR of the measurements."""
        n = len(self.times)
        if n < 4 or self.median <= 0:
            return 1
        interval = 1.645 * (self.iqr / 1.349) / math.sqrt(n)
        if interval <= 0:
            return 4
        return max(1, min(4, int(math.floor(math.log10(self.median / interval)))))

    # ---- the task's labels --------------------------------------------------------------------
    stmt = property(lambda self: self.task_spec.stmt)
    setup = property(lambda self: self.task_spec.setup)
    label = property(lambda self: self.task_spec.label)
    sub_label = property(lambda self: self.task_spec.sub_label)
    description = property(lambda self: self.task_spec.description)
    env = property(lambda self: self.task_spec.env)
    num_threads = property(lambda self: self.task_spec.num_threads)
    title = property(lambda self: self.task_spec.title)

    @staticmethod
    def merge(measurements):
        """One Measurement per distinct TaskSpec, pooling the per-execution times."""
        grouped = {}
        for m in measurements:
            grouped.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(1, times, spec) for spec, times in grouped.items()]

    def __repr__(self):
        unit, scale = select_unit(self.median)
        n = len(self.times)
        lines = [super().__repr__(), self.task_spec.summarize()]
        if n == 1:
            lines.append(f"  {self.median / scale:.2f} {unit}")
        else:
            lines.append(f"  Median: {self.median / scale:.2f} {unit}")
        if n >= 4:
            q1, q3 = _quantile(self._sorted, 0.25), _quantile(self._sorted, 0.75)
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({q1 / scale:.2f} to {q3 / scale:.2f})")
        threads = f"{self.num_threads} thread{'s' if self.num_threads != 1 else ''}"
        if n == 1:
            lines.append(f"  1 measurement, {self.number_per_run} runs , {threads}")
        else:
            lines.append(f"  {n} measurements, {self.number_per_run} runs per measurement, {threads}")
        if self.has_warnings:
            lines.append(f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% of the median "
                         "measurement.\n           This suggests significant environmental influence.")
        return "\n".join(lines)

    __str__ = __repr__
