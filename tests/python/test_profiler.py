"""ember.profiler / ember.autograd.profiler: events, self times, the table's columns, the
schedule, Chrome traces and the wrappers' removal; compared with torch.profiler where
torch is importable (header columns, schedule actions, trace-ready calls)."""
import json
import re
import os
import threading
import time
import warnings

import pytest

import ember
import ember.nn as nn
from ember.profiler import (ProfilerAction, ProfilerActivity, profile, record_function, schedule,
                            tensorboard_trace_handler)
from harness import CUDA_AVAILABLE


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _columns(table):
    """The header names of a key_averages().table() (columns are two or more spaces apart;
    a header wider than its column, like "CUDA time avg", pushes the rest right as in torch)."""
    return re.split(r"\s{2,}", table.splitlines()[1].strip())


def _rows(table):
    lines = table.splitlines()
    return lines[3:lines.index(lines[0], 3)]


def _averages(prof):
    return {a.key: a for a in prof.key_averages()}


def _tiny_model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))


def _originals():
    return (ember.add, ember.nn.functional.linear, vars(ember.Tensor)["__add__"], vars(ember.Tensor)["sum"],
            vars(ember.Tensor)["backward"], vars(nn.Module)["__call__"], ember.autograd.grad,
            vars(ember.optim.SGD)["step"], vars(ember.optim.Optimizer)["zero_grad"], vars(ember.Tensor)["grad"])


# ---- events ----

def test_ops_operators_modules_and_backward_are_events():
    model = _tiny_model()
    x = ember.randn(5, 4, requires_grad=True)
    a, b = ember.ones(2, 3), ember.ones(3, 2)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            c = a + 1.0
        d = a @ b
        loss = model(x).sum()
        loss.backward()
        (g,) = ember.autograd.grad(model(x).sum(), [x])
    avg = _averages(prof)
    assert avg["ember::add"].count == 3
    assert avg["ember::matmul"].count == 1
    assert avg["nn.Module: Sequential"].count == 2
    assert avg["nn.Module: Linear"].count == 4 and avg["nn.Module: ReLU"].count == 2
    assert avg["autograd::backward"].count == 1  # Tensor.backward -> autograd.backward: one event
    assert avg["autograd::grad"].count == 1
    assert c.shape == (2, 3) and d.shape == (2, 2) and g.shape == (5, 4)
    events = prof.events()
    assert all(isinstance(e, ember.profiler.FunctionEvent) for e in events)
    linear = next(e for e in events if e.name == "nn.Module: Linear")
    assert linear.cpu_parent.name == "nn.Module: Sequential"
    assert any(child.name == "ember::linear" for child in linear.cpu_children)


def test_self_time_is_total_minus_children():
    with profile() as prof:
        with record_function("outer"):
            time.sleep(0.005)
            with record_function("inner"):
                time.sleep(0.05)
    outer, inner = (next(e for e in prof.events() if e.name == n) for n in ("outer", "inner"))
    assert inner.cpu_parent is outer and outer.cpu_children == [inner]
    assert inner.cpu_time_total >= 50000 and inner.self_cpu_time_total == pytest.approx(inner.cpu_time_total)
    assert outer.cpu_time_total >= inner.cpu_time_total + 5000
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - inner.cpu_time_total)
    assert 5000 <= outer.self_cpu_time_total < 40000  # the inner sleep is not the outer's own time
    assert outer.time_range.start <= inner.time_range.start <= inner.time_range.end <= outer.time_range.end
    total = prof.key_averages().self_cpu_time_total
    assert total == pytest.approx(outer.cpu_time_total, rel=1e-6)


def test_record_function_as_decorator_and_without_a_profile():
    @record_function("my_step")
    def step(v):
        return v * 2

    assert step(3) == 6  # no profile: the region records nothing and the function still runs
    with record_function("nothing"):
        pass
    with profile() as prof:
        step(ember.ones(2))
        step(ember.ones(2))
    avg = _averages(prof)
    assert avg["my_step"].count == 2 and avg["my_step"].is_user_annotation
    mul = next(e for e in prof.events() if e.name == "ember::mul")
    assert mul.cpu_parent.name == "my_step"


def test_events_of_other_threads_have_their_own_parents():
    def work():
        with record_function("in_thread"):
            ember.ones(3) + 1.0

    with profile() as prof:
        with record_function("main"):
            t = threading.Thread(target=work)
            t.start()
            t.join()
    events = {e.name: e for e in prof.events()}
    assert events["in_thread"].cpu_parent is None  # not a child of the main thread's region
    assert events["in_thread"].thread != events["main"].thread



def _train(steps, optimizer_cls, **kwargs):
    model = _tiny_model()
    opt = optimizer_cls(model.parameters(), **kwargs)
    x, y = ember.randn(6, 4), ember.randn(6, 2)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("optimizer_cls,kwargs", [(ember.optim.SGD, dict(lr=0.1, momentum=0.9)),
                                                  (ember.optim.Adam, dict(lr=0.01))])
def test_training_under_a_profile_is_unchanged_and_names_optimizer_steps(optimizer_cls, kwargs):
    ember.manual_seed(1)
    plain = _train(3, optimizer_cls, **kwargs)
    ember.manual_seed(1)
    with profile(record_shapes=True, with_stack=True) as prof:
        profiled = _train(3, optimizer_cls, **kwargs)
    for a, b in zip(plain, profiled):
        ember.testing.assert_close(a, b, rtol=0, atol=0)
    avg = _averages(prof)
    name = optimizer_cls.__name__
    assert avg[f"Optimizer.step#{name}.step"].count == 3  # torch's names
    assert avg[f"Optimizer.zero_grad#{name}.zero_grad"].count == 3
    assert avg["autograd::backward"].count == 3


@pytest.mark.parametrize("workers", [0, 1])
def test_dataloader_batches_are_events(workers):
    from ember.utils.data import DataLoader, TensorDataset
    loader = DataLoader(TensorDataset(ember.arange(8.0)), batch_size=2, num_workers=workers)
    with profile() as prof:
        batches = [b for (b,) in loader]
    assert len(batches) == 4
    keys = [k for k in _averages(prof) if k.startswith("enumerate(DataLoader)#")]
    assert len(keys) == 1 and keys[0].endswith(".__next__")
    assert _averages(prof)[keys[0]].count == 5  # four batches and the StopIteration, as torch counts


def test_tensor_properties_stay_properties_while_recording():
    kinds = {n: type(v) for n, v in vars(ember.Tensor).items()}
    with profile():
        during = {n: type(v) for n, v in vars(ember.Tensor).items()}
        t = ember.ones(2, requires_grad=True)
        t.sum().backward()
        assert isinstance(t.grad, ember.Tensor)  # .grad is the gradient, not autograd.grad
    for n, kind in kinds.items():
        if kind is property:
            assert during[n] is property, n


# ---- wrapping only while recording ----

def test_wrappers_are_removed_on_exit_even_after_an_error():
    before = _originals()
    with profile():
        assert ember.add is not before[0]
        assert vars(nn.Module)["__call__"] is not before[5]
    assert _originals() == before
    with pytest.raises(RuntimeError, match="matmul"):
        with profile():
            ember.matmul(ember.ones(2, 3), ember.ones(2, 3))  # the op's own error passes through
    assert _originals() == before


def test_profiles_do_not_nest():
    with profile():
        with pytest.raises(RuntimeError, match="already recording"):
            with profile():
                pass
    assert ember.profiler._recorder.active is None


def test_results_before_recording_raise():
    prof = profile()
    with pytest.raises(RuntimeError, match="no results"):
        prof.key_averages()


# ---- the table ----

BASE_COLUMNS = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]


def test_table_columns_sorting_and_row_limit():
    x = ember.ones(8, 8)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(4):
            x = x + 1.0
        x = x @ x
        ember.relu(x).sum()
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=2)
    assert _columns(table) == BASE_COLUMNS
    assert len(_rows(table)) == 2
    assert table.rstrip().splitlines()[-1].startswith("Self CPU time total: ")
    full = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
    order = [row.split()[0] for row in _rows(full)]
    avg = _averages(prof)
    selfs = [avg[name].self_cpu_time_total for name in order]
    assert selfs == sorted(selfs, reverse=True)
    count_table = prof.key_averages().table(sort_by="count")
    assert _rows(count_table)[0].split()[0] == "ember::add" and _rows(count_table)[0].split()[-1] == "4"
    shaped = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total")
    assert _columns(shaped) == BASE_COLUMNS + ["Input Shapes"]
    assert "[[8, 8], [8, 8]]" in shaped  # matmul's inputs
    # profile_memory measures CUDA memory only: on the CPU the table has no memory columns
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True) as prof2:
        x + 1.0
    if not CUDA_AVAILABLE:
        assert _columns(prof2.key_averages().table()) == BASE_COLUMNS


def test_table_matches_torch_header():
    torch = _torch()
    if torch is None:
        pytest.skip("torch is not importable")
    from torch.profiler import ProfilerActivity as TA
    from torch.profiler import profile as tprofile
    t = torch.ones(4, 4)
    with tprofile(activities=[TA.CPU], record_shapes=True) as tprof:
        t + 1.0
    e = ember.ones(4, 4)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        e + 1.0
    for group in (False, True):
        theirs = tprof.key_averages(group_by_input_shape=group).table(sort_by="cpu_time_total", row_limit=10)
        ours = prof.key_averages(group_by_input_shape=group).table(sort_by="cpu_time_total", row_limit=10)
        assert _columns(ours) == _columns(theirs)
        assert ours.splitlines()[-1].split(":")[0] == theirs.splitlines()[-1].split(":")[0]


def test_with_stack_names_the_caller():
    with profile(with_stack=True) as prof:
        ember.ones(2) * 3.0
    mul = next(e for e in prof.events() if e.name == "ember::mul")
    assert any(os.path.basename(__file__) in entry and "test_with_stack_names_the_caller" in entry
               for entry in mul.stack)
    assert not any("ember/profiler" in entry for entry in mul.stack)
    table = prof.key_averages(group_by_stack_n=2).table()
    assert _columns(table)[-1] == "Source Location"


# ---- schedule, steps, traces ----

SCHEDULES = [dict(wait=1, warmup=1, active=2), dict(wait=1, warmup=1, active=2, repeat=2),
             dict(wait=0, warmup=2, active=1, repeat=1, skip_first=3),
             dict(wait=2, warmup=1, active=3, skip_first=2, skip_first_wait=1)]


@pytest.mark.parametrize("args", SCHEDULES)
def test_schedule_actions(args):
    actions = [schedule(**args)(step).name for step in range(25)]
    torch = _torch()
    if torch is not None:
        assert actions == [torch.profiler.schedule(**args)(step).name for step in range(25)]
    if args == SCHEDULES[1]:
        assert actions[:9] == ["NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"] * 2 + ["NONE"]


def test_schedule_rejects_bad_arguments_and_warns_without_warmup():
    with pytest.raises(AssertionError, match="Invalid profiler schedule"):
        schedule(wait=0, warmup=1, active=0)
    with pytest.warns(UserWarning, match="warmup"):
        schedule(wait=0, warmup=0, active=1)
    assert [m.name for m in ProfilerAction][:4] == ["NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"]
    torch = _torch()
    if torch is not None:
        # Older PyTorch releases lack the newer members (2.11 has no DEVICE_STOPPED).
        assert set(torch.profiler.ProfilerActivity.__members__) <= {m.name for m in ProfilerActivity}
        assert set(torch.profiler.ProfilerAction.__members__) <= {m.name for m in ProfilerAction}


def _run_steps(profile_cls, sched, steps, sink):
    with profile_cls(schedule=sched, on_trace_ready=sink) as prof:
        for _ in range(steps):
            with record_function("work") if profile_cls is profile else _null():
                pass
            prof.step()
    return prof


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_on_trace_ready_per_cycle_with_step_events():
    calls = []

    def ready(prof):
        calls.append((prof.step_num, sorted({e.name for e in prof.events() if e.name.startswith("ProfilerStep")})))

    _run_steps(profile, schedule(wait=1, warmup=1, active=2, repeat=2), 9, ready)
    assert calls == [(4, ["ProfilerStep#2", "ProfilerStep#3"]), (8, ["ProfilerStep#6", "ProfilerStep#7"])]
    torch = _torch()
    if torch is not None:
        torch_calls = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _run_steps(torch.profiler.profile, torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=2), 9,
                       lambda p: torch_calls.append(p.step_num))
        assert [c[0] for c in calls] == torch_calls


def test_step_events_average_into_one_row():
    seen = []
    with profile(schedule=schedule(wait=0, warmup=1, active=3, repeat=1),
                 on_trace_ready=lambda p: seen.append(_averages(p))) as prof:
        for _ in range(5):
            ember.ones(2) + 1.0
            prof.step()
    assert seen and seen[0]["ProfilerStep*"].count == 3 and seen[0]["ember::add"].count == 3


def test_no_step_events_without_a_schedule():
    with profile() as prof:
        ember.ones(2) + 1.0
        prof.step()
        ember.ones(2) + 1.0
    names = {e.name for e in prof.events()}
    assert "ember::add" in names and not any(n.startswith("ProfilerStep") for n in names)
    assert prof.step_num == 1


def test_chrome_trace_is_valid_and_nested(tmp_path):
    model = _tiny_model()
    with profile(record_shapes=True) as prof:
        with record_function("forward"):
            model(ember.ones(2, 4))
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(spans) == len(prof.events())
    for e in spans:
        assert {"name", "ph", "ts", "dur", "pid", "tid", "cat"} <= set(e) and e["dur"] >= 0
    by_name = {}
    for e in spans:  # the first of each name: the first Linear and its addmm
        by_name.setdefault(e["name"], e)
    outer, linear = by_name["forward"], by_name["nn.Module: Linear"]
    assert outer["cat"] == "user_annotation" and by_name["ember::addmm"]["cat"] == "cpu_op"
    assert outer["ts"] <= linear["ts"] and linear["ts"] + linear["dur"] <= outer["ts"] + outer["dur"] + 1e-3
    assert by_name["ember::addmm"]["args"]["Input Dims"][1] == [2, 4]


def test_tensorboard_trace_handler_writes_a_file_per_cycle(tmp_path):
    handler = tensorboard_trace_handler(str(tmp_path / "log"), worker_name="worker0")
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=3), on_trace_ready=handler) as prof:
        for _ in range(7):
            ember.ones(2) + 1.0
            prof.step()
    files = sorted(os.listdir(tmp_path / "log"))
    assert len(files) == 3
    for name in files:
        assert name.startswith("worker0.") and name.endswith(".pt.trace.json")
        trace = json.loads((tmp_path / "log" / name).read_text())
        names = [e["name"] for e in trace["traceEvents"] if e["ph"] == "X"]
        assert "ember::add" in names and sum(n.startswith("ProfilerStep#") for n in names) == 1


def test_start_stop_without_a_with_block():
    prof = profile()
    prof.start()
    ember.ones(3).sum()
    prof.stop()
    assert "ember::sum" in _averages(prof)
    assert ember.profiler._recorder.active is None


# ---- the legacy interface ----

def test_autograd_profiler_legacy_profile():
    from ember.autograd import profiler as legacy
    assert legacy.record_function is record_function
    with legacy.profile(record_shapes=True) as prof:
        with legacy.record_function("label"):
            ember.ones(2, 2).exp()
    assert {"label", "ember::exp", "ember::ones"} <= {e.name for e in prof.function_events}
    assert isinstance(prof.function_events, legacy.EventList)
    # table() lists the events themselves (not averages), so their recorded shapes show, as in torch
    assert _columns(prof.table(sort_by="self_cpu_time_total")) == BASE_COLUMNS + ["Input Shapes"]
    assert _columns(prof.key_averages().table()) == BASE_COLUMNS
    assert _columns(prof.key_averages(group_by_input_shape=True).table()) == BASE_COLUMNS + ["Input Shapes"]
    torch = _torch()
    if torch is not None:
        with torch.autograd.profiler.profile(record_shapes=True) as tprof:
            torch.ones(2, 2).exp()
        assert _columns(tprof.table(sort_by="self_cpu_time_total")) == _columns(prof.table())
    assert prof.self_cpu_time_total == pytest.approx(prof.total_average().self_cpu_time_total)
    with legacy.profile(enabled=False) as off:
        ember.ones(2) + 1
    assert off is None  # as torch
    assert ember.profiler._recorder.active is None


def test_key_average_attributes_match_torch():
    torch = _torch()
    with profile() as prof:
        ember.ones(2) + 1.0
    avg = prof.key_averages()[0]
    needed = {"key", "count", "cpu_time", "cpu_time_total", "self_cpu_time_total", "device_time_total",
              "self_device_time_total", "cpu_time_total_str", "input_shapes", "stack", "cuda_time_total"}
    if torch is not None:
        with torch.profiler.profile() as tprof:
            torch.ones(2) + 1.0
        theirs = tprof.key_averages()[0]
        needed = {n for n in needed if hasattr(theirs, n)}
    assert all(hasattr(avg, n) for n in needed), [n for n in needed if not hasattr(avg, n)]


def test_cuda_path_with_a_simulated_gpu(monkeypatch):
    """The CUDA bookkeeping (syncs, device times, memory deltas, columns) with ember.cuda's
    synchronize / memory_allocated replaced: CPU tensors stand in, so only the regions and
    modules, which always count GPU time, get device times here."""
    import ember.cuda
    import ember.profiler.profiler as profiler_module
    syncs, allocated = [], [0]
    monkeypatch.setattr(profiler_module, "_cuda_available", lambda: True)
    monkeypatch.setattr(ember.cuda, "synchronize", lambda device=None: syncs.append(1))
    monkeypatch.setattr(ember.cuda, "memory_allocated", lambda device=None: allocated[0])

    def grow(nbytes):
        allocated[0] += nbytes

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True) as prof:
        with record_function("outer"):
            grow(100)
            with record_function("inner"):
                time.sleep(0.002)
                grow(1000)
            ember.ones(2) + 1.0  # a CPU op: no device time
    events = {e.name: e for e in prof.events()}
    outer, inner = events["outer"], events["inner"]
    assert len(syncs) == 2 * len(events)  # before and after every event
    assert inner.device_time_total >= 2000 and outer.device_time_total >= inner.device_time_total
    assert outer.self_device_time_total == pytest.approx(outer.device_time_total - inner.device_time_total)
    assert events["ember::add"].device_time_total == 0
    assert (outer.device_memory_usage, outer.self_device_memory_usage) == (1100, 100)
    assert (inner.device_memory_usage, inner.self_device_memory_usage) == (1000, 1000)
    table = prof.key_averages().table(sort_by="self_cuda_time_total")
    assert _columns(table) == BASE_COLUMNS[:-1] + ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg",
                                                   "CUDA Mem", "Self CUDA Mem", "# of Calls"]
    assert _rows(table)[0].split()[0] == "inner"
    assert table.splitlines()[-1].startswith("Self CUDA time total: ")
    assert "1000 B" in table


def test_shapes_of_uninitialized_lazy_parameters_are_not_an_error():
    model = nn.LazyLinear(3)
    with profile(record_shapes=True) as prof:
        state = model.state_dict()  # detaches an UninitializedParameter, whose .shape raises
        model(ember.ones(2, 4))
    assert set(state) == {"weight", "bias"}
    assert _averages(prof)["nn.Module: LazyLinear"].count == 1


def test_nothing_is_wrapped_outside_the_recorded_steps():
    original = vars(ember.Tensor)["__add__"]
    wrapped_at = []
    with profile(schedule=schedule(wait=1, warmup=1, active=1, repeat=1)) as prof:
        for _ in range(4):
            wrapped_at.append(vars(ember.Tensor)["__add__"] is not original)
            prof.step()
    assert wrapped_at == [False, False, True, False]  # wait, warmup, active, after the last cycle
    assert vars(ember.Tensor)["__add__"] is original


def test_export_stacks_gzip_and_metadata(tmp_path):
    import gzip
    with profile(with_stack=True) as prof:
        ember.ones(2) * 3.0
    prof.add_metadata("run", "a")
    prof.add_metadata_json("config", '{"lr": 0.1}')
    prof.export_chrome_trace(str(tmp_path / "t.json.gz"))
    with gzip.open(tmp_path / "t.json.gz", "rt") as f:
        trace = json.load(f)
    assert trace["run"] == "a" and trace["config"] == {"lr": 0.1}
    assert any(e.get("name") == "ember::mul" for e in trace["traceEvents"])
    prof.export_stacks(str(tmp_path / "stacks.txt"))
    lines = (tmp_path / "stacks.txt").read_text().splitlines()
    mul = [line for line in lines if line.rsplit(" ", 1)[0].endswith(";ember::mul")]
    assert len(mul) == 1 and "test_export_stacks_gzip_and_metadata" in mul[0]
    assert int(mul[0].rsplit(" ", 1)[1]) >= 0
