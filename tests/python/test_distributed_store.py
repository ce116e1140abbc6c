"""ember.distributed.TCPStore and PrefixStore, in one process and across processes.

Every store here has a timeout of a few seconds at most and every child process
is killed in a finally, so a bug fails a test instead of hanging the suite.
"""
import datetime
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import ember.distributed as dist

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT = datetime.timedelta(seconds=5)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def master(**kw):
    kw.setdefault("timeout", TIMEOUT)
    return dist.TCPStore("127.0.0.1", 0, is_master=True, **kw)


def spawn(tmp_path, source, *args):
    """Starts `python script.py args...` with this checkout's ember importable."""
    script = tmp_path / f"worker_{abs(hash(source))}.py"
    script.write_text(textwrap.dedent(source))
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    return subprocess.Popen([sys.executable, str(script), *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(procs, timeout=20):
    """Waits for every process; returns their (returncode, stdout, stderr)."""
    try:
        return [(p.wait(timeout=timeout),) + p.communicate() for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


RENDEZVOUS = """
    import datetime, sys
    import ember.distributed as dist
    rank, world, port = map(int, sys.argv[1:4])
    store = dist.TCPStore("127.0.0.1", port, world, rank == 0, timeout=datetime.timedelta(seconds=10))
    store.set(f"rank/{rank}", str(rank * 10))
    ticket = store.add("counter", 1)
    store.wait([f"rank/{r}" for r in range(world)])
    values = [int(store.get(f"rank/{r}")) for r in range(world)]
    store.set(f"done/{rank}", b"")
    if rank == 0:  # the master serves until everyone has read what they need
        store.wait([f"done/{r}" for r in range(world)])
    print(ticket, values, flush=True)
"""


def test_four_processes_rendezvous_and_count(tmp_path):
    port = free_port()
    # Workers first: they retry until the master (started last) listens.
    procs = [spawn(tmp_path, RENDEZVOUS, r, 4, port) for r in (3, 2, 1, 0)]
    results = finish(procs)
    for code, out, err in results:
        assert code == 0, err
    tickets = sorted(int(out.split()[0]) for _, out, _ in results)
    assert tickets == [1, 2, 3, 4]
    for _, out, _ in results:
        assert out.strip().endswith("[0, 10, 20, 30]")


def test_set_get_add_compare_set_check_delete():
    s = master()
    s.set("s", "text")
    s.set("b", b"\x00\xffraw")
    s.set("ba", bytearray(b"ba"))
    assert s.get("s") == b"text"
    assert s.get("b") == b"\x00\xffraw"
    assert s.get("ba") == b"ba"
    assert s.add("n", 5) == 5
    assert s.add("n", -7) == -2
    assert s.get("n") == b"-2"
    assert s.compare_set("s", "text", "new") == b"new"
    assert s.compare_set("s", "wrong", "x") == b"new"
    assert s.compare_set("fresh", "", "v") == b"v"
    assert s.compare_set("absent", "e", "v") == b"e"
    assert s.check(["s", "n"]) and not s.check(["s", "absent"])
    assert s.num_keys() == 6  # the join counter too, as in PyTorch
    assert s.delete_key("s") and not s.delete_key("s")
    assert s.num_keys() == 5
    with pytest.raises(RuntimeError, match="not an integer"):
        s.add("b", 1)
    with pytest.raises(TypeError, match="str or bytes"):
        s.set("k", 3)
    with pytest.raises(TypeError, match="list of str"):
        s.wait("k")


def test_timeout_property_and_arguments():
    s = master(timeout=2.5)
    assert s.timeout == datetime.timedelta(seconds=2.5)
    s.set_timeout(datetime.timedelta(milliseconds=1500))
    assert s.timeout == datetime.timedelta(milliseconds=1500)
    with pytest.raises(ValueError, match="negative"):
        s.set_timeout(-1)
    with pytest.raises(TypeError, match="timedelta"):
        s.set_timeout("1s")
    assert isinstance(s, dist.Store) and s.is_master and s.host == "127.0.0.1"
    assert repr(s) == f"TCPStore(host_name='127.0.0.1', port={s.port}, is_master=True)"
    with pytest.raises(ValueError, match="port"):
        dist.TCPStore("127.0.0.1", 70000, is_master=True)


def test_get_and_wait_time_out_within_the_timeout():
    s = master(timeout=datetime.timedelta(seconds=1))
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="timed out after 1000ms waiting for key 'missing'"):
        s.get("missing")
    assert 0.9 <= time.monotonic() - t0 < 3
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="'a', 'b'"):
        s.wait(["a", "b"], datetime.timedelta(milliseconds=300))
    assert time.monotonic() - t0 < 2
    s.set("a", "1")
    s.set("b", "2")
    s.wait(["a", "b"])
    assert s.get("b") == b"2"


def test_blocking_get_releases_the_gil():
    s = master()
    c = dist.TCPStore("127.0.0.1", s.port, timeout=TIMEOUT)
    got = []
    t = threading.Thread(target=lambda: got.append(c.get("later")))
    t.start()
    time.sleep(0.1)  # the thread is now blocked in get; this thread must still run
    s.set("later", "v")
    t.join(timeout=5)
    assert got == [b"v"]


def test_port_in_use_is_reported_with_the_address():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(RuntimeError, match=f"address 127.0.0.1:{port} is already in use"):
            dist.TCPStore("127.0.0.1", port, is_master=True, timeout=1)
    s = master()
    with pytest.raises(RuntimeError, match=f"127.0.0.1:{s.port} is already in use"):
        dist.TCPStore("127.0.0.1", s.port, is_master=True, timeout=1)


def test_connecting_to_a_missing_master_times_out():
    port = free_port()
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=f"127.0.0.1:{port} within 500ms"):
        dist.TCPStore("127.0.0.1", port, timeout=datetime.timedelta(milliseconds=500))
    assert time.monotonic() - t0 < 3


def test_master_waits_for_world_size_workers(tmp_path):
    port = free_port()
    joiner = spawn(tmp_path, """
        import sys, ember.distributed as dist
        s = dist.TCPStore("127.0.0.1", int(sys.argv[1]), 2, False, timeout=10)
        s.wait(["bye"])
    """, port)
    try:
        s = dist.TCPStore("127.0.0.1", port, world_size=2, is_master=True, timeout=10)
    except BaseException:
        joiner.kill()
        raise
    assert s.add("init/", 0) == 2
    s.set("bye", "")
    code, _, err = finish([joiner])[0]
    assert code == 0, err
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"waiting for 3 workers .* \(1 joined\)"):
        master(world_size=3, timeout=0.5)
    assert time.monotonic() - t0 < 3
    master(world_size=3, wait_for_workers=False)  # returns at once


def test_get_on_a_dead_master_raises_instead_of_hanging(tmp_path):
    port = free_port()
    server = spawn(tmp_path, """
        import sys, time, ember.distributed as dist
        s = dist.TCPStore("127.0.0.1", int(sys.argv[1]), is_master=True, timeout=10)
        s.set("up", "")
        time.sleep(60)
    """, port)
    try:
        c = dist.TCPStore("127.0.0.1", port, timeout=10)
        c.wait(["up"])
        threading.Timer(0.2, server.kill).start()
        t0 = time.monotonic()
        with pytest.raises(RuntimeError, match="lost the connection to the master"):
            c.get("never")
        assert time.monotonic() - t0 < 5
    finally:
        finish([server])


def test_prefix_store_namespaces():
    s = master()
    a, b = dist.PrefixStore("a", s), dist.PrefixStore("b", s)
    a.set("k", "1")
    b.set("k", "2")
    assert a.get("k") == b"1" and s.get("b/k") == b"2"
    assert a.add("n", 3) == 3 and not b.check(["n"])
    nested = dist.PrefixStore("inner", a)
    nested.set("x", "y")
    assert s.get("a/inner/x") == b"y"
    assert a.underlying_store is not None
    with pytest.raises(TypeError):
        dist.PrefixStore("p", None)
