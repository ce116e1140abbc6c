"""Chrome trace JSON (chrome://tracing, Perfetto, TensorBoard's profiler plugin) and
tensorboard_trace_handler."""
import gzip
import json
import os
import socket
import time

# The trace category of each kind of event, as torch names them.
CATEGORY = {"op": "cpu_op", "module": "python_function", "call": "user_annotation",
            "annotation": "user_annotation"}


def trace_dict(events, origin_epoch_us=0.0):
    """The trace of a list of FunctionEvent: one complete ("X") event per call on its thread,
    and, when the GPU was timed, the op's GPU time on a "CUDA" track."""
    pid = os.getpid()
    out = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}}]
    has_gpu = False
    for e in events:
        args = {"External id": e.id}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.stack:
            args["Call stack"] = ";".join(reversed(e.stack))
        if e.device_memory_usage:
            args["CUDA memory (bytes)"] = e.device_memory_usage
        start = origin_epoch_us + e.time_range.start
        out.append({"ph": "X", "cat": e.category, "name": e.name, "pid": pid, "tid": e.thread,
                    "ts": start, "dur": e.time_range.end - e.time_range.start, "args": args})
        if e.device_time_total > 0 and not e.cpu_children:
            # Leaves only: their GPU intervals never overlap, so the track reads like a timeline.
            has_gpu = True
            out.append({"ph": "X", "cat": "kernel", "name": e.name, "pid": "CUDA", "tid": "stream",
                        "ts": start, "dur": e.device_time_total, "args": {"External id": e.id}})
    if has_gpu:
        out.append({"ph": "M", "name": "process_name", "pid": "CUDA", "tid": 0,
                    "args": {"name": "CUDA (synchronized timing)"}})
    return {"schemaVersion": 1, "traceName": "ember", "displayTimeUnit": "ms", "traceEvents": out}


def write_chrome_trace(events, path, metadata=None):
    """Writes trace_dict(events) to path (gzipped when it ends in .gz); `metadata` entries go at
    the trace's top level, where torch puts add_metadata's."""
    trace = trace_dict(events, getattr(events, "_origin_epoch_us", 0.0))
    trace.update(metadata or {})
    data = json.dumps(trace)
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as f:
        f.write(data)


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready callback writing each finished trace to
    dir_name/<worker_name>.<time ns>.pt.trace.json[.gz], the layout TensorBoard reads."""

    def handler(prof):
        nonlocal worker_name
        try:
            os.makedirs(dir_name, exist_ok=True)
        except OSError as e:
            raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        while True:  # time_ns can repeat on a coarse clock: never overwrite a trace
            name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
            if not os.path.exists(os.path.join(dir_name, name)):
                break
        prof.export_chrome_trace(os.path.join(dir_name, name))

    return handler
