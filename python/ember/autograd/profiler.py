"""ember.autograd.profiler: the legacy profiler interface, as torch.autograd.profiler.

    with ember.autograd.profiler.profile(record_shapes=True) as prof:
        model(x)
    print(prof.key_averages().table(sort_by="self_cpu_time_total"))

It records what ember.profiler.profile records (see there); use_cuda / use_device="cuda"
time the GPU as ProfilerActivity.CUDA does.
"""
from ember.profiler._events import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401
from ember.profiler._recorder import record_function  # noqa: F401
from ember.profiler.profiler import ProfilerActivity, _cuda_available, _Session, kineto_available  # noqa: F401

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]


class profile(_Session):
    """Records while the context is open when enabled; results through function_events,
    key_averages(), table(), total_average() and export_chrome_trace()."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        if use_device not in (None, "cuda"):
            raise AssertionError(f"profile: use_device must be None or 'cuda', got {use_device!r}")
        self.enabled = enabled
        self.use_cuda = use_cuda
        self.use_device = "cuda" if use_cuda else use_device
        self.entered = False
        self._init_session(record_shapes, profile_memory, with_stack,
                           self.use_device == "cuda" and _cuda_available())

    def __enter__(self):
        if not self.enabled:
            return None  # as torch: `with profile(enabled=False) as prof` binds None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start_recording()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._stop_recording()
        return False

    @property
    def function_events(self):
        return self._function_events

    @property
    def self_cpu_time_total(self):
        return self._results().self_cpu_time_total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        return self._results().table(sort_by=sort_by, row_limit=row_limit,
                                     max_src_column_width=max_src_column_width,
                                     max_name_column_width=max_name_column_width,
                                     max_shapes_column_width=max_shapes_column_width, header=header,
                                     top_level_events_only=top_level_events_only)

    def __str__(self):
        return self.table() if self._function_events is not None else "<unfinished ember.autograd.profile>"

    def __repr__(self):
        return repr(self._function_events) if self._function_events is not None else \
            "<unfinished ember.autograd.profile>"
