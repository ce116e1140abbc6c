"""ember-run (python -m ember.distributed.run): environment of the workers, failure
handling, Ctrl-C, ports. Workers are tiny scripts; every launch has a timeout."""
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV_KEYS = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
            "MASTER_PORT", "OMP_NUM_THREADS"]

PRINT_ENV = """
    import os, sys
    line = repr({k: os.environ.get(k) for k in %r}) + " | " + " ".join(sys.argv[1:]) + "\\n"
    os.write(1, line.encode())  # one write: lines of workers sharing a pipe do not interleave
""" % ENV_KEYS


def script(tmp_path, source, name="worker.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return str(path)


def launcher_env(**extra):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    env.pop("OMP_NUM_THREADS", None)
    env.update(extra)
    return env


def launch(*args, env=None, timeout=30):
    """Runs the launcher to completion; returns (exit code, stdout, stderr)."""
    p = subprocess.Popen([sys.executable, "-m", "ember.distributed.run", *map(str, args)],
                         env=env or launcher_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    return p.returncode, out, err


def worker_envs(out):
    """rank -> (env dict, script args) from the PRINT_ENV lines of `out`."""
    found = {}
    for line in out.splitlines():
        line = line.split("] ", 1)[-1] if line.startswith("[rank") else line
        env_text, _, argv = line.partition(" | ")
        env = eval(env_text)  # the repr of a dict of str printed by PRINT_ENV
        found[int(env["RANK"])] = (env, argv.strip())
    return found


def alive(pid):
    """True for a running process (a zombie nobody reaped yet counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def test_workers_get_ranks_and_args(tmp_path):
    code, out, err = launch("--nproc-per-node", 3, "--log-prefix", script(tmp_path, PRINT_ENV), "--lr", "0.1", "x")
    assert code == 0, err
    envs = worker_envs(out)
    assert sorted(envs) == [0, 1, 2]
    for rank, (env, argv) in envs.items():
        assert env["LOCAL_RANK"] == str(rank) and env["WORLD_SIZE"] == "3" and env["LOCAL_WORLD_SIZE"] == "3"
        assert env["GROUP_RANK"] == "0" and env["MASTER_ADDR"] == "127.0.0.1" and env["MASTER_PORT"] == "29500"
        assert env["OMP_NUM_THREADS"] == "1"
        assert argv == "--lr 0.1 x"
    assert all(line.startswith(f"[rank ") for line in out.splitlines())
    assert "OMP_NUM_THREADS=1" in err  # the notice, as torchrun prints it


def test_user_omp_setting_is_kept_and_one_worker_gets_no_notice(tmp_path):
    code, out, err = launch("--nproc_per_node", 2, script(tmp_path, PRINT_ENV), env=launcher_env(OMP_NUM_THREADS="3"))
    assert code == 0, err
    assert all(env["OMP_NUM_THREADS"] == "3" for env, _ in worker_envs(out).values())
    assert "OMP_NUM_THREADS" not in err
    code, out, err = launch(script(tmp_path, PRINT_ENV))
    assert code == 0 and worker_envs(out)[0][0]["OMP_NUM_THREADS"] is None and err == ""


def test_second_node_computes_global_ranks(tmp_path):
    code, out, err = launch("--nnodes", 2, "--node-rank", 1, "--nproc-per-node", 2, "--master-addr", "10.1.2.3",
                            "--master_port", 1234, script(tmp_path, PRINT_ENV))
    assert code == 0, err
    envs = worker_envs(out)
    assert sorted(envs) == [2, 3]
    for rank, (env, _) in envs.items():
        assert env["LOCAL_RANK"] == str(rank - 2) and env["WORLD_SIZE"] == "4" and env["GROUP_RANK"] == "1"
        assert env["MASTER_ADDR"] == "10.1.2.3" and env["MASTER_PORT"] == "1234"


def test_module_mode(tmp_path):
    script(tmp_path, PRINT_ENV, name="printenv_mod.py")
    env = launcher_env(PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "python"), str(tmp_path)]))
    code, out, err = launch("--nproc-per-node", 2, "-m", "printenv_mod", "a", env=env)
    assert code == 0, err
    assert sorted(worker_envs(out)) == [0, 1] and worker_envs(out)[1][1] == "a"


FAIL_RANK_1 = """
    import os, sys, time
    if os.environ["RANK"] == "1":
        print("loading data", file=sys.stderr)
        print("ValueError: bad batch on rank 1", file=sys.stderr)
        sys.exit(3)
    time.sleep(60)
"""


def test_failing_worker_stops_the_others_and_sets_the_exit_code(tmp_path):
    t0 = time.monotonic()
    code, out, err = launch("--nproc-per-node", 3, script(tmp_path, FAIL_RANK_1))
    assert code == 3
    assert "rank 1 (local rank 1 of 3 on node 0) failed with exit code 3" in err
    assert "ValueError: bad batch on rank 1" in err.split("last lines of rank 1's stderr")[1]
    assert time.monotonic() - t0 < 15  # the sleeping ranks were stopped, not waited for


def test_worker_ignoring_sigterm_is_killed_and_signals_give_128_plus_n(tmp_path):
    src = """
        import os, signal, sys, time
        if os.environ["RANK"] == "0":
            time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGKILL)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(60)
    """
    t0 = time.monotonic()
    code, _, err = launch("--nproc-per-node", 2, "--term-timeout", 0.5, script(tmp_path, src))
    assert code == 128 + signal.SIGKILL
    assert "rank 0 (local rank 0 of 2 on node 0) was killed by SIGKILL" in err
    assert time.monotonic() - t0 < 15


def test_ctrl_c_stops_every_worker(tmp_path):
    src = """
        import os, sys, time
        open(os.path.join(sys.argv[1], f"pid{os.environ['RANK']}"), "w").write(str(os.getpid()))
        time.sleep(60)
    """
    p = subprocess.Popen([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2",
                          script(tmp_path, src), str(tmp_path)], env=launcher_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids = []
    try:
        deadline = time.monotonic() + 20
        while len(pids) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
            try:
                pids = [int((tmp_path / f"pid{r}").read_text()) for r in range(2)]
            except (FileNotFoundError, ValueError):
                pids = []
        assert len(pids) == 2, "the workers did not start"
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=15)
        assert p.returncode == 128 + signal.SIGINT
        assert "received SIGINT" in err
        time.sleep(0.2)
        assert not any(alive(pid) for pid in pids)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def busy_port(port=0):
    s = socket.socket()
    s.bind(("127.0.0.1", port))
    s.listen()
    return s


def test_standalone_picks_a_free_port_when_the_default_is_busy(tmp_path):
    try:
        busy = busy_port(29500)
    except OSError:
        busy = None  # someone already listens on 29500: busy either way
    try:
        code, out, err = launch("--standalone", "--nproc-per-node", 2, script(tmp_path, PRINT_ENV))
    finally:
        if busy:
            busy.close()
    assert code == 0, err
    ports = {env["MASTER_PORT"] for env, _ in worker_envs(out).values()}
    assert len(ports) == 1 and ports != {"29500"}
    with busy_port() as b:
        code, out, err = launch("--standalone", "--master-port", b.getsockname()[1], script(tmp_path, PRINT_ENV))
        assert code == 0, err
        assert worker_envs(out)[0][0]["MASTER_PORT"] != str(b.getsockname()[1])


def test_busy_master_port_is_reported_with_the_address(tmp_path):
    with busy_port() as b:
        port = b.getsockname()[1]
        code, out, err = launch("--master-port", port, script(tmp_path, PRINT_ENV))
    assert code == 1 and out == ""
    assert f"127.0.0.1:{port} is already in use" in err and "--standalone" in err


def test_workers_rendezvous_through_a_tcp_store(tmp_path):
    src = """
        import datetime, os
        import ember.distributed as dist
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world, rank == 0,
                              timeout=datetime.timedelta(seconds=10))
        store.add("sum", rank + 1)
        store.set(f"added{rank}", "")
        store.wait([f"added{r}" for r in range(world)])
        os.write(1, f"sum {int(store.get('sum'))}\\n".encode())  # one write: no interleaving
        store.set(f"read{rank}", "")
        if rank == 0:  # the master serves until everyone has read
            store.wait([f"read{r}" for r in range(world)])
    """
    code, out, err = launch("--standalone", "--nproc-per-node", 3, script(tmp_path, src))
    assert code == 0, err
    assert out.split() == ["sum", "6"] * 3


@pytest.mark.parametrize("args, message", [
    (["--nnodes", "1:2"], "elastic"),
    (["--nnodes", "2", "--node-rank", "2"], "--node-rank 2"),
    (["--nproc-per-node", "zero"], "--nproc-per-node"),
    (["--standalone", "--nnodes", "2"], "single node"),
])
def test_bad_arguments_are_refused(tmp_path, args, message):
    code, _, err = launch(*args, script(tmp_path, PRINT_ENV))
    assert code == 2 and message in err


def test_console_script_is_declared():
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        scripts = tomllib.load(f)["project"]["scripts"]
    assert scripts["ember-run"] == "ember.distributed.run:main"
    from ember.distributed.run import main
    assert callable(main)


def gloo_available():
    import ember.distributed as dist
    return dist.is_gloo_available()


def test_rank_exiting_early_fails_the_others_and_the_launcher_names_it(tmp_path):
    if not gloo_available():
        pytest.skip("this build has no gloo backend")
    src = """
        import datetime, sys
        import ember, ember.distributed as dist
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=2))
        if dist.get_rank() == 1:
            sys.exit(0)  # leaves before the collective the others wait in
        dist.all_reduce(ember.ones(4))
    """
    t0 = time.monotonic()
    code, _, err = launch("--standalone", "--nproc-per-node", 3, script(tmp_path, src))
    assert code == 1
    assert "failed with exit code 1" in err
    assert "rank(s) 1 had already exited with code 0" in err
    assert "all_reduce" in err.split("last lines of rank")[1]
    assert time.monotonic() - t0 < 20
