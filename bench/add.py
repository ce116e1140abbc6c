"""W5 `add`: out = a + b over 2^24 float32 on the CPU, in GB/s (3 x 4 bytes x n / time).

ember has no out= argument, so its figure includes allocating the result;
numpy is measured both ways: np.add(a, b, out=c) (the issue's target) and
a + b (allocating, like ember)."""
import numpy as np

import ember

from bench.timing import median_seconds, optional_torch, ratio


def run(n=1 << 24, repeats=15):
    torch = optional_torch()
    gbs = lambda s: round(3 * 4 * n / s / 1e9, 2)  # noqa: E731
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    c = np.empty_like(a)
    ea, eb = ember.from_numpy(a), ember.from_numpy(b)
    out = {"workload": "add", "device": "cpu", "n": n, "unit": "GB/s", "threads": ember.get_num_threads(),
           "ember": gbs(median_seconds(lambda: ea + eb, repeats, warmup=3)),
           "ember_add_fn": gbs(median_seconds(lambda: ember.add(ea, eb), repeats, warmup=3)),
           "numpy_out": gbs(median_seconds(lambda: np.add(a, b, out=c), repeats, warmup=3)),
           "numpy_alloc": gbs(median_seconds(lambda: a + b, repeats, warmup=3))}
    if torch is not None:
        ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(c)
        out["torch"] = gbs(median_seconds(lambda: ta + tb, repeats, warmup=3))
        out["torch_out"] = gbs(median_seconds(lambda: torch.add(ta, tb, out=tc), repeats, warmup=3))
    out["ember/numpy_out"] = ratio(out["ember"], out["numpy_out"])
    out["ember/numpy_alloc"] = ratio(out["ember"], out["numpy_alloc"])
    out["ember/torch"] = ratio(out["ember"], out.get("torch"))
    return out
