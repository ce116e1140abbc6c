"""Typical PyTorch vision training scripts (tests/compat_scripts/vision/, pure PyTorch) run unchanged on
ember through tests/compat_scripts/run_as_ember.py; when torch is importable they also run under torch
first, and ember, started from the same weights and data, must print the same numbers."""
import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "tests", "compat_scripts", "vision")
RUNNER = os.path.join(ROOT, "tests", "compat_scripts", "run_as_ember.py")
EMBER_PATH = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))
TIMEOUT = 120

# script -> {printed key: absolute tolerance of each number against torch's}. Keys whose values depend on
# the random stream (torch's and ember's generators differ) are only checked by the scripts' own asserts.
COMPARED = {
    "dcgan": {"losses": 2e-3, "sample_mean": 2e-3},
    "unet": {"losses": 1e-3, "iou": 0.02},
    "resnet": {"init_eval": 1e-4, "probe_losses": 1e-3},
    "vit": {"groups": 0, "init_logits": 1e-4, "init_pos_embed_6x6": 1e-5, "init_logits_bf16": 0.03,
            "probe_losses": 1e-3},
    "volume_style": {"volume_losses": 1e-3, "volume_acc": 0, "style_losses": 1e-4},
    "autoencoder": {},  # seeded runs compared within each framework (identical losses for one seed)
}
NEEDS = {"autoencoder": ["tensorboard"]}  # what torch needs besides torch for the script


def _torch_dir():
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None or "ember" in spec.origin:
        return None
    return os.path.dirname(os.path.dirname(spec.origin))


def _run(argv, pythonpath, cwd):
    env = dict(os.environ, PYTHONPATH=pythonpath, OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable] + argv, capture_output=True, text=True, timeout=TIMEOUT, env=env,
                          cwd=cwd)
    assert proc.returncode == 0, f"{argv[-2:]} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def _values(stdout):
    """{key: [numbers]} from the script's "key v v,v ..." lines."""
    out = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and re.fullmatch(r"[a-z_0-9]+", parts[0]):
            try:
                out[parts[0]] = [float(v) for p in parts[1:] for v in p.split(",")]
            except ValueError:
                pass
    return out


@pytest.mark.parametrize("name", sorted(COMPARED))
def test_vision_script_runs_unchanged(name, tmp_path):
    script = os.path.join(SCRIPTS, name + ".py")
    # The weights file torch writes is the one ember reads; log directories are per framework.
    arg = str(tmp_path / "init.pt")
    torch_arg, ember_arg = (str(tmp_path / "torch_logs"), str(tmp_path / "ember_logs")) if name == "autoencoder" \
        else (arg, arg)
    torch_dir = _torch_dir()
    reference = None
    if torch_dir is not None and all(importlib.util.find_spec(m) for m in NEEDS.get(name, [])):
        torch_path = os.pathsep.join([torch_dir, os.environ.get("PYTHONPATH", "")])  # and tensorboard's
        torch_out = _run([script, torch_arg], torch_path, str(tmp_path))
        assert f"OK {name}" in torch_out
        reference = _values(torch_out)
    ember_out = _run([RUNNER, script, ember_arg], EMBER_PATH, str(tmp_path))
    assert f"OK {name}" in ember_out, ember_out[-2000:]
    got = _values(ember_out)
    for key, atol in COMPARED[name].items():
        assert key in got, f"{name}: ember printed no {key!r}"
        if reference is not None:
            np.testing.assert_allclose(got[key], reference[key], rtol=1e-3, atol=atol, err_msg=f"{name}: {key}")


def test_runner_aliases_torch_submodules(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "from torch.utils.data import DataLoader\nfrom torch.utils.tensorboard import SummaryWriter\n"
        "import torch.optim.lr_scheduler as sched\n"
        "print(torch.__name__, nn.__name__, F.__name__, DataLoader.__module__, SummaryWriter.__module__,"
        " sched.__name__)\n")
    out = _run([RUNNER, str(script)], EMBER_PATH, str(tmp_path)).split()
    assert out == ["ember", "ember.nn", "ember.nn.functional", "ember.utils.data.dataloader",
                   "ember.utils.tensorboard.writer", "ember.optim.lr_scheduler"]
