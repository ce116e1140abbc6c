"""CPU kernels that move data rather than compute on it (copies, gathers, sorts, random fills),
each timed next to PyTorch's in the same process (when importable). One JSON line per case with
ms per call and ember/torch.

    PYTHONPATH=python python -m bench.data_movement [--only gather,sort_int64] [--threads N]

Not one of BENCHMARKS.md's workloads: a probe of the kernels behind data loading, indexing and
embedding layers, whose figures the commits that tuned them quote.
"""
import json
import os
import sys

import numpy as np

if __package__ in (None, ""):  # run as a script: python bench/data_movement.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402

from bench.timing import interleaved_medians, named_cases_arguments, optional_torch, ratio  # noqa: E402


def arrays():
    """The inputs every case draws from, as numpy arrays (seeded)."""
    rng = np.random.default_rng(0)
    return {
        "square": rng.standard_normal((1000, 1000)).astype(np.float32),
        "columns": rng.integers(0, 1000, (1000, 1000)),
        "short_rows": rng.standard_normal((100_000, 8)).astype(np.float32),
        "row_picks": rng.integers(0, 100_000, 200_000),
        "counts": rng.integers(0, 5, 100_000),
        "vector": rng.standard_normal(1_000_000).astype(np.float32),
        "labels": rng.integers(0, 1000, 1_000_000),
        "table": rng.standard_normal((50_000, 256)).astype(np.float32),
        "tokens": rng.integers(0, 50_000, (32, 128)),
    }


# name -> (what it measures, fn(framework, inputs) -> call)
CASES = {
    "clone": ("contiguous copy, 1000 x 1000 float32", lambda fw, t: lambda: t["square"].clone()),
    "transpose": ("x.t().contiguous(), 1000 x 1000 float32", lambda fw, t: lambda: t["square"].t().contiguous()),
    "gather": ("gather along dim 1, 1000 x 1000", lambda fw, t: lambda: fw.gather(t["square"], 1, t["columns"])),
    "index_select": ("200k rows of 8 float32", lambda fw, t: lambda: fw.index_select(t["short_rows"], 0,
                                                                                      t["row_picks"])),
    "embedding": ("32 x 128 tokens from a 50k x 256 table",
                  lambda fw, t: lambda: fw.nn.functional.embedding(t["tokens"], t["table"])),
    "repeat_interleave": ("100k rows of 8 floats, counts 0-4",
                          lambda fw, t: lambda: fw.repeat_interleave(t["short_rows"], t["counts"], dim=0)),
    "repeat_interleave_int": ("1M floats, each 3 times", lambda fw, t: lambda: fw.repeat_interleave(t["vector"], 3)),
    "sort_int64": ("1M int64 labels below 1000", lambda fw, t: lambda: fw.sort(t["labels"])),
    "unique": ("1M int64 labels below 1000", lambda fw, t: lambda: fw.unique(t["labels"])),
    "argsort_float32": ("1M float32", lambda fw, t: lambda: fw.argsort(t["vector"])),
    "randn": ("1M float32 normals", lambda fw, t: lambda: fw.randn(1_000_000)),
    "rand": ("1M float32 uniforms", lambda fw, t: lambda: fw.rand(1_000_000)),
}


def main(argv=None):
    args = named_cases_arguments(__doc__, CASES, argv)
    torch = optional_torch()
    if args.threads:
        ember.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    data = arrays()
    inputs = {"ember": {k: ember.from_numpy(v) for k, v in data.items()}}
    if torch is not None:
        inputs["torch"] = {k: torch.from_numpy(v) for k, v in data.items()}
    frameworks = {"ember": ember, "torch": torch}
    for name in args.only:
        what, make = CASES[name]
        fns = {fw: make(frameworks[fw], tensors) for fw, tensors in inputs.items()}
        seconds = interleaved_medians(fns, args.repeats, warmup=2)
        out = {"case": name, "what": what, "unit": "ms", "threads": ember.get_num_threads()}
        out.update({fw: round(s * 1e3, 3) for fw, s in seconds.items()})
        out["ember/torch"] = ratio(out["ember"], out.get("torch"))
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
