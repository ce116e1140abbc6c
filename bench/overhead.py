"""W6 `overhead`: a chain of 100 `u = u + 1.0` on a 16-element tensor, in µs per op.
What it measures is the fixed cost of one op from Python: argument conversion,
checks, allocation, dispatch (and, on the GPU, the kernel launch: the chain is
timed to its last kernel's end)."""
import numpy as np

import ember

from bench.timing import interleaved_medians, optional_torch, ratio, synchronized

CHAIN = 100


def _chain(u):
    for _ in range(CHAIN):
        u = u + 1.0
    return u


def run(repeats=50, device="cpu"):
    torch = optional_torch()
    us = lambda s: round(s / CHAIN * 1e6, 3)  # noqa: E731
    eu = ember.ones(16, device=device)
    fns = {"ember": synchronized(ember, lambda: _chain(eu), device)}
    if device == "cpu":
        nu = np.ones(16, dtype=np.float32)
        fns["numpy"] = lambda: _chain(nu)
    if torch is not None:
        tu = torch.ones(16, device=device)
        fns["torch"] = synchronized(torch, lambda: _chain(tu), device)
    seconds = interleaved_medians(fns, repeats, warmup=5)
    out = {"workload": "overhead", "device": device, "unit": "us/op"}
    out.update({name: us(s) for name, s in seconds.items()})
    out["ember/numpy"] = ratio(out["ember"], out.get("numpy"))
    out["ember/torch"] = ratio(out["ember"], out.get("torch"))
    return out
