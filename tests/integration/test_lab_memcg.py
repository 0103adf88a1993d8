"""A lab node's memory cgroup (lab/memcg.py), on this machine's real cgroup v1 memory
controller, for a node of no lab: made with its limit, a daemon born in it through its
start command, one started elsewhere told apart, and nothing left after `release`."""

from __future__ import annotations

import os
import subprocess

from lab import memcg
from lab.netns import LabNetwork, LabNode

NODE = LabNode(1, LabNetwork(bridge="fltestbr", subnet="10.99.0", netns_prefix="fltestmem"))


def test_a_daemon_is_born_in_its_node_cgroup_and_release_leaves_nothing(tmp_path):
    pid_file = tmp_path / "daemon.pid"
    try:
        cgroup = memcg.confine(NODE, 64)
        assert int((cgroup / "memory.limit_in_bytes").read_text()) == 64 << 20

        # the start command a lab writes into the inventory, as SSH would run it
        command = memcg.born_in(NODE, f"sh -c 'sleep 60 & echo $! > {pid_file}'")
        subprocess.run(["sh", "-c", command], check=True, timeout=10)
        pid = int(pid_file.read_text())

        assert str(pid) in (cgroup / "cgroup.procs").read_text().split()
        assert not memcg.outside(NODE, pid)
        assert memcg.outside(NODE, os.getpid())  # this test runs elsewhere
        assert memcg.confine(NODE, 64) == cgroup  # idempotent
        os.kill(pid, 9)

        memcg.release([NODE])  # waits for PID 1 to reap it

        assert not cgroup.exists()
        assert memcg.leftovers([NODE]) == []
    finally:
        if memcg.cgroup_of(NODE).exists():
            for pid in (memcg.cgroup_of(NODE) / "cgroup.procs").read_text().split():
                os.kill(int(pid), 9)
            memcg.release([NODE])
