"""scaled_dot_product_attention forward + backward at W3's shape (batch 8, 12 heads, 1024 tokens,
head size 64, causal, bfloat16): ember's fused kernels (the mma.sync ones and the first, wmma,
ones: EMBER_FLASH_KERNELS=wmma), ember's math path and PyTorch's (when importable), forward +
backward and forward alone, one JSON line with ms per call, the attention TFLOP/s and peak memory.

    PYTHONPATH=python python -m bench.attention [--batch 8 --heads 12 --seq 1024 --head-dim 64]

Not one of BENCHMARKS.md's workloads: a probe of the kernel behind W3. Needs a CUDA GPU.
"""
import argparse
import json
import os
import sys

if __package__ in (None, ""):  # run as a script: python bench/attention.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import ember  # noqa: E402

from bench.timing import interleaved_medians, optional_torch, ratio, synchronized  # noqa: E402


def step(fw, sdpa, q, k, v, g):
    def run():
        for t in (q, k, v):
            t.grad = None
        out = sdpa(q, k, v, is_causal=True)
        out.backward(g)
    return run


def forward_only(fw, sdpa, q, k, v):
    def run():
        with fw.no_grad():
            sdpa(q, k, v, is_causal=True)
    return run


def with_wmma_kernels(fn):
    """fn with ember's first (wmma) attention kernels: cuda/attention.cu reads the variable per call."""
    def run():
        os.environ["EMBER_FLASH_KERNELS"] = "wmma"
        try:
            fn()
        finally:
            del os.environ["EMBER_FLASH_KERNELS"]
    return run


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--head-dim", type=int, default=64)
    args = p.parse_args(argv)
    if not ember.cuda.is_available():
        print(json.dumps({"workload": "sdpa", "skipped": "needs a CUDA GPU"}))
        return
    shape = (args.batch, args.heads, args.seq, args.head_dim)
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(shape).astype(np.float32) for _ in range(4)]
    F = ember.nn.functional
    eq, ek, ev, eg = (ember.tensor(a).to("cuda", ember.bfloat16) for a in data)
    for t in (eq, ek, ev):
        t.requires_grad_(True)

    def ember_math():
        ember.backends.cuda.enable_flash_sdp(False)
        try:
            step(ember, F.scaled_dot_product_attention, eq, ek, ev, eg)()
        finally:
            ember.backends.cuda.enable_flash_sdp(True)

    sdpa = F.scaled_dot_product_attention
    fns = {"ember_fused": synchronized(ember, step(ember, sdpa, eq, ek, ev, eg), "cuda"),
           "ember_fused_wmma": synchronized(ember, with_wmma_kernels(step(ember, sdpa, eq, ek, ev, eg)), "cuda"),
           "ember_fused_fwd": synchronized(ember, forward_only(ember, sdpa, eq, ek, ev), "cuda"),
           "ember_fused_wmma_fwd": synchronized(ember, with_wmma_kernels(forward_only(ember, sdpa, eq, ek, ev)),
                                                "cuda"),
           "ember_math": synchronized(ember, ember_math, "cuda")}
    torch = optional_torch()
    if torch is not None and torch.cuda.is_available():
        tq, tk, tv, tg = (torch.tensor(a, device="cuda", dtype=torch.bfloat16) for a in data)
        for t in (tq, tk, tv):
            t.requires_grad_(True)
        tsdpa = torch.nn.functional.scaled_dot_product_attention
        fns["torch"] = synchronized(torch, step(torch, tsdpa, tq, tk, tv, tg), "cuda")
        fns["torch_fwd"] = synchronized(torch, forward_only(torch, tsdpa, tq, tk, tv), "cuda")
    times = interleaved_medians(fns, repeats=10, warmup=3)
    ember.cuda.reset_peak_memory_stats()
    before = ember.cuda.memory_allocated()
    fns["ember_fused"]()
    peak = ember.cuda.max_memory_allocated() - before
    b, h, n, d = shape
    flop = 4 * b * h * n * n * d / 2 * 3.5  # causal: half the products; backward = 2.5x the forward
    out = {"workload": "sdpa", "shape": list(shape), "dtype": "bfloat16", "causal": True}
    out.update({f"{name}_ms": round(seconds * 1e3, 3) for name, seconds in times.items()})
    out["ember_fused_tflops"] = round(flop / times["ember_fused"] / 1e12, 1)
    out["ember_fused_extra_peak_mib"] = round(peak / 2**20, 1)
    out["mma/wmma"] = ratio(times["ember_fused"], times["ember_fused_wmma"])
    out["mma/wmma_fwd"] = ratio(times["ember_fused_fwd"], times["ember_fused_wmma_fwd"])
    if "torch" in times:
        out["ratio"] = ratio(times["ember_fused"], times["torch"])
        out["ratio_fwd"] = ratio(times["ember_fused_fwd"], times["torch_fwd"])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
