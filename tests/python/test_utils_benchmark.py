"""ember.utils.benchmark: Timer's measurements (timeit, blocked_autorange,
adaptive_autorange), Measurement's statistics and repr, Compare's table,
and ember.utils.hooks.RemovableHandle. Timings are kept to a few tens of
milliseconds; statistics are checked on Measurements built from known times."""
import time

import numpy as np
import pytest

import ember
from ember.utils import benchmark
from ember.utils.benchmark import Measurement, TaskSpec, Timer
from harness import torch

CASES = []  # no OpCase rows: timing utilities


def spec(**kwargs):
    base = dict(stmt="x + 1", setup="pass")
    base.update(kwargs)
    return TaskSpec(**base)


# ---- Measurement statistics on known times ----------------------------------------------------

def test_measurement_statistics_against_numpy():
    raw = [0.8, 1.0, 1.2, 5.0, 0.9, 1.1]  # seconds per block of 10 runs
    m = Measurement(10, raw, spec())
    per_run = np.array(raw) / 10
    np.testing.assert_allclose(m.times, per_run)
    assert m.mean == pytest.approx(per_run.mean())
    assert m.median == pytest.approx(np.median(per_run))
    assert m.iqr == pytest.approx(np.percentile(per_run, 75) - np.percentile(per_run, 25))
    assert m.number_per_run == 10 and m.raw_times == raw


def test_measurement_confidence_and_warnings():
    steady = Measurement(1, [1.0, 1.01, 0.99, 1.0, 1.02], spec())
    noisy = Measurement(1, [1.0, 2.0, 0.5, 3.0, 1.5], spec())
    assert steady.meets_confidence(0.1) and not steady.has_warnings
    assert not noisy.meets_confidence(0.1) and noisy.has_warnings
    assert "WARNING" in repr(noisy)
    assert 1 <= noisy.significant_figures < steady.significant_figures <= 4


def test_measurement_repr_layout():
    m = Measurement(100, [2.5e-4, 2.6e-4, 2.4e-4, 2.5e-4], spec(label="add", sub_label="16", description="ones"))
    text = repr(m)
    lines = text.splitlines()
    assert lines[0].startswith("<ember.utils.benchmark.common.Measurement object at 0x")
    assert lines[1] == "add: 16" and lines[2] == "ones"
    assert lines[3] == "  Median: 2.50 us"
    assert lines[4] == "  IQR:    0.05 us (2.48 to 2.52)"  # quartiles 2.475 and 2.525 us
    assert lines[5] == "  4 measurements, 100 runs per measurement, 1 thread"
    one = Measurement(1000, [2.0e-3], spec(setup="x = 1"))
    assert repr(one).splitlines()[1:] == ["x + 1", "setup: x = 1", "  2.00 us", "  1 measurement, 1000 runs , 1 thread"]


def test_measurement_merge_pools_equal_tasks():
    a = Measurement(2, [2.0, 4.0], spec())
    b = Measurement(1, [3.0], spec())
    c = Measurement(1, [9.0], spec(stmt="other"))
    merged = Measurement.merge([a, b, c])
    assert len(merged) == 2
    assert sorted(merged[0].times) == [1.0, 2.0, 3.0]


def test_measurement_rejects_no_times():
    with pytest.raises(ValueError):
        Measurement(1, [], spec())


# ---- Timer ------------------------------------------------------------------------------------

def test_timeit_runs_the_statement_number_times():
    calls = []
    m = Timer("f()", globals={"f": lambda: calls.append(1)}).timeit(number=50)
    assert m.number_per_run == 50 and len(m.times) == 1
    assert len(calls) == 50 + 2  # warm-up of max(50 // 100, 2) runs, then 50 measured
    assert m.median > 0


def test_timeit_measures_a_known_sleep():
    m = Timer("time.sleep(0.002)", setup="import time").timeit(number=3)
    assert 0.0019 < m.median < 0.05


def test_setup_global_setup_and_ember_in_globals():
    m = Timer("y = ember.mm(a, a)", setup="a = ember.ones(4, 4)", global_setup="K = 3").timeit(5)
    assert m.stmt == "y = ember.mm(a, a)" and m.setup == "a = ember.ones(4, 4)"
    with pytest.raises(NameError):
        Timer("undefined_name + 1").timeit(1)


def test_blocked_autorange_reaches_min_run_time():
    seen = []
    m = Timer("sum(range(50))").blocked_autorange(callback=lambda n, t: seen.append((n, t)), min_run_time=0.03)
    assert sum(m.raw_times) >= 0.03
    assert len(seen) == len(m.raw_times) and all(n == m.number_per_run for n, _ in seen)
    assert m.number_per_run >= 10 and m.number_per_run % 10 == 0  # a power of 10 sized block


def test_adaptive_autorange_stops_and_reports():
    m = Timer("time.sleep(0.001)", setup="import time").adaptive_autorange(threshold=0.5, min_run_time=0.01,
                                                                            max_run_time=0.5)
    assert len(m.times) >= 4 or sum(m.raw_times) >= 0.5
    assert 0.0009 < m.median < 0.02


def test_adaptive_autorange_respects_max_run_time():
    start = time.perf_counter()
    # threshold 0 is never met: only max_run_time ends the loop.
    m = Timer("sum(range(10))").adaptive_autorange(threshold=0.0, min_run_time=0.01, max_run_time=0.05)
    assert time.perf_counter() - start < 2.0
    assert 0.05 <= sum(m.raw_times) < 0.5


def test_num_threads_is_set_while_measuring_and_restored():
    before = ember.get_num_threads()
    seen = []
    Timer("seen.append(ember.get_num_threads())", globals={"seen": seen}, num_threads=1).timeit(3)
    assert set(seen) == {1}
    assert ember.get_num_threads() == before
    with pytest.raises(ValueError, match="num_threads"):
        Timer("pass", num_threads=0)


def test_callable_statement_and_labels():
    m = Timer(lambda: None, label="noop", sub_label="fn", description="callable").timeit(10)
    assert m.title == "noop: fn" and m.description == "callable"


def test_compare_table():
    results = [Measurement(1, [t], spec(label="ops", sub_label=str(n), description=d))
               for n, d, t in [(4, "add", 1e-6), (4, "mul", 2e-6), (64, "add", 3e-6), (64, "mul", 4e-6)]]
    table = str(benchmark.Compare(results))
    lines = table.splitlines()
    assert lines[0] == "[-- ops --]"
    assert [c.strip() for c in lines[1].split("|")] == ["", "add", "mul"]
    assert [c.strip() for c in lines[2].split("|")] == ["4", "1.00", "2.00"]
    assert [c.strip() for c in lines[3].split("|")] == ["64", "3.00", "4.00"]
    assert lines[-1] == "Times are in microseconds (us)."
    assert benchmark.select_unit(1e-6) == ("us", 1e-6) and benchmark.select_unit(999e-9)[0] == "ns"
    assert benchmark.select_unit(1e-3)[0] == "ms" and benchmark.select_unit(2.0) == ("s", 1.0)


@pytest.mark.skipif(torch is None, reason="torch not importable")
def test_statistics_match_torch_measurement():
    import torch.utils.benchmark as tb
    raw = [0.8, 1.0, 1.2, 5.0, 0.9, 1.1, 0.95]
    t = tb.Measurement(10, raw, tb.utils.common.TaskSpec("x", "pass"))
    e = Measurement(10, raw, spec())
    assert e.median == pytest.approx(t.median)
    assert e.mean == pytest.approx(t.mean)
    assert e.iqr == pytest.approx(t.iqr)
    assert e.times == pytest.approx(t.times)
    t_lines = repr(t).splitlines()[2:]
    e_lines = repr(e).splitlines()[2:]
    assert [line.split(":")[0] for line in e_lines[:2]] == [line.split(":")[0] for line in t_lines[:2]]


# ---- ember.utils.hooks ------------------------------------------------------------------------

def test_removable_handle_is_ember_modules_own():
    from ember.utils.hooks import RemovableHandle
    layer = ember.nn.Linear(2, 2)
    handle = layer.register_forward_hook(lambda *a: None)
    assert isinstance(handle, RemovableHandle)


def test_removable_handle_for_a_private_registry():
    from ember.utils.hooks import RemovableHandle
    hooks = {}
    h1, h2 = RemovableHandle(hooks), RemovableHandle(hooks)
    assert h1.id != h2.id
    hooks[h1.id], hooks[h2.id] = "one", "two"
    h1.remove()
    assert list(hooks.values()) == ["two"]
    h1.remove()  # removing twice is harmless
    with h2:
        pass
    assert hooks == {}


def test_unserializable_hook_marks_the_function():
    from ember.utils.hooks import unserializable_hook

    def hook(grad):
        return grad
    assert unserializable_hook(hook) is hook and hook.__torch_unserializable__
