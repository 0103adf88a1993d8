"""A slow disk (clusters/faults/io_throttle.py): its arguments checked, and the blkio cgroup
commands it runs on the node, as text."""

from __future__ import annotations

import pytest

from clusters.access.inventory import parse_inventory
from clusters.exceptions import InvalidThrottle, UnknownCluster
from clusters.faults.io_throttle import (
    Throttle,
    checked_origin,
    parse_stats,
    release_command,
    throttle_command,
    throttle_of,
)

CLUSTER = parse_inventory({"clusters": {"lab": {
    "kind": "ceph", "client": {"conf": "/etc/ceph/ceph.conf"},
    "nodes": [{"name": f"node{i}", "address": f"10.77.0.{10 + i}"} for i in (1, 2)],
    "disks": [{"node": "node2", "device": "/img/osd1.img", "mount": "/osd/ceph-1", "osd": 1}],
    "services": [{"name": "osd.1", "kind": "osd", "node": "node2", "pid_file": "/run/o1"},
                 {"name": "mon.a", "kind": "mon", "node": None, "pid_file": "/run/m"}]}}})["lab"]


@pytest.mark.parametrize(("arguments", "message"), [
    ({}, "a throttle needs a limit: read_bps, write_bps, read_iops or write_iops"),
    ({"write_iops": 0, "read_bps": 0}, "a throttle needs a limit: read_bps, write_bps, "
                                       "read_iops or write_iops"),
    ({"write_iops": -3}, "write_iops must be a whole number from 1 to 1000000 (0: no limit), "
                         "not -3"),
    ({"write_bps": 100}, "write_bps must be a whole number from 4096 to 10000000000 "
                         "(0: no limit), not 100"),
    ({"read_bps": 1.5e6}, "read_bps must be a whole number from 4096 to 10000000000 "
                          "(0: no limit), not 1500000.0"),
    ({"write_mbps": 5}, "unknown limit 'write_mbps' (limits: read_bps, write_bps, read_iops, "
                        "write_iops)"),
])
def test_a_throttle_with_bad_limits_is_refused_with_one_message(arguments, message):
    with pytest.raises(InvalidThrottle) as refused:
        throttle_of(CLUSTER, "osd.1", **arguments)

    assert str(refused.value) == message


def test_only_a_storage_daemon_of_the_inventory_can_be_throttled():
    with pytest.raises(UnknownCluster, match="has no service 'osd.7'"):
        throttle_of(CLUSTER, "osd.7", write_iops=5)
    with pytest.raises(InvalidThrottle) as refused:
        throttle_of(CLUSTER, "mon.a", write_iops=5)
    assert str(refused.value) == ("mon.a is not a storage daemon (an OSD or a Swift object, "
                                  "container or account server): it has no disk")


def test_a_throttle_names_the_daemon_its_disk_and_its_limits():
    throttle = throttle_of(CLUSTER, "osd.1", write_iops=5, read_bps=1048576)

    assert throttle == Throttle("osd.1", "/osd/ceph-1", (("read_bps", 1048576),
                                                         ("write_iops", 5)))
    assert throttle.says() == ("osd.1's I/O to its disk /osd/ceph-1 throttled to read "
                               "1048576 B/s, write 5 IO/s")


def test_the_throttle_limits_the_mounted_device_in_a_cgroup_of_its_own():
    command = throttle_command(Throttle("osd.1", "/osd/ceph-1", (("write_iops", 5),)), 4242)

    assert "awk -v m=/osd/ceph-1 '$2 == m {d = $1} END {print d}' /proc/mounts" in command
    assert ('echo "$mm 5" > /sys/fs/cgroup/blkio/faultline-throttle-osd.1/'
            "blkio.throttle.write_iops_device") in command
    assert "pids=$(pgrep -g 4242); else pids=4242; fi" in command
    assert "read_bps_device" not in command


def test_the_release_puts_the_processes_back_where_they_were_and_removes_the_cgroup():
    command = release_command("osd.1", "/system.slice/ceph-osd@1.service")

    assert "echo $p > /sys/fs/cgroup/blkio/system.slice/ceph-osd@1.service/cgroup.procs" \
        in command
    assert command.endswith("rmdir /sys/fs/cgroup/blkio/faultline-throttle-osd.1; fi")
    assert "/sys/fs/cgroup/blkio/cgroup.procs" in release_command("osd.1")


def test_the_io_through_the_throttle_is_read_from_its_counters():
    text = "7:4 Read 4096\n7:4 Write 33792\nTotal 37888\n7:4 Read 1\n7:4 Write 5\nTotal 6\n"

    assert parse_stats(text) == {"bytes": 37888, "ios": 6}
    assert parse_stats("") == {"bytes": 0, "ios": 0}


def test_an_unthrottle_returns_the_daemon_to_the_cgroup_the_ledger_recorded(tmp_path):
    from actions.throttle import _recorded_origin
    from clusters.safety import fault_ledger

    fault_ledger.set_backend(fault_ledger.FileLedger(tmp_path / "faults.json"))
    try:
        assert _recorded_origin(CLUSTER, CLUSTER.service("osd.1")) == "/"
        fault_ledger.record("lab", "throttle:osd.1", "slow", "actions.throttle.unthrottle_disk",
                            {"daemon": "osd.1"}, {"back_to": "/system.slice/ceph-osd@1.service"})

        assert _recorded_origin(CLUSTER, CLUSTER.service("osd.1")) == \
            "/system.slice/ceph-osd@1.service"
    finally:
        fault_ledger.set_backend(None)


def test_a_daemon_throttled_already_or_outside_cgroup_v1_is_refused():
    assert checked_origin("osd.1", 42, "/system.slice/ceph-osd@1.service") == \
        "/system.slice/ceph-osd@1.service"
    with pytest.raises(InvalidThrottle) as refused:
        checked_origin("osd.1", 42, "/faultline-throttle-osd.1")
    assert str(refused.value) == ("osd.1 (PID 42) is throttled already (/sys/fs/cgroup/blkio"
                                  "/faultline-throttle-osd.1): unthrottle_disk first")
    with pytest.raises(InvalidThrottle) as refused:
        checked_origin("osd.1", 42, "")
    assert str(refused.value) == ("osd.1 (PID 42) is in no cgroup v1 blkio hierarchy: this "
                                  "node cannot be throttled this way")
