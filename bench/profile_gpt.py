"""Where W3's step time goes on the GPU: one profiled training step of GPT-2 124M (batch 8, bf16
autocast, scaled_dot_product_attention, fused AdamW) under ember.profiler, and the same step
under torch.profiler when PyTorch is importable. Prints each framework's ops sorted by their own
GPU time (ember's profiler synchronizes around every op, so its total runs longer than an
unprofiled step: read the shares, not the sum). With PyTorch importable, ember's step is also
profiled by torch.profiler, whose CUPTI tracing sees every kernel in the process: that table
names ember's kernels one by one, the backward's included.

    PYTHONPATH=python python -m bench.profile_gpt [--rows 30] [--batch 8] [--device cuda|cpu]

Not one of BENCHMARKS.md's workloads: a probe for closing W3's gap. --device cpu profiles the
CPU size (float32, no autocast) to check the script itself.
"""
import argparse
import os
import sys

if __package__ in (None, ""):  # run as a script: python bench/profile_gpt.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import ember  # noqa: E402
from bench.timing import optional_torch  # noqa: E402
from bench.training import GPT_CPU, GPT_GPU, _gpt_loss, _make_step, models  # noqa: E402


def profiled_step(fw, batch, rows, device, profiler=None):
    gpu = device == "cuda"
    size = GPT_GPU if gpu else GPT_CPU
    rng = np.random.default_rng(0)
    shape = (batch, size["block_size"])
    x = rng.integers(0, size["vocab_size"], shape).astype(np.int64)
    y = rng.integers(0, size["vocab_size"], shape).astype(np.int64)
    fw.manual_seed(0)
    model = models.gpt(fw, **size, fused_attention=gpu).to(device)
    optimizer = fw.optim.AdamW(model.parameters(), lr=3e-4, fused=gpu or None)
    inputs, targets = fw.from_numpy(x).to(device), fw.from_numpy(y).to(device)
    step = _make_step(fw, model, optimizer, inputs, targets, _gpt_loss, fw.bfloat16 if gpu else None)
    sync = fw.cuda.synchronize if gpu else (lambda: None)
    for _ in range(3):  # warm-up: allocator pools, cuBLAS/cuDNN plans, optimizer state
        step()
    sync()
    profiler = profiler or fw
    activities = [profiler.profiler.ProfilerActivity.CPU]
    if gpu:
        activities.append(profiler.profiler.ProfilerActivity.CUDA)
    with profiler.profiler.profile(activities=activities) as prof:
        step()
        sync()
    if not gpu:
        sort = "self_cpu_time_total"
    else:
        sort = "self_cuda_time_total" if profiler is ember else "self_device_time_total"
    return prof.key_averages().table(sort_by=sort, row_limit=rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=30)
    parser.add_argument("--batch", type=int, default=None, help="8 on the GPU, 16 on the CPU")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = parser.parse_args(argv)
    if args.device == "cuda" and not ember.cuda.is_available():
        raise SystemExit("bench.profile_gpt needs a CUDA GPU (--device cpu checks the script on the CPU size)")
    batch = args.batch or (8 if args.device == "cuda" else 16)
    where = "GPU" if args.device == "cuda" else "CPU"
    print(f"== ember: one W3 step, ops by their own {where} time\n{profiled_step(ember, batch, args.rows, args.device)}")
    torch = optional_torch()
    if torch is not None:
        if args.device == "cuda":
            print(f"== ember's step seen by torch.profiler: kernels by their own GPU time\n"
                  f"{profiled_step(ember, batch, args.rows, args.device, profiler=torch)}")
        print(f"== torch: the same step\n{profiled_step(torch, batch, args.rows, args.device)}")


if __name__ == "__main__":
    main()
