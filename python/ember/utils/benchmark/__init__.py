"""ember.utils.benchmark: timing Python statements as torch.utils.benchmark
(Timer, Measurement, Compare), for scripts that benchmark their models.
Only Python statements (no C++ snippets, no Callgrind)."""
from ember.utils.benchmark.common import Measurement, TaskSpec, select_unit, trim_sigfig  # noqa: F401
from ember.utils.benchmark.compare import Compare  # noqa: F401
from ember.utils.benchmark.timer import Timer  # noqa: F401

__all__ = ["Timer", "Measurement", "TaskSpec", "Compare", "select_unit", "trim_sigfig"]
