"""Runs an unchanged PyTorch script under ember (tests/compat_scripts/run_as_ember.py) or under torch,
in a subprocess with a timeout, and returns the fields of its "RESULT ok ..." line."""
import os
import subprocess
import sys

import ember
from harness import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNNER = os.path.join(ROOT, "tests", "compat_scripts", "run_as_ember.py")
EMBER_PATH = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))
TORCH_PATH = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__))) if torch is not None else None


def run_script(path, *args, under="ember", timeout=60):
    """(fields after "RESULT ok", stdout) of the script at `path` run under ember or torch."""
    script = os.path.basename(path)
    env = dict(os.environ, OMP_NUM_THREADS="1")  # two cores: torch's thread pool only slows it down
    if under == "ember":
        env["PYTHONPATH"] = EMBER_PATH
        cmd = [sys.executable, RUNNER, path, *args]
    else:
        env["PYTHONPATH"] = TORCH_PATH
        env["TORCHDYNAMO_DISABLE"] = "1"  # torch.compile stays eager: inductor takes a minute here
        cmd = [sys.executable, path, *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert proc.returncode == 0, f"{script} under {under} failed:\n{proc.stdout}\n{proc.stderr[-4000:]}"
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, f"{script} under {under}: no single RESULT line in\n{proc.stdout}"
    fields = lines[0].split()[1:]
    assert fields[0] == "ok", f"{script} under {under} ran but its checks failed:\n{proc.stdout}"
    return fields[1:], proc.stdout
