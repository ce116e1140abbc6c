"""Sequence / NLP / RL / probabilistic PyTorch scripts (tests/compat_scripts/seq) run unchanged with
`torch` meaning ember (tests/compat_scripts/run_as_ember.py), each in a subprocess with a timeout.
Every script checks its own outcome (loss falls, shapes, generated length, DDP ranks agree) and ends
with a line "RESULT ok ..."; where torch is importable each also runs under torch, and the two agree
where they can: char_rnn, gpt_kv_cache and time_sequence_lbfgs start from weights torch saved and
must give torch's initial loss (time_sequence_lbfgs, deterministic float64, torch's final losses)."""
import os
import re
import socket

import pytest

import ember.distributed as dist
from compat_run import run_script
from harness import torch

CASES = []  # no OpCase rows: whole scripts

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "tests", "compat_scripts", "seq")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def _run(script, *args, under="ember", timeout=60):
    """Runs a script under ember (through the runner) or torch; returns the fields of its RESULT line."""
    return run_script(os.path.join(SCRIPTS, script), *args, under=under, timeout=timeout)


UNDER = ["ember"] + (["torch"] if torch is not None else [])


@pytest.mark.parametrize("under", UNDER)
@pytest.mark.parametrize("script", ["seq2seq_attention.py", "bert_mlm.py", "reinforce_vae_flow.py",
                                    "a3c_hogwild.py", "word2vec_crf.py"])
def test_script_runs_to_its_checks(script, under):
    _run(script, under=under, timeout=60 if under == "ember" else 180)


@pytest.mark.parametrize("under", UNDER)
def test_ddp_ctc_spawned_ranks_agree(under):
    if under == "ember" and not dist.is_gloo_available():  # the script asks for gloo by name
        pytest.skip("ember was built without gloo (install libgloo-dev and rebuild)")
    _, out = _run("ddp_ctc.py", _free_port(), under=under, timeout=60 if under == "ember" else 180)
    ranks = re.findall(r"rank (\d) loss .* ranks agree (\w+)", out)
    assert sorted(r for r, _ in ranks) == ["0", "1"] and all(a == "True" for _, a in ranks), out


def _with_shared_init(script, tmp_path):
    init = str(tmp_path / "init.pt")
    reference = None
    if torch is not None:  # torch writes the initial weights, ember starts from them
        reference, _ = _run(script, init, under="torch", timeout=180)
    fields, out = _run(script, init, under="ember")
    return fields, reference, out


def test_char_rnn_from_torch_weights(tmp_path):
    fields, reference, out = _with_shared_init("char_rnn.py", tmp_path)
    first, last = map(float, fields)
    assert last < first
    if reference is not None:
        t_first, t_last = map(float, reference)
        assert abs(first - t_first) < 1e-4  # the same weights evaluate the same before training
        assert abs(last - t_last) < 0.1  # dropout draws differ, the training does not


def test_gpt_kv_cache_from_torch_weights(tmp_path):
    fields, reference, out = _with_shared_init("gpt_kv_cache.py", tmp_path)
    n_params, init_loss = int(fields[0]), float(fields[1])
    assert n_params == 60960  # lm_head tied to the token embedding: counted once
    assert "cache_err" in out
    if reference is not None:
        assert int(reference[0]) == n_params
        assert abs(init_loss - float(reference[1])) < 1e-4


def test_time_sequence_lbfgs_matches_torch_from_the_same_weights(tmp_path):
    # float64 LSTMCells + LBFGS with line search: deterministic, so the losses agree closely
    fields, reference, _ = _with_shared_init("time_sequence_lbfgs.py", tmp_path)
    if reference is not None:
        for mine, theirs in zip(map(float, fields), map(float, reference)):
            assert abs(mine - theirs) <= 1e-6 * abs(theirs) + 1e-12, (fields, reference)
