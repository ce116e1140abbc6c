"""W4 `matmul`: square fp32 GEMM on the CPU, n = 512 and 2048, in GFLOP/s."""
import time

import numpy as np

import ember

from bench.timing import median_seconds, optional_torch, ratio


def _gflops(n, seconds):
    return round(2.0 * n**3 / seconds / 1e9, 1)


def _settle():
    # Each library has its own BLAS thread pool, and OpenBLAS threads spin for
    # a while after a call: let them go idle before timing the next library.
    time.sleep(0.5)


def run(sizes=(512, 2048), repeats=7):
    torch = optional_torch()
    out = {"workload": "matmul", "device": "cpu", "dtype": "float32", "unit": "GFLOP/s",
           "threads": ember.get_num_threads(), "blas": ember._C._blas_info()}
    rng = np.random.default_rng(0)
    for n in sizes:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        ea, eb = ember.from_numpy(a), ember.from_numpy(b)
        inner = max(1, int(2e9 // (2 * n**3)))  # about 10 ms of work per sample at 200 GFLOP/s
        row = {"ember": _gflops(n, median_seconds(lambda: ea @ eb, repeats, inner=inner))}
        _settle()
        row["numpy"] = _gflops(n, median_seconds(lambda: a @ b, repeats, inner=inner))
        _settle()
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            row["torch"] = _gflops(n, median_seconds(lambda: ta @ tb, repeats, inner=inner))
            _settle()
        row["ember/numpy"] = ratio(row["ember"], row["numpy"])
        row["ember/torch"] = ratio(row["ember"], row.get("torch"))
        out[f"n{n}"] = row
    return out
