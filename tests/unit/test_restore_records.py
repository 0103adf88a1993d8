"""Restores take what to undo only from the fault ledger: no restore has a parameter that
says what to do (a unit, a record, a path, a cgroup), and a ledger record that points outside
the place its fault used is refused with one error before anything runs (issue 25)."""

from __future__ import annotations

import inspect
import json

import pytest
import yaml
from chaoslib.exceptions import ActivityFailed, InvalidActivity
from chaoslib.experiment import ensure_experiment_is_valid

from actions import (
    ceph,
    ceph_scale,
    corrupt,
    cpu,
    disk,
    fill,
    memory,
    network,
    power,
    recovery_tuning,
    swift,
    throttle,
)
from clusters.access import services as cluster_services
from clusters.access.ssh import NodeShell
from clusters.safety import fault_ledger
from service.experiments.library import default_directory

# every restore a fault names in the ledger, and the only "which" a restore may be told
RESTORES = [ceph.start_osd, ceph.resume_osd, ceph.start_daemon, swift.start_server,
            swift.resume_server, swift.remove_device, disk.restore_disk, power.power_on_node,
            power.power_on_zone, network.heal_partition, network.restore_link, fill.remove_fill,
            ceph_scale.remove_osd, cpu.stop_cpu_hog, corrupt.restore_corruption,
            throttle.unthrottle_disk, memory.stop_memory_hog]
WHICH = {"osd_id", "daemon", "server", "node", "zone", "device", "object_name", "replica",
         "timeout_s", "allow_unavailable", "replace", "configuration"}
# the "what" each restore took from its caller before issue 25
OLD_WHAT = [(ceph.start_osd, "fault"), (ceph.start_daemon, "fault"),
            (swift.start_server, "fault"), (ceph_scale.remove_osd, "added"),
            (corrupt.restore_corruption, "corruption"), (throttle.unthrottle_disk, "back_to"),
            (memory.stop_memory_hog, "before"), (swift.remove_device, "image_dir")]

NODES = [{"name": f"node{i}", "address": f"10.99.0.{10 + i}", "zone": f"zone{i}"}
         for i in (1, 2, 3)]
INVENTORY = {"clusters": {
    "ceph": {
        "kind": "ceph", "client": {"conf": "/etc/ceph/ceph.conf", "pool": "rbd"},
        "nodes": NODES,
        "disks": [{"node": f"node{i}", "device": f"/img/osd{i}.img", "mount": f"/osd/ceph-{i}",
                   "osd": i} for i in (1, 2, 3)],
        "services": [{"name": f"osd.{i}", "kind": "osd", "node": f"node{i}",
                      "pid_file": f"/run/osd.{i}.pid"} for i in (1, 2, 3)],
        "scale": {"ceph_osd": {"image": "/img/osd{id}.img", "mount": "/osd/ceph-{id}",
                               "pid_file": "/run/osd.{id}.pid", "log": "/log/osd.{id}.out"}}},
    "swift": {
        "kind": "swift", "client": {"auth_url": "http://10.99.0.1:8080/auth/v1.0"},
        "nodes": NODES,
        "disks": [{"node": f"node{i}", "device": f"/img/d{i}.img", "mount": f"/srv/node/d{i}",
                   "swift_device": f"d{i}"} for i in (1, 2, 3)],
        "services": [{"name": f"object-server.node{i}", "kind": "object-server",
                      "node": f"node{i}", "pid_file": f"/run/object{i}.pid"}
                     for i in (1, 2, 3)]},
}}
CORRUPTION = {"system": "swift", "object": "faultline-canary/faultline-canary-1", "owned": True,
              "size": 16384, "md5": "0" * 32, "bad_md5": "1" * 32, "offset": 5461,
              "good": "00" * 16, "replica": "node3/d3", "copies": 3,
              "holders": ["node1", "node2", "node3"], "node": "node3",
              "path": "/srv/node/d3/objects/17/abc/" + "a" * 29 + "abc",
              "mount": "/srv/node/d3", "hash": "a" * 29 + "abc"}
ADDED = {"osd_id": 4, "uuid": "u", "node": "node1", "zone": "zone1", "address": "10.99.0.11",
         "size_gib": 2, "conf": "/etc/ceph/ceph.conf", "image": "/img/osd4.img",
         "mount": "/osd/ceph-4", "pid_file": "/run/osd.4.pid", "log": "/log/osd.4.out"}


@pytest.fixture
def ran(monkeypatch):
    """Every command run on a node or on this machine (none may be)."""
    commands: list[str] = []

    def refuse(command, *args, **kwargs):
        commands.append(command if isinstance(command, str) else " ".join(command))
        raise AssertionError(f"ran {commands[-1]!r}")

    monkeypatch.setattr(NodeShell, "run", lambda self, command, *a, **k: refuse(command))
    monkeypatch.setattr(NodeShell, "connect", lambda self: refuse("ssh connect"))
    monkeypatch.setattr(cluster_services.subprocess, "run", refuse)
    return commands


@pytest.fixture
def config(tmp_path):
    """An inventory file of this test, and a ledger file installed for it."""
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump(INVENTORY))
    fault_ledger.set_backend(fault_ledger.FileLedger(tmp_path / "faults.json"))
    yield lambda cluster: {"faultline_cluster": cluster, "faultline_inventory": str(inventory)}
    fault_ledger.set_backend(None)


@pytest.mark.parametrize("restore", RESTORES, ids=lambda f: f.__name__)
def test_a_restore_is_told_only_which_fault_to_undo(restore):
    assert set(inspect.signature(restore).parameters) <= WHICH


@pytest.mark.parametrize(("restore", "what"), OLD_WHAT, ids=lambda v: getattr(v, "__name__", v))
def test_a_restore_has_no_parameter_for_what_to_undo(restore, what):
    assert what not in inspect.signature(restore).parameters


def test_chaoslib_refuses_a_start_osd_told_which_unit_to_start():
    experiment = json.loads((default_directory() / "ceph-kill-osd.json").read_text())
    start = next(a for a in experiment["method"] + experiment.get("rollbacks", [])
                 if a["provider"].get("func") == "start_osd")
    start["provider"].setdefault("arguments", {})["fault"] = {"unit": "poweroff.target"}

    with pytest.raises(InvalidActivity, match="argument 'fault' is not part of the function "
                                              "signature"):
        ensure_experiment_is_valid(experiment)


def _enter(cluster: str, key: str, restore: str, arguments: dict, record: dict) -> None:
    fault_ledger.record(cluster, key, key, restore, arguments, record)


# (cluster, ledger key, restore, its arguments, the record, the call, the refusal)
HOSTILE_RECORDS = [
    pytest.param("ceph", "daemon:osd.1", "actions.ceph.start_osd", {"osd_id": 1},
                 {"fault": {"daemon": "osd.1", "intent": "down", "supervisor": "pid_file",
                            "unit": "poweroff.target", "pid": 7}},
                 lambda c: ceph.start_osd(osd_id=1, configuration=c),
                 "start_osd: refused: the fault ledger's record of daemon:osd.1 names unit "
                 "'poweroff.target', not the inventory's None of osd.1; nothing was run",
                 id="start_osd-unit"),
    pytest.param("ceph", "daemon:osd.2", "actions.ceph.start_osd", {"osd_id": 2},
                 {"fault": {"daemon": "osd.3", "intent": "down", "supervisor": "pid_file",
                            "unit": None}},
                 lambda c: ceph.start_osd(osd_id=-1, configuration=c),
                 "names daemon 'osd.3', not the inventory's 'osd.2'", id="start_osd-all"),
    pytest.param("swift", "daemon:object-server.node1", "actions.swift.start_server",
                 {"server": "object", "node": "node1"},
                 {"fault": {"daemon": "object-server.node1", "intent": "down",
                            "supervisor": "systemd", "unit": "reboot.target"}},
                 lambda c: swift.start_server(server="object", node="node1", configuration=c),
                 "names supervisor 'systemd', not the inventory's 'pid_file'",
                 id="start_server-unit"),
    pytest.param("ceph", "scale:osd.4", "actions.ceph_scale.remove_osd", {"osd_id": 4},
                 {"added": {**ADDED, "mount": "/", "image": "/etc/passwd"}},
                 lambda c: ceph_scale.remove_osd(osd_id=4, configuration=c),
                 "remove_osd: refused: the fault ledger's record of scale:osd.4 names image "
                 "'/etc/passwd', not '/img/osd4.img' where the inventory's scale.ceph_osd puts "
                 "it; nothing was run", id="remove_osd-paths"),
    pytest.param("ceph", "scale:osd.4", "actions.ceph_scale.remove_osd", {"osd_id": 4},
                 {"added": {**ADDED, "node": "elsewhere"}},
                 lambda c: ceph_scale.remove_osd(configuration=c),
                 "names node 'elsewhere', no node of ceph", id="remove_osd-node"),
    pytest.param("swift", "corrupt:faultline-canary/faultline-canary-1@node3/d3",
                 "actions.corrupt.restore_corruption", {},
                 {"corruption": {**CORRUPTION, "hash": "../../../../etc"}},
                 lambda c: corrupt.restore_corruption(configuration=c),
                 "names hash '../../../../etc', not an object's name hash (32 hex digits)",
                 id="restore_corruption-hash"),
    pytest.param("swift", "corrupt:faultline-canary/faultline-canary-1@node3/d3",
                 "actions.corrupt.restore_corruption", {},
                 {"corruption": {**CORRUPTION, "mount": "/etc"}},
                 lambda c: corrupt.restore_corruption(configuration=c),
                 "names mount '/etc', not '/srv/node/d3' where the inventory mounts node3/d3",
                 id="restore_corruption-mount"),
    pytest.param("swift", "corrupt:passwords/all@node3/d3",
                 "actions.corrupt.restore_corruption", {},
                 {"corruption": {**CORRUPTION, "object": "passwords/all"}},
                 lambda c: corrupt.restore_corruption(configuration=c),
                 "would delete 'passwords/all' as a canary, which is no canary",
                 id="restore_corruption-not-a-canary"),
    pytest.param("ceph", "throttle:osd.1", "actions.throttle.unthrottle_disk",
                 {"daemon": "osd.1"}, {"back_to": "/../../etc"},
                 lambda c: throttle.unthrottle_disk(daemon="osd.1", configuration=c),
                 "names back_to '/../../etc'", id="unthrottle_disk-dotdot"),
    pytest.param("swift", "scale:node1/scale-node1", "actions.swift.remove_device",
                 {"node": "node1", "device": "scale-node1"}, {"image_dir": "/srv/../etc"},
                 lambda c: swift.remove_device(node="node1", configuration=c),
                 "names image_dir '/srv/../etc', not a normalised absolute path",
                 id="remove_device-image_dir"),
    pytest.param("ceph", "memory:node2", "actions.memory.stop_memory_hog", {"node": "node2"},
                 {"before": ["osd.1"]},
                 lambda c: memory.stop_memory_hog(node="node2", configuration=c),
                 "names ['osd.1'], not the {daemon: PID} of node2's daemons",
                 id="stop_memory_hog-before"),
    pytest.param("swift", "disk:node2:/srv/node/d2", "actions.disk.restore_disk",
                 {"node": "node2", "device": "/srv/node/d2"},
                 {"device": "/dev/sda", "mount": "/"},
                 lambda c: disk.restore_disk(node="node2", replace=True, configuration=c),
                 "names {'device': '/dev/sda', 'mount': '/'}, not the inventory's",
                 id="restore_disk-device"),
    # a value that would add a line of its own to the operator's file
    pytest.param("swift", "settings:object-replicator",
                 "actions.recovery_tuning.restore_swift_replication", {},
                 {"previous": {"object-replicator.node1": {
                     "concurrency": "4\nbind_ip = 0.0.0.0"}}},
                 lambda c: recovery_tuning.restore_swift_replication(configuration=c),
                 "names other settings than concurrency, handoffs_first",
                 id="restore_swift_replication-newline"),
    pytest.param("swift", "settings:object-replicator",
                 "actions.recovery_tuning.restore_swift_replication", {},
                 {"previous": {"object-replicator.node1": {"bind_ip": "0.0.0.0"}}},
                 lambda c: recovery_tuning.restore_swift_replication(configuration=c),
                 "names other settings than concurrency, handoffs_first",
                 id="restore_swift_replication-other-setting"),
]


@pytest.mark.parametrize(("cluster", "key", "restore", "arguments", "record", "call",
                          "message"), HOSTILE_RECORDS)
def test_a_ledger_record_that_points_outside_its_place_is_refused_and_nothing_runs(
        config, ran, cluster, key, restore, arguments, record, call, message):
    _enter(cluster, key, restore, arguments, record)

    with pytest.raises(ActivityFailed) as refused:
        call(config(cluster))

    assert message in str(refused.value)
    assert "refused: the fault ledger's record of" in str(refused.value)
    assert ran == []
    assert [e.key for e in fault_ledger.outstanding(cluster)] == [key]  # still to be healed


def test_restore_disk_with_no_ledger_entry_touches_nothing_and_says_so(config, ran):
    result = disk.restore_disk(node="node2", replace=True, configuration=config("swift"))

    assert (result["remounted"], result["replaced"], result["started"]) == (False, False, [])
    assert result["note"] == ("no failure of disk /srv/node/d2 (device d2) on node2 in the "
                              "fault ledger: nothing was unmounted, formatted or started")
    assert ran == []


def test_remove_osd_with_no_ledger_entry_removes_nothing_and_says_so(config, ran):
    result = ceph_scale.remove_osd(configuration=config("ceph"))

    assert result["removed"] == [] and "nothing was removed" in result["note"]
    assert ran == []


def test_restore_corruption_with_no_ledger_entry_does_nothing_and_says_so(config, ran):
    result = corrupt.restore_corruption(configuration=config("swift"))

    assert result == {"restored": [], "note": "no such corruption is outstanding in the "
                                              "fault ledger: nothing was done"}
    assert ran == []


def test_a_swift_corruption_record_within_its_device_is_accepted():
    from clusters.access.inventory import parse_inventory
    from clusters.faults.corruption import confined

    cluster = parse_inventory(INVENTORY)["swift"]

    assert confined(cluster, CORRUPTION).path == CORRUPTION["path"]


def test_the_command_restoring_a_disk_never_formats_a_healthy_mount():
    from clusters.access.inventory import Disk
    from clusters.faults.disk_faults import restore_command

    command = restore_command(Disk(node="node2", device="/img/d2.img", mount="/srv/node/d2"),
                              replace=True)

    # the healthy test comes first and leaves, whatever `replace` says
    healthy_exit = command.index("then exit 0; fi")
    assert healthy_exit < command.index("mkfs.xfs")
    assert "[ 1 = 0 ]" not in command
