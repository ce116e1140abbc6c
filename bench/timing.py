"""Timing helpers: medians of repeats after warm-up, since the machines are noisy."""
import argparse
import statistics
import time


def interleaved_medians(fns, repeats=7, warmup=2, inner=1, settle=0.0):
    """Median seconds per call of each fn in the dict `fns`, timed in rounds
    (one sample of each per round) so that all see the same machine load.
    `settle` seconds of sleep between samples let other thread pools go idle."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    samples = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            if settle:
                time.sleep(settle)
            start = time.perf_counter()
            for _ in range(inner):
                fn()
            samples[name].append((time.perf_counter() - start) / inner)
    return {name: statistics.median(s) for name, s in samples.items()}


def ratio(a, b):
    """a / b rounded for the report, or None when either figure is missing."""
    return round(a / b, 3) if a and b else None


def optional_torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def synchronized(fw, fn, device):
    """fn followed by a wait for the GPU, so wall-clock time covers the
    kernels it queued (the CPU path is returned unchanged)."""
    if device == "cpu":
        return fn

    def run():
        fn()
        fw.cuda.synchronize()
    return run


def named_cases_arguments(doc, names, argv=None, kind="case", threads=None):
    """The command line of the benchmarks made of named cases: --only (comma-separated, checked
    against `names`, all by default), --threads (default `threads`) and --repeats. Returns the
    parsed arguments with `only` as a list."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=",".join(names), help=f"comma-separated {kind} names")
    parser.add_argument("--threads", type=int, default=threads, help="threads for ember and torch")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    args.only = args.only.split(",")
    for name in args.only:
        if name not in names:
            parser.error(f"unknown {kind} {name!r}; known: {', '.join(names)}")
    return args
