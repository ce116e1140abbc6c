"""python -m ember.utils.collect_env: runs, prints its sections, and finds
each kind of mismatch (checked on made-up facts, so every verdict is tested
on any machine)."""
import copy
import subprocess
import sys

import ember
from ember.utils import collect_env


def test_runs_and_prints_every_section():
    out = subprocess.run([sys.executable, "-m", "ember.utils.collect_env"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for section in ("== ember", "== Python and system", "== CUDA", "== Verdict"):
        assert section in text
    assert f"version:                  {ember.__version__}" in text
    assert "BLAS:" in text and "Python:" in text and "GPUs:" in text
    verdict = text.split("== Verdict", 1)[1]
    assert ("PROBLEM:" in verdict) != ("OK:" in verdict)


def test_this_machine_gets_a_sensible_verdict():
    facts = collect_env.gather()
    problems = collect_env.verdicts(facts)
    if facts["build"]["cuda"] != "ON":
        assert problems and problems[0].startswith("built without CUDA")
    elif facts["device_count"] == 0:
        assert any(p.startswith(("no NVIDIA driver", "driver older than runtime", "no CUDA GPU")) for p in problems)
    else:
        assert all(g.get("name") or g.get("error") for g in facts["gpus"])


GOOD = {
    "ember_version": "0.1.0", "ember_location": "/x", "python": "3.12", "platform": "Linux", "os": "Debian",
    "numpy": "2.0", "torch": "",
    "build": {"version": "0.1.0", "build_type": "Release", "compiler": "GNU 12", "cuda": "ON",
              "cuda_toolkit": "13.0.88", "cuda_compiler": "NVIDIA 13.0.88", "cuda_archs": "sm_90;compute_90",
              "cudnn": "9.19.0", "nccl": "2.28.9", "gloo": "ON", "blas": "openblas"},
    "cuda_runtime": 13000, "cuda_driver": 13000, "kernel_driver": "580.65", "cudnn_loaded": 91900,
    "device_count": 1, "unavailable_reason": "", "cuda_visible_devices": None, "launch_blocking": "",
    "gpus": [{"index": 0, "name": "NVIDIA H200", "major": 9, "minor": 0, "total_memory": 150 * 2**30,
              "sm_count": 132, "arch_problem": "", "error": ""}],
}


def facts_with(**changes):
    f = copy.deepcopy(GOOD)
    for key, value in changes.items():
        if key.startswith("build_"):
            f["build"][key[len("build_"):]] = value
        else:
            f[key] = value
    return f


def test_a_good_setup_has_no_problems():
    assert collect_env.verdicts(GOOD) == []
    text = collect_env.report(GOOD)
    assert "OK: the build, the driver and the GPUs fit together" in text
    assert "cuda:0: NVIDIA H200, compute capability 9.0 (compiled for), 150.0 GiB, 132 SMs" in text
    assert "driver supports CUDA:     13.0" in text


def test_each_mismatch_gets_its_verdict():
    v = collect_env.verdicts
    assert v(facts_with(build_cuda="OFF"))[0].startswith("built without CUDA")
    assert v(facts_with(cuda_driver=0, device_count=0, gpus=[]))[0].startswith("no NVIDIA driver")
    old = v(facts_with(cuda_driver=12040, device_count=0, gpus=[]))
    assert old[0].startswith("driver older than runtime") and "12.4" in old[0] and "13.0" in old[0]
    none = v(facts_with(device_count=0, gpus=[], cuda_visible_devices="", unavailable_reason="no GPU"))
    assert none[0].startswith("no CUDA GPU") and "CUDA_VISIBLE_DEVICES=''" in none[0]
    t4 = dict(GOOD["gpus"][0], name="Tesla T4", major=7, minor=5,
              arch_problem="ember.cuda: GPU 0 (Tesla T4) ... EMBER_CUDA_ARCHS=75 pip install .")
    arch = v(facts_with(gpus=[t4]))
    assert arch[0].startswith("GPU arch not compiled") and "EMBER_CUDA_ARCHS=75" in arch[0]
    assert "compute capability 7.5 (no code in this build)" in collect_env.report(facts_with(gpus=[t4]))
    broken = v(facts_with(gpus=[{"index": 0, "error": "CUDA error: unknown error"}]))
    assert broken[0].startswith("GPU cuda:0 cannot be used")
    assert v(facts_with(build_cudnn=""))[0].startswith("cuDNN missing")
    assert v(facts_with(cudnn_loaded=80900))[0].startswith("cuDNN mismatch")
    text = collect_env.report(facts_with(cuda_driver=0, device_count=0, gpus=[]))
    assert "PROBLEM: no NVIDIA driver" in text and "no driver found" in text
