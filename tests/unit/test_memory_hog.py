"""A node out of memory (clusters/faults/memory_hog.py): a hog bounded by its size, the node's
memory and a timeout, checked; the commands it runs on a lab node and on a node reached over
SSH (a systemd scope with a MemoryMax), as text; and what the report and the trigger form
say of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chaoslib.exceptions import ActivityFailed

from actions.memory import check_arguments
from clusters.access.inventory import Node, parse_inventory
from clusters.exceptions import InvalidMemoryHog, RemoteCommandFailed
from clusters.faults.memory_hog import (
    memory_command,
    memory_hog,
    parse_daemons,
    parse_memory,
    start_command,
    stop_command,
    taken,
    to_start,
)
from service.experiments.fault_scope import fault_scopes
from service.results.report import memory_lines

LAB_CGROUP = "/sys/fs/cgroup/memory/faultline-lab/flceph2"
LAB_NODE = Node("node2", "10.77.0.12", netns="flceph2", memory_cgroup=LAB_CGROUP)
REMOTE_NODE = Node("node2", "192.0.2.2")
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


@pytest.mark.parametrize(("arguments", "message"), [
    ({"size_mib": 8}, "size_mib must be a whole number from 16 to 1048576, not 8"),
    ({"size_mib": "1G"}, "size_mib must be a whole number from 16 to 1048576, not '1G'"),
    ({"size_mib": True}, "size_mib must be a whole number from 16 to 1048576, not True"),
    ({"timeout_s": 0}, "timeout_s must be a whole number from 1 to 3600, not 0"),
    ({"timeout_s": 86400}, "timeout_s must be a whole number from 1 to 3600, not 86400"),
    ({"size_mib": 2000}, "a memory hog of 2000 MiB does not fit node2: it has 1536 MiB, of "
                         "which 16 MiB stay for the hog's writer and the kernel (at most "
                         "1520 MiB)"),
    ({"size_mib": 1525}, "a memory hog of 1525 MiB does not fit node2: it has 1536 MiB, of "
                         "which 16 MiB stay for the hog's writer and the kernel (at most "
                         "1520 MiB)"),
])
def test_a_hog_unbounded_absurd_or_bigger_than_the_node_is_refused_with_one_message(
        arguments, message):
    with pytest.raises(InvalidMemoryHog) as refused:
        memory_hog(LAB_NODE, 1536, **arguments)

    assert str(refused.value) == message


def test_a_hog_of_size_zero_takes_all_of_the_node_but_its_reserve():
    assert memory_hog(LAB_NODE, 1536).size_mib == 1520


def test_the_arguments_are_checked_before_a_run():
    cluster = parse_inventory({"clusters": {"c": {
        "kind": "ceph", "client": {"conf": "/etc/ceph/ceph.conf"},
        "nodes": [{"name": "node2", "address": "192.0.2.2"}]}}})["c"]
    with pytest.raises(ActivityFailed, match="wait_s must be a whole number from 0 to 300"):
        check_arguments("exhaust_memory", {"node": "node2", "wait_s": -1}, cluster)
    with pytest.raises(ActivityFailed, match="has no node 'node9'"):
        check_arguments("stop_memory_hog", {"node": "node9"}, cluster)
    check_arguments("exhaust_memory", {"node": "node2", "size_mib": 1000}, cluster)


def test_on_a_lab_node_the_hog_is_a_tmpfs_file_written_from_a_child_of_the_node_cgroup():
    hog = memory_hog(LAB_NODE, 1536, size_mib=1000, timeout_s=90)
    command = start_command(hog)

    assert hog.cgroup == LAB_CGROUP
    # its own ceiling: the file's size plus room for the writer
    assert (f"mkdir -p {LAB_CGROUP}/faultline-memhog && echo {1016 << 20} > "
            f"{LAB_CGROUP}/faultline-memhog/memory.limit_in_bytes") in command
    assert ("mount -t tmpfs -o size=1000m,mode=0700 faultline-memhog "
            "/run/faultline-memhog/flceph2") in command
    # only the writer enters the node's cgroup; the timer outside takes the file away
    assert (f"echo $$ > {LAB_CGROUP}/faultline-memhog/cgroup.procs && exec dd if=/dev/zero "
            "of=/run/faultline-memhog/flceph2/hog bs=1M count=1000 status=none") in command
    assert ("; sleep 90; rm -f /run/faultline-memhog/flceph2/hog; umount "
            "/run/faultline-memhog/flceph2 && rmdir /run/faultline-memhog/flceph2; "
            "rm -f /run/faultline-memhog/flceph2.timer' </dev/null >/dev/null 2>&1 & "
            "echo $! > /run/faultline-memhog/flceph2.timer;") in command
    assert "systemd-run" not in command


def test_on_a_remote_node_the_hog_runs_in_a_transient_scope_with_a_memory_ceiling():
    hog = memory_hog(REMOTE_NODE, 16000, size_mib=4096, timeout_s=60)
    command = start_command(hog)

    assert hog.cgroup is None
    assert command.startswith("command -v systemd-run >/dev/null || { echo 'systemd-run is "
                              "not on the node")
    assert ("setsid systemd-run --scope --quiet --unit=faultline-memhog-node2 "
            "-p MemoryMax=4112M -p MemorySwapMax=0 sh -c 'dd if=/dev/zero "
            "of=/run/faultline-memhog/node2/hog bs=1M count=4096 status=none; sleep 60;")
    assert "-o size=4096m,mode=0700" in command
    assert "systemctl is-active --quiet faultline-memhog-node2.scope" in command
    assert "/sys/fs/cgroup" not in command


def test_the_restore_ends_the_hog_and_leaves_nothing_on_either_kind_of_node():
    lab = stop_command(LAB_NODE)
    remote = stop_command(REMOTE_NODE)

    assert lab.startswith("p=$(cat /run/faultline-memhog/flceph2.timer 2>/dev/null); if [ -n "
                          "\"$p\" ] && tr '\\0' ' ' </proc/$p/cmdline 2>/dev/null | grep -q "
                          "faultline-memhog; then kill -9 -- -$p 2>/dev/null; fi;")
    assert f"if [ -d {LAB_CGROUP}/faultline-memhog ]; then for i in" in lab
    assert "rm -f /run/faultline-memhog/flceph2/hog;" in lab
    assert "umount /run/faultline-memhog/flceph2 || exit 3" in lab
    assert lab.endswith(f"if [ -d {LAB_CGROUP}/faultline-memhog ]; then rmdir "
                        f"{LAB_CGROUP}/faultline-memhog || exit 3; fi")
    assert remote.startswith("systemctl stop faultline-memhog-node2.scope 2>/dev/null; "
                             "rm -f /run/faultline-memhog/node2/hog;")


def test_the_node_memory_comes_from_its_cgroup_on_the_lab_and_meminfo_elsewhere():
    assert f"cat {LAB_CGROUP}/memory.limit_in_bytes" in memory_command(LAB_NODE)
    assert "/proc/meminfo" in memory_command(REMOTE_NODE)
    assert "/proc/vmstat" in memory_command(REMOTE_NODE)
    assert parse_memory(f"{1536 << 20} {700 << 20} 3\n") == (1536, 700, 3)


def test_a_daemon_gone_or_running_under_another_pid_was_taken():
    before = parse_daemons("osd.1 4242\nobject-server.node1 17\nrsyncd.node1 99\n")
    now = {"osd.1": 4242, "object-server.node1": 18}

    assert taken(before, now) == ["object-server.node1", "rsyncd.node1"]


def test_the_report_says_whom_the_oom_killer_took_when_and_what_the_restore_started():
    injected = {"memory_hog": "1472 MiB that node2 cannot give back", "node": "node2",
                "node_memory_mib": 1536, "used_before_mib": 60, "oom_kills": 1,
                "oom_kill_at_s": [0.5], "oom_killed": ["osd.1"]}
    restored = {"oom_killed": ["osd.1"], "started_by_restore": ["osd.1"]}

    assert memory_lines("fault_injected", injected) == [
        "memory hog: 1472 MiB that node2 cannot give back (the node has 1536 MiB, 60 MiB in "
        "use before)",
        "OOM killer: 1 kill(s) in node2 at +0.5 s after the hog started; it took: osd.1"]
    assert memory_lines("activity", restored) == [
        "restore: the hog ended; down at the restore: osd.1; started again: osd.1"]
    assert memory_lines("activity", {"oom_killed": [], "started_by_restore": []}) == []
    assert memory_lines("activity", {"held_back": 3}) == []
    # the fault action's own activity record is no restore
    assert memory_lines("activity", {**injected, "daemons_before": {"osd.1": 7}}) == []


def test_the_trigger_form_says_the_fault_may_take_the_whole_node():
    cluster = parse_inventory({"clusters": {"c": {
        "kind": "ceph", "client": {"conf": "/etc/ceph/ceph.conf"},
        "nodes": [{"name": f"node{i}", "address": f"192.0.2.{i}"} for i in range(1, 5)],
        "services": [{"name": f"osd.{i}", "kind": "osd", "node": f"node{i + 1}",
                      "unit": f"ceph-osd@{i}"} for i in range(4)]}}})["c"]
    document = json.loads((EXPERIMENTS / "ceph-exhaust-memory.json").read_text())
    [scope] = fault_scopes(document, cluster)

    assert scope.says == ("runs node2 out of memory: all but 16 MiB of it that it cannot "
                          "give back, for at most 120 s, until the kernel's OOM killer takes "
                          "its biggest daemons")
    assert scope.takes_down == ("osd.1",)
    assert scope.restore == "stop-memory-hog: actions.memory.stop_memory_hog(node='node2')"


def test_the_restore_starts_only_what_ran_at_the_injection_or_without_a_record_all_down():
    names = ["osd.1", "object-server.node1", "rsyncd.node1"]
    before = {"osd.1": 4242, "object-server.node1": 17}  # rsyncd was down (another fault)

    assert to_start(names, before, {"osd.1": 4242}) == ["object-server.node1"]
    assert to_start(names, {}, {"osd.1": 4242}) == ["object-server.node1", "rsyncd.node1"]


def test_a_lab_node_without_a_memory_cgroup_is_refused_before_the_run():
    spec = {"kind": "ceph", "client": {"conf": "/etc/ceph/ceph.conf"}, "lab": True,
            "nodes": [{"name": "node2", "address": "10.77.1.12", "netns": "flreef2"}]}
    cluster = parse_inventory({"clusters": {"lab-ceph-reef": spec}})["lab-ceph-reef"]
    with pytest.raises(ActivityFailed, match="^node2 is a lab node with no memory cgroup of "
                                             "its own .*would fill this machine$"):
        check_arguments("exhaust_memory", {"node": "node2"}, cluster)
    with pytest.raises(InvalidMemoryHog):
        memory_command(cluster.node("node2"))


def test_a_node_memory_not_read_whole_is_one_clear_error():
    with pytest.raises(RemoteCommandFailed, match="the node's memory reads '1610612736 12', "
                                                  "not '<limit> <usage> <oom kills>'"):
        parse_memory("1610612736 12\n")


def test_a_node_name_that_shell_would_read_is_quoted():
    odd = Node("n'1;x", "192.0.2.9")
    start = start_command(memory_hog(odd, 4096, size_mib=100))
    assert "--unit='faultline-memhog-n'\"'\"'1;x'" in start
    assert "is-active --quiet 'faultline-memhog-n'\"'\"'1;x.scope'" in start
    assert "awk -v m='/run/faultline-memhog/n'\"'\"'1;x' '$2 == m" in start
    assert stop_command(odd).startswith("systemctl stop 'faultline-memhog-n'\"'\"'1;x.scope'")


def test_lab_down_ends_a_hog_left_on_a_lab_node_through_the_node_s_own_cgroup():
    from lab import ceph, memcg

    node = ceph.lab_at(None).nodes[1]
    command = stop_command(memcg.inventory_node(node))

    assert str(memcg.cgroup_of(node)) in command
