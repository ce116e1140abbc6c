"""Timing helpers: medians of repeats after warm-up, since the machines are noisy."""
import statistics
import time


def median_seconds(fn, repeats=7, warmup=2, inner=1):
    """Median wall time of one call of fn: `repeats` samples of `inner` calls each."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)


def ratio(a, b):
    """a / b rounded for the report, or None when either figure is missing."""
    return round(a / b, 3) if a and b else None


def optional_torch():
    try:
        import torch
    except ImportError:
        return None
    return torch
