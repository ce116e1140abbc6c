"""W1 `mlp`, W2 `cnn`, W3 `gpt`: milliseconds per training step (zero_grad,
forward, loss, backward, optimizer step), ember next to PyTorch when it is
importable, at BENCHMARKS.md's CPU or GPU sizes. Both frameworks build the same
models from examples/models.py, from the same initial weights' distribution
and data. On the GPU each step is timed to its last kernel's end, and W3 runs
as BENCHMARKS.md's target: bf16 autocast, scaled_dot_product_attention and a
fused AdamW, reporting peak memory too."""
import contextlib
import os
import sys

import numpy as np

import ember

from bench.timing import interleaved_medians, optional_torch, ratio, synchronized

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
import models  # noqa: E402

# BENCHMARKS.md's sizes.
GPT_CPU = dict(vocab_size=65, block_size=128, n_embd=192, n_layer=4, n_head=6)
GPT_GPU = dict(vocab_size=50257, block_size=1024, n_embd=768, n_layer=12, n_head=12)


def _make_step(fw, model, optimizer, inputs, targets, loss_of, autocast_dtype=None):
    def step():
        optimizer.zero_grad()
        region = fw.autocast("cuda", dtype=autocast_dtype) if autocast_dtype else contextlib.nullcontext()
        with region:
            loss = loss_of(model, inputs, targets)
        loss.backward()
        optimizer.step()
    return step


def _classifier_loss(fw):
    return lambda model, x, y: fw.nn.functional.cross_entropy(model(x), y)


def _gpt_loss(model, x, y):
    return model(x, y)[1]


def _workload(name, build, make_optimizer, x, y, loss_of, repeats, device="cpu", autocast_dtype=None):
    torch = optional_torch()
    fns = {}
    for label, fw in (("ember", ember), ("torch", torch)):
        if fw is None:
            continue
        fw.manual_seed(0)
        model = build(fw).to(device)
        inputs, targets = fw.from_numpy(x.copy()).to(device), fw.from_numpy(y.copy()).to(device)
        dtype = getattr(fw, autocast_dtype) if autocast_dtype else None
        step = _make_step(fw, model, make_optimizer(fw, model), inputs, targets, loss_of(fw), dtype)
        fns[label] = synchronized(fw, step, device)
    out = {"workload": name, "device": device, "unit": "ms/step"}
    if device == "cpu":
        out["threads"] = ember.get_num_threads()
    else:
        for fw in (ember, torch):
            if fw is not None:
                fw.cuda.reset_peak_memory_stats()
    seconds = interleaved_medians(fns, repeats, warmup=2)
    out.update({label: round(s * 1e3, 2) for label, s in seconds.items()})
    out["ember/torch"] = ratio(out["ember"], out.get("torch"))
    if device != "cpu":
        for label, fw in (("ember", ember), ("torch", torch)):
            if fw is not None:
                out[f"{label}_peak_MiB"] = round(fw.cuda.max_memory_allocated() / 2**20)
        out["peak ember/torch"] = ratio(out["ember_peak_MiB"], out.get("torch_peak_MiB"))
    return out


def run_mlp(batch=256, repeats=15, device="cpu"):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 784), dtype=np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    sgd = lambda fw, m: fw.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)  # noqa: E731
    return _workload("mlp", models.mlp, sgd, x, y, _classifier_loss, repeats, device)


def run_cnn(batch=None, repeats=7, device="cpu"):
    batch = batch or (64 if device == "cpu" else 128)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 1, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    sgd = lambda fw, m: fw.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)  # noqa: E731
    build = lambda fw: models.mnist_cnn(fw, dropout=False)  # noqa: E731
    return _workload("cnn", build, sgd, x, y, _classifier_loss, repeats, device)


def run_gpt(batch=None, repeats=5, device="cpu"):
    gpu = device != "cpu"
    size = GPT_GPU if gpu else GPT_CPU
    batch = batch or (8 if gpu else 16)
    rng = np.random.default_rng(0)
    shape = (batch, size["block_size"])
    x = rng.integers(0, size["vocab_size"], shape).astype(np.int64)
    y = rng.integers(0, size["vocab_size"], shape).astype(np.int64)
    adamw = lambda fw, m: fw.optim.AdamW(m.parameters(), lr=3e-4, fused=gpu or None)  # noqa: E731
    build = lambda fw: models.gpt(fw, **size, fused_attention=gpu)  # noqa: E731
    out = _workload("gpt", build, adamw, x, y, lambda fw: _gpt_loss, repeats, device,
                    autocast_dtype="bfloat16" if gpu else None)
    if gpu:
        out["config"] = "GPT-2 124M, batch 8, bf16 autocast, scaled_dot_product_attention, fused AdamW"
    return out
