"""A pytest plugin that writes each failing test to EMBER_FAILURE_LOG as it fails.

tests/gpu/run.sh reads it: a worker process that crashes (a segfault in a
kernel launch, say) can take pytest-xdist's final report down with it, and
the failures that were already known would be lost. A test that was running
when its process died is left named in EMBER_FAILURE_LOG.running.<pid>.
"""
import os

LOG = os.environ.get("EMBER_FAILURE_LOG")
_active = True  # False in pytest-xdist's controller: its workers write


def pytest_configure(config):
    global _active
    _active = hasattr(config, "workerinput") or getattr(config.option, "dist", "no") == "no"


def _running_file():
    return f"{LOG}.running.{os.getpid()}"


def pytest_runtest_logstart(nodeid, location):
    if not _active:
        return
    with open(_running_file(), "w") as f:
        f.write(nodeid + "\n")


def pytest_runtest_logfinish(nodeid, location):
    if not _active:
        return
    try:
        os.remove(_running_file())
    except FileNotFoundError:
        pass


def pytest_runtest_logreport(report):
    if not (_active and report.failed):
        return
    crash = getattr(report.longrepr, "reprcrash", None)
    message = crash.message if crash is not None else str(report.longrepr)
    message = " ".join(message.split())
    if len(message) > 600:  # the start names the failure; a subprocess's own error is at the end
        message = message[:200] + " [...] " + message[-400:]
    with open(LOG, "a") as f:  # one short append per failure: workers may write at once
        f.write(f"FAILED {report.nodeid} ({report.when}): {message}\n")
