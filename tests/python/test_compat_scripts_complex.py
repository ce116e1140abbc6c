"""PyTorch scripts built on complex numbers (tests/compat_scripts/complex) run unchanged with `torch`
meaning ember (tests/compat_scripts/run_as_ember.py): a Fourier neural operator with complex
parameters, and LLaMA-style rotary embeddings with an stft audio front end. Where torch is importable
it writes the initial weights, both frameworks train from them on the same deterministic data, and
the losses must agree (closely in float64)."""
import os

from compat_run import ROOT, run_script
from harness import torch

CASES = []  # no OpCase rows: whole scripts

SCRIPTS = os.path.join(ROOT, "tests", "compat_scripts", "complex")


def _run(script, init, under):
    fields, _ = run_script(os.path.join(SCRIPTS, script), init, under=under, timeout=180)
    return [float(v) for v in fields]


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
