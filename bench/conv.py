"""W2's conv layers: the MNIST convnet's conv(1->32, 3x3), conv(32->64, 3x3)
and 2x2 max pool at batch 64 on 28x28, forward and forward+backward, in ms.

    PYTHONPATH=python python -m bench.conv [--threads N]
"""
import argparse
import json
import os
import sys

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402
from ember._C import _nn as F  # noqa: E402

from bench.timing import interleaved_medians, optional_torch  # noqa: E402


def layers(lib, fn):
    """(name, forward, forward+backward) closures for one library's functional API."""
    lib.manual_seed(0)
    x = lib.randn(64, 1, 28, 28)
    w1, b1 = lib.randn(32, 1, 3, 3).requires_grad_(), lib.randn(32).requires_grad_()
    w2, b2 = (lib.randn(64, 32, 3, 3) * 0.1).requires_grad_(), lib.randn(64).requires_grad_()
    h1 = fn.conv2d(x, w1, b1).relu().detach().requires_grad_()
    h2 = fn.conv2d(h1, w2, b2).relu().detach().requires_grad_()
    g1, g2, gp = lib.randn(64, 32, 26, 26), lib.randn(64, 64, 24, 24), lib.randn(64, 64, 12, 12)

    def no_grad(f):
        def run():
            with lib.no_grad():
                f()
        return run

    return {
        "conv1 fwd": no_grad(lambda: fn.conv2d(x, w1, b1)),
        "conv1 fwd+bwd": lambda: fn.conv2d(x, w1, b1).backward(g1),
        "conv2 fwd": no_grad(lambda: fn.conv2d(h1, w2, b2)),
        "conv2 fwd+bwd": lambda: fn.conv2d(h1, w2, b2).backward(g2),
        "pool fwd": no_grad(lambda: fn.max_pool2d(h2, 2)),
        "pool fwd+bwd": lambda: fn.max_pool2d(h2, 2).backward(gp),
    }


def run(repeats=7):
    out = {"workload": "conv", "device": "cpu", "dtype": "float32", "unit": "ms", "batch": 64,
           "threads": ember.get_num_threads()}
    fns = {f"ember {k}": v for k, v in layers(ember, F).items()}
    torch = optional_torch()
    if torch is not None:
        fns.update({f"torch {k}": v for k, v in layers(torch, torch.nn.functional).items()})
    for name, s in interleaved_medians(fns, repeats).items():
        out[name] = round(s * 1000, 2)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        ember.set_num_threads(args.threads)
    print(json.dumps({"id": "W2-conv", **run()}))
