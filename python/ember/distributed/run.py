"""ember-run: start N worker processes per node for distributed training, as torchrun.

    ember-run --nproc-per-node 4 train.py --lr 0.1
    python -m ember.distributed.run --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 train.py

Each worker gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR and MASTER_PORT in its environment, which
``init_process_group(init_method="env://")`` reads. The launcher watches its
workers: when one exits with a non-zero code it stops the others (SIGTERM, then
SIGKILL after --term-timeout seconds), names the failed rank with the last lines
of its stderr, and exits with that code. Ctrl-C or SIGTERM to the launcher stops
every worker. Static membership only: no elastic ranges, restarts or rendezvous
backends.
"""
import argparse
import collections
import errno
import os
import signal
import socket
import subprocess
import sys
import threading
import time

__all__ = ["main", "parse_args"]

DEFAULT_PORT = 29500
STDERR_TAIL_LINES = 20
SETTLE_SECONDS = 0.3  # after a failure, how long other exits still count as before it


def _log(msg):
    print(f"ember-run: {msg}", file=sys.stderr, flush=True)


def _nproc(value):
    """--nproc-per-node: an int, or gpu / cpu / auto as torchrun."""
    if value in ("gpu", "auto"):
        import ember.cuda
        gpus = ember.cuda.device_count() if ember.cuda.is_available() else 0
        if value == "gpu" and gpus == 0:
            raise ValueError("--nproc-per-node gpu: no CUDA device is available")
        if gpus:
            return gpus
        return os.cpu_count() or 1
    if value == "cpu":
        return os.cpu_count() or 1
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"--nproc-per-node must be an int, gpu, cpu or auto, got {value!r}") from None
    if n < 1:
        raise ValueError(f"--nproc-per-node must be at least 1, got {n}")
    return n


def _nnodes(value):
    """--nnodes N (torchrun's elastic MIN:MAX only when MIN == MAX)."""
    lo, _, hi = value.partition(":")
    try:
        lo, hi = int(lo), int(hi or lo)
    except ValueError:
        raise ValueError(f"--nnodes must be an int, got {value!r}") from None
    if lo != hi:
        raise ValueError(f"--nnodes {value}: elastic ranges are not supported; give a fixed number of nodes")
    if lo < 1:
        raise ValueError(f"--nnodes must be at least 1, got {lo}")
    return lo


def _parser():
    p = argparse.ArgumentParser(
        prog="ember-run", description="Start worker processes for distributed training (as torchrun).",
        allow_abbrev=False)
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc_per_node", default="1",
                   help="workers on this node: an int, 'gpu' (one per GPU), 'cpu' (one per core) or "
                        "'auto' (gpu when there are GPUs, else cpu); default 1")
    p.add_argument("--nnodes", default="1", help="number of nodes (default 1)")
    p.add_argument("--node-rank", "--node_rank", dest="node_rank", type=int, default=0,
                   help="this node's rank in [0, nnodes) (default 0)")
    p.add_argument("--master-addr", "--master_addr", dest="master_addr", default="127.0.0.1",
                   help="address of the node with node rank 0 (default 127.0.0.1)")
    p.add_argument("--master-port", "--master_port", dest="master_port", type=int, default=None,
                   help=f"port of the rendezvous store on the master (default {DEFAULT_PORT})")
    p.add_argument("--standalone", action="store_true",
                   help="single node on localhost with a free port picked by the launcher")
    p.add_argument("--log-prefix", "--log_prefix", dest="log_prefix", action="store_true",
                   help="prefix every line a worker prints (stdout and stderr) with '[rank N] '")
    p.add_argument("--term-timeout", "--term_timeout", dest="term_timeout", type=float, default=5.0,
                   help="seconds the other workers get between SIGTERM and SIGKILL when stopping (default 5)")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script argument as a module, as 'python -m'")
    p.add_argument("--no-python", "--no_python", dest="no_python", action="store_true",
                   help="run the script argument as an executable instead of with the Python interpreter")
    p.add_argument("script", help="the training script (or module with -m) each worker runs")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    return p


def parse_args(argv=None):
    p = _parser()
    args = p.parse_args(argv)
    try:
        args.nproc_per_node = _nproc(args.nproc_per_node)
        args.nnodes = _nnodes(args.nnodes)
    except ValueError as e:
        p.error(str(e))
    if args.module and args.no_python:
        p.error("-m and --no-python cannot be combined")
    if not 0 <= args.node_rank < args.nnodes:
        p.error(f"--node-rank {args.node_rank} is not in [0, {args.nnodes}) for --nnodes {args.nnodes}")
    if args.master_port is not None and not 0 < args.master_port < 65536:
        p.error(f"--master-port must be in [1, 65535], got {args.master_port}")
    if args.standalone:
        if args.nnodes != 1:
            p.error("--standalone runs on a single node: it cannot be combined with --nnodes > 1")
        args.master_addr = "127.0.0.1"
    return args


def _port_in_use(port):
    """True when something listens on `port` here (a TIME_WAIT leftover does not count)."""
    for family, addr in ((socket.AF_INET6, "::"), (socket.AF_INET, "0.0.0.0")):
        try:
            s = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue
        with s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            try:
                s.bind((addr, port))
                return False
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    return True
    return False


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _master_port(args):
    """The rendezvous port, or None after reporting a busy one."""
    if args.standalone:
        if args.master_port is not None and not _port_in_use(args.master_port):
            return args.master_port
        return _free_port()
    port = DEFAULT_PORT if args.master_port is None else args.master_port
    # Only node 0 hosts the store: the other nodes cannot see its ports.
    if args.node_rank == 0 and _port_in_use(port):
        _log(f"error: the master address {args.master_addr}:{port} is already in use; pick another port "
             f"with --master-port or pass --standalone to let ember-run choose a free one")
        return None
    return port


def _worker_env(args, local_rank, port):
    world = args.nnodes * args.nproc_per_node
    rank = args.node_rank * args.nproc_per_node + local_rank
    env = dict(os.environ)
    env.update(RANK=str(rank), LOCAL_RANK=str(local_rank), WORLD_SIZE=str(world),
               LOCAL_WORLD_SIZE=str(args.nproc_per_node), GROUP_RANK=str(args.node_rank),
               ROLE_RANK=str(rank), ROLE_WORLD_SIZE=str(world), MASTER_ADDR=args.master_addr,
               MASTER_PORT=str(port))
    # What torchrun sets too: dist.is_torchelastic_launched() tells scripts they run under a launcher.
    env.setdefault("TORCHELASTIC_RUN_ID", "none")
    if args.log_prefix:
        env.setdefault("PYTHONUNBUFFERED", "1")  # lines reach the prefixer as they are printed
    return env


def _command(args):
    if args.no_python:
        return [args.script, *args.script_args]
    if args.module:
        return [sys.executable, "-m", args.script, *args.script_args]
    return [sys.executable, args.script, *args.script_args]


def _death_signal_setter():
    """A preexec_fn that makes the child get SIGKILL when the launcher dies (Linux), so no
    worker outlives it. libc is loaded here, before fork: the child only makes the call."""
    if sys.platform != "linux":
        return None
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, int(signal.SIGKILL))  # 1 = PR_SET_PDEATHSIG


class _Worker:
    """One worker process and the threads that forward its output."""

    def __init__(self, rank, local_rank, cmd, env, prefix, out_lock, preexec):
        self.rank = rank
        self.local_rank = local_rank
        self.tail = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._prefix = f"[rank {rank}] ".encode() if prefix else None
        self._lock = out_lock
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE if prefix else None,
                                     stderr=subprocess.PIPE, start_new_session=True,
                                     preexec_fn=preexec)
        self._threads = [threading.Thread(target=self._forward, args=(self.proc.stderr, sys.stderr, True),
                                          daemon=True)]
        if prefix:
            self._threads.append(threading.Thread(target=self._forward, args=(self.proc.stdout, sys.stdout, False),
                                                  daemon=True))

    def start_forwarding(self):
        # Started after every worker is forked: forking next to running threads is unsafe.
        for t in self._threads:
            t.start()

    def _forward(self, pipe, dest, keep_tail):
        """Copies a worker's pipe to our stream (prefixed by line on request); keeps the tail."""
        out = dest.buffer if hasattr(dest, "buffer") else None
        partial = b""
        fd = pipe.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            data = partial + chunk
            lines = data.split(b"\n")
            partial = lines.pop()
            if len(partial) > 65536:  # output without newlines (progress bars): pass it on anyway
                lines.append(partial)
                partial = b""
            if keep_tail:
                self.tail.extend(line.decode(errors="replace") for line in lines)
            if self._prefix is None:
                self._write(out, dest, chunk)
            elif lines:
                self._write(out, dest, b"".join(self._prefix + line + b"\n" for line in lines))
        if partial:
            if keep_tail:
                self.tail.append(partial.decode(errors="replace"))
            self._write(out, dest, (self._prefix or b"") + partial + (b"\n" if self._prefix else b""))
        pipe.close()

    def _write(self, out, dest, data):
        with self._lock:
            try:
                if out is not None:
                    out.write(data)
                    out.flush()
                else:
                    dest.write(data.decode(errors="replace"))
                    dest.flush()
            except (OSError, ValueError):
                pass  # our own stream is gone (closed pipe): keep draining the worker

    def finish_output(self, timeout=2.0):
        deadline = time.monotonic() + timeout
        for t in self._threads:
            if t.is_alive():
                t.join(max(0.0, deadline - time.monotonic()))

    def signal(self, sig):
        """Signals the worker's whole process group (its own children too)."""
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


class _Stop(Exception):
    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _raise_stop(signum, frame):
    raise _Stop(signum)


def _exit_code(returncode):
    """A shell-style exit status: killed by signal N becomes 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def _describe(returncode):
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name} (exit code {_exit_code(returncode)})"
    return f"failed with exit code {returncode}"


def _stop_all(workers, term_timeout):
    """SIGTERM to every live worker, then SIGKILL to those still alive after term_timeout."""
    live = [w for w in workers if w.proc.poll() is None]
    for w in live:
        w.signal(signal.SIGTERM)
    deadline = time.monotonic() + term_timeout
    while time.monotonic() < deadline and any(w.proc.poll() is None for w in live):
        time.sleep(0.02)
    for w in live:
        if w.proc.poll() is None:
            w.signal(signal.SIGKILL)
    for w in live:
        w.proc.wait()
    # Grandchildren that outlived their worker.
    for w in workers:
        w.signal(signal.SIGKILL)


def _report_failure(w, nproc, node_rank):
    w.finish_output()
    _log(f"rank {w.rank} (local rank {w.local_rank} of {nproc} on node {node_rank}) {_describe(w.proc.returncode)}")
    lines = [line for line in w.tail if line.strip()]
    if lines:
        _log(f"last lines of rank {w.rank}'s stderr:")
        print("\n".join("    " + line for line in lines), file=sys.stderr, flush=True)


def run(args):
    """Starts the workers and watches them; returns the launcher's exit code."""
    port = _master_port(args)
    if port is None:
        return 1
    if args.nproc_per_node > 1 and "OMP_NUM_THREADS" not in os.environ:
        _log(f"setting OMP_NUM_THREADS=1 for each of the {args.nproc_per_node} workers so they do not "
             "oversubscribe the cores; set it yourself to tune")
        os.environ["OMP_NUM_THREADS"] = "1"
    cmd = _command(args)
    out_lock = threading.Lock()
    workers = []
    old = {s: signal.signal(s, _raise_stop) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    preexec = _death_signal_setter()
    try:
        for local_rank in range(args.nproc_per_node):
            rank = args.node_rank * args.nproc_per_node + local_rank
            workers.append(_Worker(rank, local_rank, cmd, _worker_env(args, local_rank, port),
                                   args.log_prefix, out_lock, preexec))
        for w in workers:
            w.start_forwarding()
        while True:
            codes = [w.proc.poll() for w in workers]
            failed = next((w for w, c in zip(workers, codes) if c not in (None, 0)), None)
            if failed is not None:
                # Ranks already done: a peer that left early is often why a collective failed.
                # It may still be tearing down when its peers notice, hence a short settle.
                settle = time.monotonic() + SETTLE_SECONDS
                while time.monotonic() < settle and any(w.proc.poll() is None for w in workers):
                    time.sleep(0.02)
                done = [w.rank for w in workers if w.proc.returncode == 0]
                _stop_all(workers, args.term_timeout)
                _report_failure(failed, args.nproc_per_node, args.node_rank)
                if done:
                    _log(f"note: rank(s) {', '.join(map(str, done))} had already exited with code 0; a "
                         "collective still waiting for them fails with a timeout or a closed connection")
                return _exit_code(failed.proc.returncode)
            if all(w.proc.returncode == 0 for w in workers):
                for w in workers:
                    w.finish_output()
                return 0
            time.sleep(0.05)
    except _Stop as stop:
        name = signal.Signals(stop.signum).name
        _log(f"received {name}: stopping {sum(w.proc.poll() is None for w in workers)} worker(s)")
        signal.signal(stop.signum, signal.SIG_IGN)  # a second Ctrl-C must not cut the cleanup short
        _stop_all(workers, args.term_timeout)
        return 128 + stop.signum
    except OSError as e:  # the script or interpreter could not be started
        _log(f"error: cannot start {cmd[0]}: {e}")
        _stop_all(workers, args.term_timeout)
        return 1
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def main(argv=None):
    """Entry point of ember-run and python -m ember.distributed.run; returns the exit code."""
    return run(parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
