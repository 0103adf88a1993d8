"""A service's PID comes from its pid file only while that PID still runs the service's program."""

import subprocess

import pytest

from clusters import services
from clusters.inventory import Cluster, Node, Service

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
