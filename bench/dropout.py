"""Dropout forward + backward over n float32 elements: the fused native_dropout (one pass writing
the output and a bool mask; one pass for the gradient), the composition it replaced (zeros,
bernoulli_, mul_ and mul: a float mask of the input's size) and PyTorch's (when importable). One
JSON line with ms per call.

    PYTHONPATH=python python -m bench.dropout [--n 16777216] [--p 0.1] [--device cpu|cuda]

Not one of BENCHMARKS.md's workloads: a probe of the kernel behind the models' dropout layers.
"""
import argparse
import json
import os
import sys

if __package__ in (None, ""):  # run as a script: python bench/dropout.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402

from bench.timing import interleaved_medians, optional_torch, ratio, synchronized  # noqa: E402


def composed_dropout(x, p):
    """The pre-fusion dropout: four passes and a float mask kept for backward."""
    mask = ember.zeros(x.shape, dtype=x.dtype, device=x.device)
    mask.bernoulli_(1.0 - p)
    mask.mul_(1.0 / (1.0 - p))
    return x * mask


def step(fw, dropout, x, g, p):
    def run():
        x.grad = None
        dropout(x, p).backward(g)
    return run


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1 << 24)
    parser.add_argument("--p", type=float, default=0.1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    n, p, device = args.n, args.p, args.device
    x = ember.randn(n, device=device).requires_grad_()
    g = ember.randn(n, device=device)
    fns = {
        "ember_fused": synchronized(ember, step(ember, lambda t, q: ember.native_dropout(t, q, True)[0], x, g, p),
                                    device),
        "ember_composed": synchronized(ember, step(ember, composed_dropout, x, g, p), device),
    }
    torch = optional_torch()
    if torch is not None:
        tx = torch.randn(n, device=device).requires_grad_()
        tg = torch.randn(n, device=device)
        fns["torch"] = synchronized(torch, step(torch, lambda t, q: torch.nn.functional.dropout(t, q), tx, tg, p),
                                    device)
    times = interleaved_medians(fns, repeats=7, warmup=2)
    out = {"workload": "dropout", "device": device, "n": n, "p": p, "unit": "ms (forward + backward)"}
    out.update({name: round(s * 1e3, 3) for name, s in times.items()})
    out["fused/composed"] = ratio(times["ember_fused"], times["ember_composed"])
    out["fused/torch"] = ratio(times["ember_fused"], times.get("torch"))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
