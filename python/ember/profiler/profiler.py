"""ember.profiler.profile, schedule and the activity / action enums, as torch.profiler's.

A profile records while its schedule says RECORD (always, without a schedule): it
installs the timing wrappers of _patch and a Recorder, and on leaving the recording
turns what was recorded into an EventList, then calls on_trace_ready(prof).
"""
import enum
import warnings

from ember.profiler import _patch, _recorder, _trace
from ember.profiler._events import EventList, FunctionEvent


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4  # torch's "the device trace stopped early"; ember's schedules never return it


def _cuda_available():
    # The extension's own check: ember.cuda.is_available() warns once when there is no driver,
    # which a CPU-only profile should not cause.
    from ember import _C
    return _C._cuda.is_available()


def supported_activities():
    """CPU, plus CUDA when a GPU is usable."""
    out = {ProfilerActivity.CPU}
    if _cuda_available():
        out.add(ProfilerActivity.CUDA)
    return out


def kineto_available():
    """False: ember's profiler is its own, not Kineto."""
    return False


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The action for each step: skip `skip_first` steps, then cycles of `wait` idle steps,
    `warmup` steps and `active` recorded steps (the last one RECORD_AND_SAVE), `repeat`
    cycles (0: forever). skip_first_wait != 0 drops the first cycle's wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
                             f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
                             f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    cycle = wait + warmup + active

    def action(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        if repeat > 0 and step >= repeat * cycle:
            return ProfilerAction.NONE
        phase = step % cycle
        if phase < wait:
            return ProfilerAction.NONE
        if phase < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if phase < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def _always_record(step):
    return ProfilerAction.RECORD


def _build_events(recorder, use_device, profile_memory):
    """The Recorder's finished calls as FunctionEvents in start order, parents linked."""
    origin = recorder.origin_ns
    finished = sorted(recorder.finished, key=lambda r: (r.start_ns, -r.end_ns))
    made = {}
    for i, r in enumerate(finished):
        made[id(r)] = FunctionEvent(
            i, r.name, r.thread, (r.start_ns - origin) / 1000.0, (r.end_ns - origin) / 1000.0,
            input_shapes=None if r.shapes is None else _recorder.shapes_as_lists(r.shapes), stack=r.stack,
            is_user_annotation=r.kind == "annotation",
            overhead_us=r.overhead_ns / 1000.0, device_time_total=r.device_ns / 1000.0,
            device_memory_usage=r.memory, use_device=use_device,
            category=_trace.CATEGORY[r.kind])
    for r in finished:
        ev = made[id(r)]
        parent = made.get(id(r.parent)) if r.parent is not None else None
        if parent is not None:
            ev.cpu_parent = parent
            parent.cpu_children.append(ev)
    for r in reversed(finished):  # children start after their parent: each is complete when reached
        ev = made[id(r)]
        if ev.cpu_parent is not None:
            ev.cpu_parent.inner_overhead_us += ev.overhead_us + ev.inner_overhead_us
    events = EventList(made.values(), use_device=use_device, profile_memory=profile_memory)
    events._origin_epoch_us = recorder.origin_epoch_us
    return events


class _Session:
    """What both profile classes share: starting and stopping a recording and its results."""

    def _init_session(self, record_shapes, profile_memory, with_stack, time_cuda):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self._time_cuda = time_cuda
        self._use_device = "cuda" if time_cuda else None
        self._recorder = None
        self._function_events = None
        self._metadata = {}

    def _start_recording(self):
        if _recorder.active is not None:
            raise RuntimeError("profiler: another profile is already recording; profiles cannot nest")
        self._recorder = _recorder.Recorder(self.record_shapes, self.with_stack, self._time_cuda,
                                            self.profile_memory and self._time_cuda)
        _patch.install()
        _recorder.active = self._recorder

    def _stop_recording(self):
        recorder = self._recorder
        if recorder is None:
            return
        recorder.close_open()
        _recorder.active = None
        _patch.remove()
        self._recorder = None
        self._function_events = _build_events(recorder, self._use_device, self.profile_memory)

    def _results(self):
        if self._function_events is None:
            raise RuntimeError("profiler: no results yet (nothing was recorded, or the recording is still running)")
        return self._function_events

    def events(self):
        """Every recorded call, a FunctionEvent each, in start order."""
        return self._results()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False,
                     include_python_functions=False):
        return self._results().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self):
        return self._results().total_average()

    def export_chrome_trace(self, path):
        _trace.write_chrome_trace(self._results(), str(path), self._metadata)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Folded stacks ("outer;inner value" lines, for flamegraph.pl / speedscope) of the events
        recorded with with_stack=True; metric is "self_cpu_time_total" or "self_cuda_time_total"."""
        attr = metric.replace("cuda", "device")
        with open(path, "w", encoding="utf-8") as f:
            for e in self._results():
                if e.stack:
                    f.write(";".join(reversed(e.stack)) + ";" + e.name + f" {int(getattr(e, attr))}\n")

    def add_metadata(self, key, value):
        self._metadata[key] = value

    def add_metadata_json(self, key, value):
        import json
        self._metadata[key] = json.loads(value)


class profile(_Session):
    """Records ember ops, module calls and record_function regions, as torch.profiler.profile.

    activities: ProfilerActivity.CPU and/or .CUDA (default: supported_activities()). With CUDA
    (and a GPU), each op's GPU time is measured by synchronizing before and after it, which
    serializes the GPU while profiling. profile_memory reports the change of
    ember.cuda.memory_allocated() across each op when the GPU is timed; CPU memory is not
    measured. with_flops / with_modules are accepted and record nothing more."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None):
        activities = set(activities) if activities is not None else supported_activities()
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use "
                          "ProfilerActivity.CUDA instead.", FutureWarning, stacklevel=2)
            activities.add(ProfilerActivity.CUDA)
        if not activities:
            raise AssertionError("No valid profiler activities found")
        self.activities = activities
        self._init_session(record_shapes, profile_memory, with_stack,
                           ProfilerActivity.CUDA in activities and _cuda_available())
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.record_steps = schedule is not None  # "ProfilerStep#N" regions, with a schedule only (as torch)
        self.schedule = schedule if schedule is not None else _always_record
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self._transit(ProfilerAction.NONE, self.current_action)
        self._enter_step()

    def stop(self):
        self._exit_step()
        self._transit(self.current_action, None)

    def step(self):
        """Marks the start of the next step: advances the schedule (saving a finished cycle)."""
        self._exit_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(previous, self.current_action)
        self._enter_step()

    def _enter_step(self):
        if self.record_steps:
            self.step_rec_fn = _recorder.record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def _exit_step(self):
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None

    def _transit(self, previous, current):
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if previous == ProfilerAction.RECORD and current in (ProfilerAction.NONE, ProfilerAction.WARMUP):
            warnings.warn(f"Incorrect schedule: RECORD followed by {current.name}", stacklevel=3)
        if previous == ProfilerAction.RECORD_AND_SAVE or (previous == ProfilerAction.RECORD
                                                          and current not in recording):
            self._stop_recording()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        if current in recording and self._recorder is None:
            self._start_recording()
