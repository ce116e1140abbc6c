"""Normalization forward + backward with every gradient (input, weight, bias): layer_norm at GPT-2's
shape ([8, 1024, 768]: the 25 LayerNorms of a training step, whose weight and bias gradients are
column sums over 8,192 rows) and batch_norm in training at ResNet's first stage ([128, 64, 56, 56]:
few channels of many values), ember next to PyTorch (when importable). One JSON line per workload
with ms per call.

    PYTHONPATH=python python -m bench.norm [--device cpu|cuda] [--dtype float32|bfloat16] [--small]

Not one of BENCHMARKS.md's workloads: a probe of the kernels behind the models' norm layers.
--small shrinks both shapes (for a quick run on the CPU).
"""
import argparse
import json
import os
import sys

if __package__ in (None, ""):  # run as a script: python bench/norm.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402

from bench.timing import interleaved_medians, optional_torch, ratio, synchronized  # noqa: E402


def layer_norm_step(fw, shape, dtype, device):
    cols = shape[-1]
    x = fw.randn(*shape, device=device).to(dtype).requires_grad_()
    w = fw.randn(cols, device=device).to(dtype).requires_grad_()
    b = fw.randn(cols, device=device).to(dtype).requires_grad_()
    g = fw.randn(*shape, device=device).to(dtype)

    def run():
        x.grad = w.grad = b.grad = None
        fw.nn.functional.layer_norm(x, (cols,), w, b).backward(g)
    return run


def batch_norm_step(fw, shape, dtype, device):
    c = shape[1]
    x = fw.randn(*shape, device=device).to(dtype).requires_grad_()
    w = fw.ones(c, device=device).requires_grad_()
    b = fw.zeros(c, device=device).requires_grad_()
    rm = fw.zeros(c, device=device)
    rv = fw.ones(c, device=device)
    g = fw.randn(*shape, device=device).to(dtype)

    def run():
        x.grad = w.grad = b.grad = None
        fw.nn.functional.batch_norm(x, rm, rv, w, b, training=True).backward(g)
    return run


def measure(name, make_step, shape, dtype_name, device):
    fns = {"ember": synchronized(ember, make_step(ember, shape, getattr(ember, dtype_name), device), device)}
    torch = optional_torch()
    if torch is not None:
        fns["torch"] = synchronized(torch, make_step(torch, shape, getattr(torch, dtype_name), device), device)
    times = interleaved_medians(fns, repeats=7, warmup=2)
    out = {"workload": name, "device": device, "shape": list(shape), "dtype": dtype_name,
           "unit": "ms (forward + backward)"}
    out.update({k: round(s * 1e3, 3) for k, s in times.items()})
    out["ember/torch"] = ratio(times["ember"], times.get("torch"))
    print(json.dumps(out))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args(argv)
    ln_shape = (2, 256, 768) if args.small else (8, 1024, 768)
    bn_shape = (8, 64, 28, 28) if args.small else (128, 64, 56, 56)
    measure("layer_norm", layer_norm_step, ln_shape, args.dtype, args.device)
    measure("batch_norm", batch_norm_step, bn_shape, args.dtype, args.device)


if __name__ == "__main__":
    main()
