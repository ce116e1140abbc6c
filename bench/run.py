"""Runs the benchmark workloads and prints one JSON line per workload.

    PYTHONPATH=python python -m bench [--only matmul,add,overhead,mlp,cnn,gpt,allreduce] [--threads N]
"""
import argparse
import json
import os
import sys

if __package__ in (None, ""):  # run as a script: python bench/run.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402

from bench import add, allreduce, matmul, overhead, training  # noqa: E402

# id -> (BENCHMARKS.md name, runner); GPU and model workloads join this table.
WORKLOADS = {
    "matmul": ("W4", matmul.run),
    "add": ("W5", add.run),
    "overhead": ("W6", overhead.run),
    "mlp": ("W1", training.run_mlp),
    "cnn": ("W2", training.run_cnn),
    "gpt": ("W3", training.run_gpt),
    "allreduce": ("W7", allreduce.run),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workload ids")
    parser.add_argument("--threads", type=int, default=None, help="ember.set_num_threads before running")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda: BENCHMARKS.md's GPU sizes")
    args = parser.parse_args(argv)
    if args.threads:
        ember.set_num_threads(args.threads)
    for name in args.only.split(","):
        if name not in WORKLOADS:
            parser.error(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}")
        wid, run = WORKLOADS[name]
        result = {"id": wid, **(run() if args.device == "cpu" else run(device=args.device))}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
