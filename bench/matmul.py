"""W4 `matmul`: square fp32 GEMM on the CPU, n = 512 and 2048, in GFLOP/s."""
import numpy as np

import ember

from bench.timing import interleaved_medians, optional_torch, ratio


def run(sizes=(512, 2048), repeats=9):
    torch = optional_torch()
    out = {"workload": "matmul", "device": "cpu", "dtype": "float32", "unit": "GFLOP/s",
           "threads": ember.get_num_threads(), "blas": ember._C._blas_info()}
    rng = np.random.default_rng(0)
    for n in sizes:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        ea, eb = ember.from_numpy(a), ember.from_numpy(b)
        fns = {"ember": lambda: ea @ eb, "numpy": lambda: a @ b}
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            fns["torch"] = lambda: ta @ tb
        inner = max(1, int(4e9 // (2 * n**3)))  # about 20 ms of work per sample at 200 GFLOP/s
        # Each library has its own BLAS thread pool, and OpenBLAS threads spin
        # for a while after a call: let them go idle before timing the next one.
        seconds = interleaved_medians(fns, repeats, inner=inner, settle=0.2)
        row = {name: round(2.0 * n**3 / s / 1e9, 1) for name, s in seconds.items()}
        row["ember/numpy"] = ratio(row["ember"], row["numpy"])
        row["ember/torch"] = ratio(row["ember"], row.get("torch"))
        out[f"n{n}"] = row
    return out
