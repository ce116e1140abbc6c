"""PyTorch scripts built on complex numbers (tests/compat_scripts/complex) run unchanged with `torch`
meaning ember (tests/compat_scripts/run_as_ember.py): a Fourier neural operator with complex
parameters, and LLaMA-style rotary embeddings with an stft audio front end. Where torch is importable
it writes the initial weights, both frameworks train from them on the same deterministic data, and
the losses must agree (closely in float64)."""
import os
import subprocess
import sys

import ember
from harness import torch

CASES = []  # no OpCase rows: whole scripts

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "tests", "compat_scripts", "complex")
RUNNER = os.path.join(ROOT, "tests", "compat_scripts", "run_as_ember.py")
EMBER_PATH = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))
TORCH_PATH = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__))) if torch is not None else None


def _run(script, init, under):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    path = os.path.join(SCRIPTS, script)
    if under == "ember":
        env["PYTHONPATH"] = EMBER_PATH
        cmd = [sys.executable, RUNNER, path, init]
    else:
        env["PYTHONPATH"] = TORCH_PATH
        cmd = [sys.executable, path, init]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, f"{script} under {under} failed:\n{proc.stdout}\n{proc.stderr[-4000:]}"
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, f"{script} under {under}: no single RESULT line in\n{proc.stdout}"
    fields = lines[0].split()[1:]
    assert fields[0] == "ok", f"{script} under {under} ran but its checks failed:\n{proc.stdout}"
    return [float(v) for v in fields[1:]]


def _both(script, tmp_path):
    init = str(tmp_path / "init.pt")
    reference = _run(script, init, "torch") if torch is not None else None
    return _run(script, init, "ember"), reference


def test_fourier_neural_operator_matches_torch(tmp_path):
    (first, last, n_complex), reference = _both("fourier_neural_operator.py", tmp_path)
    assert last < 0.5 * first and n_complex == 6400
    if reference is not None:  # float64, the same weights and data: the same training
        assert abs(first - reference[0]) <= 1e-9 * reference[0]
        assert abs(last - reference[1]) <= 1e-6 * reference[1]


def test_rotary_embeddings_and_stft_match_torch(tmp_path):
    mine, reference = _both("rope_audio.py", tmp_path)
    if reference is not None:
        assert all(abs(a - b) < 1e-5 for a, b in zip(mine[:2], reference[:2]))  # the same weights, the same loss
        assert all(abs(a - b) < 5e-3 for a, b in zip(mine[2:], reference[2:]))  # float32 training agrees
