"""A service's PID comes from its pid file only while that PID still runs the service's program."""

import os
import subprocess

import pytest

from clusters.access import services
from clusters.access.inventory import Cluster, Node, Service

CLUSTER = Cluster(name="here", kind="ceph", nodes=(Node("n1", "127.0.0.1"),))


@pytest.fixture
def sleeper(tmp_path):
    proc = subprocess.Popen(["sleep", "60"])
    pid_file = tmp_path / "daemon.pid"
    pid_file.write_text(f"{proc.pid}\n")
    yield proc, str(pid_file)
    proc.kill()
    proc.wait()


def test_pid_of_a_running_service(sleeper):
    proc, pid_file = sleeper
    service = Service(name="s", kind="x", node=None, pid_file=pid_file, program="sleep")

    assert services.pid_of(CLUSTER, service) == proc.pid


def test_a_pid_reused_by_another_program_is_not_the_service(sleeper):
    _, pid_file = sleeper  # the pid file of a killed OSD now points at `sleep`
    osd = Service(name="osd.0", kind="osd", node=None, pid_file=pid_file)

    assert services.pid_of(CLUSTER, osd) is None
    with pytest.raises(services.RemoteCommandFailed, match="osd.0 is not running"):
        services.kill(CLUSTER, osd)


def test_a_stale_pid_file_is_not_running(sleeper):
    proc, pid_file = sleeper
    proc.kill()
    proc.wait()
    service = Service(name="s", kind="x", node=None, pid_file=pid_file, program="sleep")

    assert services.pid_of(CLUSTER, service) is None


@pytest.fixture
def script_daemon(tmp_path):
    """A Python script run by its interpreter, as Swift's servers are."""
    script = tmp_path / "swift-object-server"
    script.write_text("#!/usr/bin/python3\nimport time\ntime.sleep(60)\n")
    script.chmod(0o755)
    proc = subprocess.Popen([str(script)])
    pid_file = tmp_path / "object-server.pid"
    pid_file.write_text(f"{proc.pid}\n")
    yield proc, str(pid_file)
    proc.kill()
    proc.wait()


def test_a_script_service_is_known_by_the_script_its_interpreter_runs(script_daemon):
    proc, pid_file = script_daemon
    server = Service(name="object-server.node1", kind="object-server", node=None,
                     pid_file=pid_file, program="swift-object-server")
    other = Service(name="proxy-server", kind="proxy-server", node=None, pid_file=pid_file,
                    program="swift-proxy-server")

    assert services.pid_of(CLUSTER, server) == proc.pid
    assert services.pid_of(CLUSTER, other) is None


def test_a_group_kill_takes_the_children_a_daemon_forked(tmp_path):
    # a daemon in a session of its own that forked a child, as Swift's auditors do
    proc = subprocess.Popen(["setsid", "sh", "-c", "sleep 60 & echo $! > child; wait"],
                            cwd=tmp_path)
    pid_file = tmp_path / "daemon.pid"
    pid_file.write_text(f"{proc.pid}\n")
    service = Service(name="s", kind="x", node=None, pid_file=str(pid_file), program=None)
    deadline = 50
    while not (tmp_path / "child").exists() and deadline:
        subprocess.run(["sleep", "0.1"])
        deadline -= 1
    child = int((tmp_path / "child").read_text())

    assert services.kill(CLUSTER, service, "KILL", group=True) == proc.pid

    proc.wait(5)
    subprocess.run(["sleep", "0.3"])
    state = open(f"/proc/{child}/status").read() if os.path.exists(f"/proc/{child}") else ""
    assert state == "" or "State:\tZ" in state
