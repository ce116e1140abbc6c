"""Helpers for tests that run one process per rank: collect their outputs
without leaving a process behind, and require every rank to report OK."""


def collect(procs, timeout):
    """(exit code, output) of each process in order; any still running after
    `timeout` seconds (or when collecting fails) is killed."""
    outputs = []
    try:
        for p in procs:
            out, _ = p.communicate(timeout=timeout)
            outputs.append((p.returncode, out))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return outputs


def require_ok(outputs):
    for r, (code, out) in enumerate(outputs):
        assert code == 0 and "OK" in out, f"rank {r} exited with {code}:\n{out}"
