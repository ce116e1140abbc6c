"""W6 `overhead`: a chain of 100 `u = u + 1.0` on a 16-element tensor, in µs per op.
What it measures is the fixed cost of one op from Python: argument conversion,
checks, allocation, dispatch."""
import numpy as np

import ember

from bench.timing import median_seconds, optional_torch, ratio

CHAIN = 100


def _chain(u):
    for _ in range(CHAIN):
        u = u + 1.0
    return u


def run(repeats=50):
    torch = optional_torch()
    us = lambda s: round(s / CHAIN * 1e6, 3)  # noqa: E731
    eu, nu = ember.ones(16), np.ones(16, dtype=np.float32)
    out = {"workload": "overhead", "device": "cpu", "unit": "us/op",
           "ember": us(median_seconds(lambda: _chain(eu), repeats, warmup=5)),
           "numpy": us(median_seconds(lambda: _chain(nu), repeats, warmup=5))}
    if torch is not None:
        tu = torch.ones(16)
        out["torch"] = us(median_seconds(lambda: _chain(tu), repeats, warmup=5))
    out["ember/numpy"] = ratio(out["ember"], out["numpy"])
    out["ember/torch"] = ratio(out["ember"], out.get("torch"))
    return out
