"""The profiler's results: one FunctionEvent per timed call, FunctionEventAvg per key,
and EventList (a list with key_averages / table / export_chrome_trace), shaped like
torch.autograd.profiler_util's classes so scripts reading their attributes work.

Times are in microseconds (floats); memory in bytes.
"""
from collections import namedtuple

from ember.profiler import _table

# torch's event.time_range: an interval with start and end, in µs.
Interval = namedtuple("Interval", ["start", "end"])


class FunctionEvent:
    """One timed call: an ember op, a module's forward, a record_function region or a step."""

    def __init__(self, id, name, thread, start_us, end_us, *, input_shapes=None, stack=None,
                 is_user_annotation=False, overhead_us=0.0, device_time_total=0.0, device_memory_usage=0,
                 use_device=None, category="cpu_op"):
        self.id = id
        self.name = name
        self.key = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.is_user_annotation = is_user_annotation
        self.category = category
        # Profiler bookkeeping this event caused inside its parent (GPU syncs, shape
        # recording): not the parent's own work, so it is left out of the parent's self time.
        self.overhead_us = overhead_us
        self.inner_overhead_us = 0.0  # the descendants' bookkeeping inside this event's interval
        self.device_time_total = device_time_total
        self.device_memory_usage = device_memory_usage
        self.use_device = use_device
        self.cpu_parent = None
        self.cpu_children = []
        self.count = 1
        self.node_id = -1
        self.is_async = False
        self.is_remote = False
        self.is_legacy = False
        self.overload_name = ""
        self.flops = 0
        self.cpu_memory_usage = 0  # ember has no CPU allocator statistics
        self.self_cpu_memory_usage = 0
        self.device_type = "CPU"

    @property
    def cpu_time_total(self):
        """The interval's length less the profiler's bookkeeping for the calls inside it."""
        return max(0.0, self.time_range.end - self.time_range.start - self.inner_overhead_us)

    @property
    def self_cpu_time_total(self):
        return max(0.0, self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children))

    @property
    def self_device_time_total(self):
        return max(0.0, self.device_time_total - sum(c.device_time_total for c in self.cpu_children))

    @property
    def self_device_memory_usage(self):
        return self.device_memory_usage - sum(c.device_memory_usage for c in self.cpu_children)

    # torch's pre-2.4 names for the device columns.
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_memory_usage = property(lambda self: self.device_memory_usage)
    self_cuda_memory_usage = property(lambda self: self.self_device_memory_usage)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def device_time(self):
        return self.device_time_total

    cpu_time_total_str = property(lambda self: _table.format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _table.format_time(self.self_cpu_time_total))
    cpu_time_str = property(lambda self: _table.format_time(self.cpu_time))
    device_time_total_str = property(lambda self: _table.format_time(self.device_time_total))
    self_device_time_total_str = property(lambda self: _table.format_time(self.self_device_time_total))
    device_time_str = property(lambda self: _table.format_time(self.device_time))

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time={self.cpu_time_total_str} start_us={self.time_range.start:.3f} "
                f"end_us={self.time_range.end:.3f} cpu_children={[c.id for c in self.cpu_children]} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The sums of the events sharing a key (and, when asked, input shapes / stack)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.is_legacy = False
        self.is_user_annotation = False
        self.use_device = None
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_device_memory_usage = 0
        self.input_shapes = None
        self.stack = None
        self.overload_name = None
        self.cpu_parent = None
        self.cpu_children = None
        self.device_type = "CPU"
        self.flops = 0

    def add(self, other):
        if self.key is None:
            _adopt(self, other)
        if other.key != self.key:
            raise AssertionError(f"FunctionEventAvg.add: keys differ ({other.key!r} and {self.key!r})")
        _accumulate(self, other)
        return self

    __iadd__ = add

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    cuda_time = property(lambda self: self.device_time)
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_memory_usage = property(lambda self: self.device_memory_usage)
    self_cuda_memory_usage = property(lambda self: self.self_device_memory_usage)

    cpu_time_total_str = property(lambda self: _table.format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _table.format_time(self.self_cpu_time_total))
    cpu_time_str = property(lambda self: _table.format_time(self.cpu_time))
    device_time_total_str = property(lambda self: _table.format_time(self.device_time_total))
    self_device_time_total_str = property(lambda self: _table.format_time(self.self_device_time_total))
    device_time_str = property(lambda self: _table.format_time(self.device_time))

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes}>")


def _step_wildcard(name):
    # Every "ProfilerStep#N" averages into one row, as in torch.
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with torch's summary methods."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False, **kwargs):
        super().__init__(*args, **kwargs)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False,
                     include_python_functions=False):
        """One FunctionEventAvg per event name (and input shapes / first n stack entries when
        asked), in the order the keys first occur."""
        stats = {}
        for e in self:
            key = [_step_wildcard(e.key), e.is_user_annotation]
            if group_by_input_shapes:
                key.append(str(e.input_shapes))
            if group_by_stack_n > 0:
                key += list(e.stack[:group_by_stack_n])
            avg = stats.setdefault(tuple(key), FunctionEventAvg())
            if avg.key is None:
                _adopt(avg, e)
                avg.key = _step_wildcard(e.key)
            _accumulate(avg, e)
        out = EventList(stats.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                        with_flops=self._with_flops)
        for avg in out:
            avg.stack = list(avg.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ""
            if not group_by_overload_name:
                avg.overload_name = ""
        return out

    def total_average(self):
        """Every event summed into one FunctionEventAvg with key "Total"."""
        total = FunctionEventAvg()
        for e in self:
            _accumulate(total, e)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """torch's text table; sort_by names an attribute ("cpu_time_total", "self_cuda_time_total",
        "count", ...), sorted in decreasing order; None keeps the list's order."""
        return _table.build(self, sort_by=sort_by, row_limit=row_limit,
                            max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, header=header,
                            top_level_events_only=top_level_events_only, time_unit=time_unit,
                            use_device=self._use_device, profile_memory=self._profile_memory)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """Writes the events as Chrome trace JSON (chrome://tracing, Perfetto)."""
        from ember.profiler import _trace
        _trace.write_chrome_trace(self, path)


_SUMMED = ("cpu_time_total", "self_cpu_time_total", "device_time_total", "self_device_time_total",
           "cpu_memory_usage", "self_cpu_memory_usage", "device_memory_usage", "self_device_memory_usage",
           "count", "flops")
_ADOPTED = ("key", "node_id", "is_async", "is_remote", "is_legacy", "is_user_annotation", "use_device",
            "input_shapes", "stack", "overload_name", "cpu_parent", "cpu_children", "device_type")


def _adopt(avg, e):
    """An average takes its descriptive fields from the first event added."""
    for name in _ADOPTED:
        setattr(avg, name, getattr(e, name))


def _accumulate(avg, e):
    for name in _SUMMED:
        setattr(avg, name, getattr(avg, name) + getattr(e, name))
