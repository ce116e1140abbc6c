"""W6 `overhead`: a chain of 100 `u = u + 1.0` on a 16-element tensor, in µs per op.
What it measures is the fixed cost of one op from Python: argument conversion,
checks, allocation, dispatch."""
import numpy as np

import ember

from bench.timing import interleaved_medians, optional_torch, ratio

CHAIN = 100


def _chain(u):
    for _ in range(CHAIN):
        u = u + 1.0
    return u


def run(repeats=50):
    torch = optional_torch()
    us = lambda s: round(s / CHAIN * 1e6, 3)  # noqa: E731
    eu, nu = ember.ones(16), np.ones(16, dtype=np.float32)
    fns = {"ember": lambda: _chain(eu), "numpy": lambda: _chain(nu)}
    if torch is not None:
        tu = torch.ones(16)
        fns["torch"] = lambda: _chain(tu)
    seconds = interleaved_medians(fns, repeats, warmup=5)
    out = {"workload": "overhead", "device": "cpu", "unit": "us/op"}
    out.update({name: us(s) for name, s in seconds.items()})
    out["ember/numpy"] = ratio(out["ember"], out["numpy"])
    out["ember/torch"] = ratio(out["ember"], out.get("torch"))
    return out
