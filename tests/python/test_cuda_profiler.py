"""ember.profiler with ProfilerActivity.CUDA on a GPU: per-op CUDA times (measured by
synchronizing around each op), the CUDA columns of the table, CUDA memory deltas with
profile_memory, and the CUDA track of the Chrome trace. Skips without a GPU."""
import json
import re
import time

import pytest

import ember
from ember.profiler import ProfilerActivity, profile, record_function
from harness import needs_gpu

pytestmark = needs_gpu

BOTH = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
BASE = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
CUDA_COLUMNS = ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]


def _columns(table):
    """The header names of a key_averages().table() (columns are two or more spaces apart;
    a header wider than its column, like "CUDA time avg", pushes the rest right as in torch)."""
    return re.split(r"\s{2,}", table.splitlines()[1].strip())


def _first(prof, name):
    return next(e for e in prof.events() if e.name == name)


def test_cuda_ops_get_cuda_time_and_cpu_ops_do_not():
    a = ember.randn(512, 512, device="cuda")
    c = ember.ones(4)
    ember.cuda.synchronize()
    with profile(activities=BOTH) as prof:
        with record_function("region"):
            b = a @ a
            c + 1.0
    assert b.is_cuda
    matmul, add, region = _first(prof, "ember::matmul"), _first(prof, "ember::add"), _first(prof, "region")
    assert matmul.device_time_total > 0
    assert add.device_time_total == 0  # a CPU op
    assert region.device_time_total >= matmul.device_time_total
    assert region.self_device_time_total == pytest.approx(region.device_time_total - matmul.device_time_total)


def test_table_has_torch_cuda_columns():
    a = ember.randn(256, 256, device="cuda")
    with profile(activities=BOTH) as prof:
        ember.relu(a @ a)
    table = prof.key_averages().table(sort_by="cuda_time_total", row_limit=5)
    assert _columns(table) == BASE + CUDA_COLUMNS + ["# of Calls"]
    assert "Self CUDA time total:" in table.splitlines()[-1]
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available():
        from torch.profiler import ProfilerActivity as TA
        t = torch.randn(256, 256, device="cuda")
        with torch.profiler.profile(activities=[TA.CPU, TA.CUDA]) as tprof:
            torch.relu(t @ t)
        assert _columns(tprof.key_averages().table(sort_by="cuda_time_total", row_limit=5)) == _columns(table)


def test_cuda_time_covers_the_gpu_work():
    a = ember.randn(2048, 2048, device="cuda")
    ember.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(3):
        a @ a
    ember.cuda.synchronize()
    wall_us = (time.perf_counter() - start) * 1e6 / 3
    with profile(activities=BOTH) as prof:
        a @ a
    # The op's CUDA time is measured to the GPU's end of the matmul: about its synchronized wall time.
    assert _first(prof, "ember::matmul").device_time_total > 0.3 * wall_us


def test_profile_memory_reports_cuda_allocations():
    with profile(activities=BOTH, profile_memory=True) as prof:
        kept = ember.zeros(1024, 1024, device="cuda")  # 4 MiB that stays allocated
    zeros = _first(prof, "ember::zeros")
    assert zeros.device_memory_usage >= 4 * 1024 * 1024
    table = prof.key_averages().table()
    assert _columns(table) == BASE + CUDA_COLUMNS + ["CUDA Mem", "Self CUDA Mem", "# of Calls"]
    del kept


def test_chrome_trace_has_a_cuda_track(tmp_path):
    a = ember.randn(256, 256, device="cuda")
    with profile(activities=BOTH) as prof:
        a @ a
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    gpu = [e for e in events if e["ph"] == "X" and e["pid"] == "CUDA"]
    assert any(e["name"] == "ember::matmul" and e["dur"] > 0 for e in gpu)


def test_module_and_backward_on_cuda():
    model = ember.nn.Linear(64, 64).cuda()
    x = ember.randn(32, 64, device="cuda")
    with profile(activities=BOTH) as prof:
        model(x).sum().backward()
    assert _first(prof, "nn.Module: Linear").device_time_total > 0
    assert _first(prof, "autograd::backward").device_time_total > 0
