"""W1 `mlp`, W2 `cnn`, W3 `gpt` at their CPU sizes: milliseconds per training
step (zero_grad, forward, loss, backward, optimizer step), ember next to
PyTorch when it is importable. Both frameworks build the same models from
examples/models.py, from the same initial weights' distribution and data."""
import os
import sys

import numpy as np

import ember

from bench.timing import interleaved_medians, optional_torch, ratio

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
import models  # noqa: E402

# BENCHMARKS.md, CPU sizes.
GPT_CPU = dict(vocab_size=65, block_size=128, n_embd=192, n_layer=4, n_head=6)


def _make_step(fw, model, optimizer, inputs, targets, loss_of):
    def step():
        optimizer.zero_grad()
        loss = loss_of(model, inputs, targets)
        loss.backward()
        optimizer.step()
    return step


def _classifier_loss(fw):
    return lambda model, x, y: fw.nn.functional.cross_entropy(model(x), y)


def _gpt_loss(model, x, y):
    return model(x, y)[1]


def _workload(name, build, make_optimizer, x, y, loss_of, repeats):
    torch = optional_torch()
    fns = {}
    for label, fw in (("ember", ember), ("torch", torch)):
        if fw is None:
            continue
        fw.manual_seed(0)
        model = build(fw)
        inputs, targets = fw.from_numpy(x.copy()), fw.from_numpy(y.copy())
        fns[label] = _make_step(fw, model, make_optimizer(fw, model), inputs, targets, loss_of(fw))
    seconds = interleaved_medians(fns, repeats, warmup=2)
    out = {"workload": name, "device": "cpu", "unit": "ms/step", "threads": ember.get_num_threads()}
    out.update({label: round(s * 1e3, 2) for label, s in seconds.items()})
    out["ember/torch"] = ratio(out["ember"], out.get("torch"))
    return out


def run_mlp(batch=256, repeats=15):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 784), dtype=np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    sgd = lambda fw, m: fw.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)  # noqa: E731
    return _workload("mlp", models.mlp, sgd, x, y, _classifier_loss, repeats)


def run_cnn(batch=64, repeats=7):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 1, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    sgd = lambda fw, m: fw.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)  # noqa: E731
    build = lambda fw: models.mnist_cnn(fw, dropout=False)  # noqa: E731
    return _workload("cnn", build, sgd, x, y, _classifier_loss, repeats)


def run_gpt(batch=16, repeats=5):
    rng = np.random.default_rng(0)
    shape = (batch, GPT_CPU["block_size"])
    x = rng.integers(0, GPT_CPU["vocab_size"], shape).astype(np.int64)
    y = rng.integers(0, GPT_CPU["vocab_size"], shape).astype(np.int64)
    adamw = lambda fw, m: fw.optim.AdamW(m.parameters(), lr=3e-4)  # noqa: E731
    build = lambda fw: models.gpt(fw, **GPT_CPU)  # noqa: E731
    return _workload("gpt", build, adamw, x, y, lambda fw: _gpt_loss, repeats)
