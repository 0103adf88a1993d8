"""A process fault's intent on a pid-file daemon (clusters/faults/supervision.py), with real
processes on this machine: `down` is the plain SIGKILL it always was, nothing restarts it
and the restore starts it; one brought back behind the fault's back is a deviation; a
`crash` whose daemon some other supervisor restarted is reported, not started twice."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from clusters.access import services
from clusters.access.inventory import Cluster, Node, Service
from clusters.faults import supervision


@pytest.fixture
def daemon(tmp_path: Path):
    """A `sleep` daemon managed by a pid file, with the start command an inventory gives."""
    pid_file = tmp_path / "sleeper.pid"
    start = (f"setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > {pid_file}")
    service = Service("osd.9", "osd", None, pid_file=str(pid_file), start=start,
                      program="sleep")
    cluster = Cluster("here", "ceph", (Node("node1", "127.0.0.1"),), services=(service,),
                      client={"conf": "/dev/null"})
    _start(cluster, service)
    yield cluster, service
    pid = services.pid_of(cluster, service)
    if pid is not None:
        os.kill(pid, signal.SIGKILL)


def _start(cluster: Cluster, service: Service, timeout: float = 5.0) -> None:
    """Start it as someone would, by hand, and wait until its pid file names a `sleep` (a
    moment after the start command returns, the child may not have executed it yet)."""
    subprocess.run(["sh", "-c", service.start], check=True)
    deadline = time.monotonic() + timeout
    while services.pid_of(cluster, service) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert services.pid_of(cluster, service) is not None


def _wait_gone(cluster: Cluster, service: Service, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while services.pid_of(cluster, service) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert services.pid_of(cluster, service) is None


def test_down_on_a_pid_file_daemon_is_a_sigkill_and_its_restore_starts_it(daemon):
    cluster, service = daemon
    details = supervision.prepare(cluster, service, "down")
    assert (details["supervisor"], details["unit"], details["masked"]) == ("pid_file", None,
                                                                          False)
    done = supervision.inject(cluster, service, details)
    assert done["pid"] == details["pid"]
    _wait_gone(cluster, service)
    outcome = supervision.restore(cluster, service, details)
    assert (outcome["started_by_restore"], outcome["deviation"]) == (True, None)
    deadline = time.monotonic() + 5
    while services.pid_of(cluster, service) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert services.pid_of(cluster, service) not in (None, details["pid"])


def _killed_then_started_behind_its_back(daemon, intent: str) -> dict:
    """The fault's outcome when something else started the daemon before the restore."""
    cluster, service = daemon
    details = supervision.prepare(cluster, service, intent)
    supervision.inject(cluster, service, details)
    _wait_gone(cluster, service)
    _start(cluster, service)  # an operator, or another supervisor
    return supervision.restore(cluster, service, details)


def test_a_pid_file_daemon_back_before_the_restore_is_a_deviation_for_down(daemon):
    outcome = _killed_then_started_behind_its_back(daemon, "down")
    assert outcome["deviation"].startswith("osd.9 was running again (PID ")
    assert outcome["started_by_restore"] is False


def test_a_crashed_pid_file_daemon_restarted_elsewhere_is_reported_not_started_twice(daemon):
    outcome = _killed_then_started_behind_its_back(daemon, "crash")
    assert (outcome["deviation"], outcome["started_by_restore"], outcome["restarts"]) == \
        (None, False, 1)
