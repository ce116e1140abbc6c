"""W4 `matmul`: square fp32 GEMM on the CPU, n = 512 and 2048, in GFLOP/s.

Each library is timed in a process of its own, taking turns: every library
brings its own thread pool (numpy's OpenBLAS, PyTorch's OpenMP, ember's), and
idle pool threads of one library that spin or yield on the 2 cores slow the
next one down, which is a property of mixing them in one process, not of
either library."""
import multiprocessing
import os
import statistics
import time

import numpy as np

import ember

from bench.timing import optional_torch, ratio

LIBRARIES = ("ember", "numpy", "torch")


def _gflops(library, n, repeats):
    """Median GFLOP/s of `repeats` samples of an n x n product, in this process."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    if library == "ember":
        a, b = ember.from_numpy(a), ember.from_numpy(b)
    elif library == "torch":
        import torch
        a, b = torch.from_numpy(a), torch.from_numpy(b)
    inner = max(1, int(4e9 // (2 * n**3)))  # about 20 ms of work per sample at 200 GFLOP/s
    for _ in range(2):
        a @ b
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            a @ b
        samples.append((time.perf_counter() - start) / inner)
    return 2.0 * n**3 / statistics.median(samples) / 1e9


def run(sizes=(512, 2048), repeats=9, rounds=3, device="cpu"):
    if device != "cpu":
        return run_cuda()
    libraries = [lib for lib in LIBRARIES if lib != "torch" or optional_torch() is not None]
    out = {"workload": "matmul", "device": "cpu", "dtype": "float32", "unit": "GFLOP/s",
           "threads": ember.get_num_threads(), "blas": ember._C._blas_info(),
           "method": "each library in its own process, medians over rounds"}
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1, maxtasksperchild=1) as pool:
        for n in sizes:
            figures = {lib: [] for lib in libraries}
            for _ in range(rounds):
                for lib in libraries:
                    figures[lib].append(pool.apply(_gflops, (lib, n, repeats)))
            row = {lib: round(statistics.median(v), 1) for lib, v in figures.items()}
            row["ember/numpy"] = ratio(row["ember"], row["numpy"])
            row["ember/torch"] = ratio(row["ember"], row.get("torch"))
            out[f"n{n}"] = row
    return out


# ---- GPU: W4 at n = 8192 in fp32 (TF32 off), TF32 and bf16, TFLOP/s ------------------------

GPU_MODES = {  # mode -> (dtype name, float32 matmul precision)
    "fp32": ("float32", "highest"),
    "tf32": ("float32", "high"),
    "bf16": ("bfloat16", "highest"),
}


def _gpu_tflops(library, n, mode, repeats):
    """Median TFLOP/s of n x n products on the GPU, timed with CUDA events."""
    dtype_name, precision = GPU_MODES[mode]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    if library == "ember":
        mod = ember
        ember.set_float32_matmul_precision(precision)
        a, b = (ember.from_numpy(x).to(getattr(ember, dtype_name)).cuda() for x in (a, b))
    else:
        import torch as mod
        mod.set_float32_matmul_precision(precision)
        a, b = (mod.from_numpy(x).to(getattr(mod, dtype_name)).cuda() for x in (a, b))
    inner = 10
    for _ in range(3):
        a @ b
    mod.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        start, end = mod.cuda.Event(enable_timing=True), mod.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            a @ b
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / 1e3 / inner)
    return 2.0 * n**3 / statistics.median(samples) / 1e12


def run_cuda(n=8192, modes=("fp32", "tf32", "bf16"), repeats=7):
    """W4 on the GPU, ember next to PyTorch (when it is installed with CUDA)."""
    torch = optional_torch()
    with_torch = torch is not None and torch.cuda.is_available()
    out = {"workload": "matmul", "device": "cuda", "unit": "TFLOP/s", "n": n,
           "gpu": ember.cuda.get_device_name(0), "method": "CUDA events, median of samples of 10 products"}
    before = ember.get_float32_matmul_precision()
    try:
        for mode in modes:
            row = {"ember": round(_gpu_tflops("ember", n, mode, repeats), 1)}
            if with_torch:
                row["torch"] = round(_gpu_tflops("torch", n, mode, repeats), 1)
            row["ember/torch"] = ratio(row["ember"], row.get("torch"))
            if GPU_MODES[mode][0] != "float32":  # the same products through cuBLASLt (EMBER_MATMUL_BACKEND)
                chosen = os.environ.get("EMBER_MATMUL_BACKEND")
                os.environ["EMBER_MATMUL_BACKEND"] = "cublaslt"
                try:
                    row["ember_cublaslt"] = round(_gpu_tflops("ember", n, mode, repeats), 1)
                finally:
                    os.environ.pop("EMBER_MATMUL_BACKEND")
                    if chosen is not None:
                        os.environ["EMBER_MATMUL_BACKEND"] = chosen
                row["ember_cublaslt/torch"] = ratio(row["ember_cublaslt"], row.get("torch"))
            out[mode] = row
    finally:
        ember.set_float32_matmul_precision(before)
    return out
