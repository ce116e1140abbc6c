"""bench.models runs (one small model, one repeat): a smoke test of the benchmark's code, not a
timing. The figures come from `python -m bench.models`."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from bench import models  # noqa: E402


def test_bench_models_prints_one_line_per_model(capsys):
    models.main(["--only", "lenet,gru", "--repeats", "1"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["model"] for line in lines] == ["lenet", "gru"]
    assert all(line["ember"] > 0 and line["unit"] == "ms/step" for line in lines)
