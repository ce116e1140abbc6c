"""W7 `allreduce`: all_reduce (sum) of 1, 16 and 256 MiB of float32 across 2
processes on loopback with gloo, in GB/s of bus bandwidth
(2 (n-1)/n x bytes / time, the figure NCCL's tests report).

Each library runs in its own pair of fresh processes (ember's, then
PyTorch's when it is importable, then ember's again...), so neither sees the
other's threads; the figure per size is the median over rounds."""
import json
import os
import socket
import statistics
import subprocess
import sys

from bench.timing import optional_torch, ratio

SIZES_MIB = (1, 16, 256)
WORLD = 2


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(lib, rank, world, port, repeats):
    """Runs in a child process; rank 0 prints {size_mib: seconds} as JSON."""
    import time
    if lib == "torch":
        import torch as mod
        import torch.distributed as dist
    else:
        import ember as mod
        import ember.distributed as dist
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    results = {}
    for mib in SIZES_MIB:
        t = mod.ones(mib * (1 << 20) // 4, dtype=mod.float32)
        for _ in range(2):
            dist.all_reduce(t)
        times = []
        for _ in range(repeats if mib < 256 else max(3, repeats // 4)):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - start)
        results[mib] = statistics.median(times)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print(json.dumps(results), flush=True)


def _run_pair(lib, repeats):
    port = _free_port()
    env = dict(os.environ, OMP_NUM_THREADS="1")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    procs = [subprocess.Popen([sys.executable, "-m", "bench.allreduce", "--worker", lib, str(r), str(WORLD),
                               str(port), str(repeats)], cwd=root, env=env, stdout=subprocess.PIPE, text=True)
             for r in range(WORLD)]
    try:
        outs = [p.communicate(timeout=600)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    if any(p.returncode for p in procs):
        raise RuntimeError(f"W7: a {lib} worker failed (exit codes {[p.returncode for p in procs]})")
    return {int(k): v for k, v in json.loads(outs[0].strip().splitlines()[-1]).items()}


def run(rounds=3, repeats=20, device="cpu"):
    if device != "cpu":
        # NCCL's bus bandwidth needs two GPUs; the machines here have one.
        return {"workload": "allreduce", "device": device,
                "skipped": "W7 over NCCL needs 2 GPUs in one process group (tests/python/test_distributed_nccl.py "
                           "checks the NCCL collectives on one)"}
    libs = ["ember"] + (["torch"] if optional_torch() is not None else [])
    samples = {lib: {mib: [] for mib in SIZES_MIB} for lib in libs}
    for _ in range(rounds):
        for lib in libs:
            for mib, seconds in _run_pair(lib, repeats).items():
                samples[lib][mib].append(seconds)
    out = {"workload": "allreduce", "device": "cpu", "backend": "gloo", "world_size": WORLD, "unit": "GB/s busbw"}
    factor = 2 * (WORLD - 1) / WORLD
    for mib in SIZES_MIB:
        nbytes = mib * (1 << 20)
        for lib in libs:
            out[f"{lib}_{mib}MiB"] = round(factor * nbytes / statistics.median(samples[lib][mib]) / 1e9, 3)
        out[f"ember/torch_{mib}MiB"] = ratio(out[f"ember_{mib}MiB"], out.get(f"torch_{mib}MiB"))
    return out


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        lib, rank, world, port, repeats = sys.argv[2], *map(int, sys.argv[3:7])
        _worker(lib, rank, world, port, repeats)
    else:
        print(json.dumps({"id": "W7", **run()}))
