"""W5 `add`: out = a + b over 2^24 float32 on the CPU, in GB/s (3 x 4 bytes x n / time).

ember has no out= argument, so its figure includes allocating the result;
numpy is measured both ways: np.add(a, b, out=c) (the issue's target) and
a + b (allocating, like ember)."""
import numpy as np

import ember

from bench.timing import interleaved_medians, optional_torch, ratio


def run(n=1 << 24, repeats=15):
    torch = optional_torch()
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    c = np.empty_like(a)
    ea, eb = ember.from_numpy(a), ember.from_numpy(b)
    fns = {"ember": lambda: ea + eb, "ember_add_fn": lambda: ember.add(ea, eb),
           "numpy_out": lambda: np.add(a, b, out=c), "numpy_alloc": lambda: a + b}
    if torch is not None:
        ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(c)
        fns["torch"] = lambda: ta + tb
        fns["torch_out"] = lambda: torch.add(ta, tb, out=tc)
    seconds = interleaved_medians(fns, repeats, warmup=3)
    out = {"workload": "add", "device": "cpu", "n": n, "unit": "GB/s", "threads": ember.get_num_threads()}
    out.update({name: round(3 * 4 * n / s / 1e9, 2) for name, s in seconds.items()})
    out["ember/numpy_out"] = ratio(out["ember"], out["numpy_out"])
    out["ember/numpy_alloc"] = ratio(out["ember"], out["numpy_alloc"])
    out["ember/torch"] = ratio(out["ember"], out.get("torch"))
    return out
