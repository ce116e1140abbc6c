"""W5 `add`: out = a + b over 2^24 float32 on the CPU, in GB/s (3 x 4 bytes x n / time).

ember has no out= argument, so its figure includes allocating the result;
numpy is measured both ways: np.add(a, b, out=c) (the issue's target) and
a + b (allocating, like ember)."""
import numpy as np

import ember

from bench.timing import interleaved_medians, optional_torch, ratio, synchronized


def run(n=None, repeats=15, device="cpu"):
    if device != "cpu":
        return _run_gpu(n or 1 << 28, repeats, device)
    n = n or 1 << 24
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


def _run_gpu(n, repeats, device):
    """BENCHMARKS.md's GPU size: 2^28 floats; each sample is 10 adds timed to
    the last one's end."""
    torch = optional_torch()
    inner = 10

    def repeat(f):
        def run():
            for _ in range(inner):
                f()
        return run
    ea = ember.randn(n, device=device)
    eb = ember.randn(n, device=device)
    fns = {"ember": synchronized(ember, repeat(lambda: ea + eb), device)}
    if torch is not None:
        ta = torch.randn(n, device=device)
        tb = torch.randn(n, device=device)
        fns["torch"] = synchronized(torch, repeat(lambda: ta + tb), device)
    seconds = interleaved_medians(fns, repeats, warmup=2)
    out = {"workload": "add", "device": device, "n": n, "unit": "GB/s"}
    out.update({name: round(3 * 4 * n * inner / s / 1e9, 1) for name, s in seconds.items()})
    out["ember/torch"] = ratio(out["ember"], out.get("torch"))
    return out
