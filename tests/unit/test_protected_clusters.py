"""Protected clusters (issue 25, "Nothing protects a production cluster"): the inventory's
`chaos` field, and every fault action refusing a protected cluster before it touches
anything (no command, no SSH, no ledger entry), while the preflight names the faults."""

from __future__ import annotations

import subprocess

import paramiko
import pytest
import yaml
from chaoslib.exceptions import ActivityFailed

from actions import (
    ACTION_MODULES,
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
from clusters.access.inventory import parse_inventory
from clusters.discovery.draft import DraftCluster, Entry
from clusters.discovery.render import inventory_text
from clusters.exceptions import InventoryError, ProtectedCluster
from clusters.safety import fault_ledger
from service.experiments.fault_scope import RESTORES, WATCHES
from service.experiments.preflight import check_protected

NODES = [{"name": f"node{i}", "address": f"192.0.2.{i}", "zone": f"zone{i}"}
         for i in (1, 2, 3, 4)]
CEPH = {"kind": "ceph", "client": {"conf": "/etc/ceph/ceph.conf"}, "nodes": NODES,
        "disks": [{"node": f"node{i + 1}", "device": "/dev/sdb", "mount": f"/osd/ceph-{i}",
                   "osd": i} for i in range(4)],
        "services": [{"name": f"osd.{i}", "kind": "osd", "node": f"node{i + 1}",
                      "unit": f"ceph-osd@{i}"} for i in range(4)]
        + [{"name": "mon.a", "kind": "mon", "node": "node1", "unit": "ceph-mon@a"}],
        "scale": {"ceph_osd": {k: f"/scale/{{id}}.{k}" for k in ("image", "mount", "pid_file",
                                                                 "log")}}}
SWIFT = {"kind": "swift", "client": {"swift_dir": "/etc/swift"}, "nodes": NODES,
         "disks": [{"node": f"node{i}", "device": "/dev/sdc", "mount": f"/srv/node/d{i}",
                    "swift_device": f"d{i}"} for i in (1, 2, 3, 4)],
         "services": [{"name": f"object-server.node{i}", "kind": "object-server",
                       "node": f"node{i}", "unit": "swift-object"} for i in (1, 2, 3, 4)]}


@pytest.mark.parametrize("spec, chaos", [
    ({"chaos": "allowed"}, "allowed"),
    ({"chaos": "protected"}, "protected"),
    ({}, "protected"),  # not marked allowed: protected
    ({"chaos": None}, "protected"),
    ({"lab": True}, "allowed"),  # a lab made before the field existed
    ({"lab": True, "chaos": "protected"}, "protected"),
])
def test_a_cluster_not_marked_chaos_allowed_is_protected(spec, chaos):
    cluster = parse_inventory({"clusters": {"c": {**CEPH, **spec}}})["c"]
    assert cluster.chaos == chaos
    assert cluster.protected is (chaos == "protected")


@pytest.mark.parametrize("value, message", [
    ("yes", "inventory is malformed: cluster 'c': chaos must be allowed or protected, "
            "not 'yes'"),
    (True, "inventory is malformed: cluster 'c': chaos must be allowed or protected, "
           "not True"),
    ("Allowed", "inventory is malformed: cluster 'c': chaos must be allowed or protected, "
                "not 'Allowed'"),
])
def test_the_chaos_field_is_allowed_or_protected(value, message):
    with pytest.raises(InventoryError) as refused:
        parse_inventory({"clusters": {"c": {**CEPH, "chaos": value}}})
    assert str(refused.value) == message


def test_discovery_writes_protected_with_a_comment_on_how_to_change_it():
    draft = DraftCluster(name="prod", kind="ceph", origin="ceph -s", ssh=Entry({}),
                         nodes=(Entry({"name": "n1", "address": "10.0.0.1"}),), disks=(),
                         services=(), client=Entry({"conf": "/etc/ceph/ceph.conf"}))
    text = inventory_text(draft, "faultline inventory discover")
    assert "    chaos: protected\n" in text
    assert "change this line to `chaos: allowed`" in " ".join(
        line.strip("# ") for line in text.splitlines())
    assert parse_inventory(yaml.safe_load(text))["prod"].protected


@pytest.fixture
def untouchable(tmp_path, monkeypatch):
    """Protected clusters on addresses nothing answers, a ledger of this test's own, and
    any command, SSH connection or process start failing the test."""
    monkeypatch.setenv("FAULTLINE_HOME", str(tmp_path))
    fault_ledger.set_backend(None)
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump({"clusters": {
        "prod-ceph": {**CEPH, "chaos": "protected"},
        "prod-swift": {**SWIFT, "chaos": "protected"}}}))

    def touched(*args, **kwargs):
        raise AssertionError(f"a protected cluster was touched: {args!r}")

    monkeypatch.setattr(subprocess, "run", touched)
    monkeypatch.setattr(subprocess, "Popen", touched)
    monkeypatch.setattr(paramiko.SSHClient, "connect", touched)
    return lambda name: {"faultline_cluster": name, "faultline_inventory": str(inventory)}


FAULTS = [
    ("prod-ceph", ceph.kill_osd, {"osd_id": 1}),
    ("prod-ceph", ceph.kill_osd, {"osd_id": -1}),  # any running one: not even asked which
    ("prod-ceph", ceph.hang_osd, {"osd_id": 1}),
    ("prod-ceph", ceph.kill_daemon, {"daemon": "mon.a", "allow_unavailable": True}),
    ("prod-ceph", disk.fail_disk, {"node": "node2"}),
    ("prod-ceph", power.power_off_node, {"node": "node2"}),
    ("prod-ceph", power.power_off_zone, {"zone": "zone3"}),
    ("prod-ceph", network.partition_node, {"node": "node2"}),
    ("prod-ceph", fill.fill_cluster, {"target": 0.5}),
    ("prod-ceph", cpu.hog_cpu, {"node": "node2"}),
    ("prod-ceph", ceph_scale.add_osd, {"node": "node2"}),
    ("prod-ceph", corrupt.corrupt_replica, {"osd_id": 1, "object_name": "o"}),
    ("prod-ceph", memory.exhaust_memory, {"node": "node2", "size_mib": 64}),
    ("prod-ceph", network.degrade_link, {"node": "node2", "loss_percent": 10}),
    ("prod-ceph", recovery_tuning.set_ceph_recovery,
     {"settings": {"osd_mclock_profile": "high_recovery_ops"}}),
    ("prod-swift", recovery_tuning.set_swift_replication, {"settings": {"concurrency": 1}}),
    ("prod-swift", swift.kill_server, {"server": "object", "node": "node2"}),
    ("prod-swift", swift.hang_server, {"server": "object", "node": "node2"}),
    ("prod-swift", swift.add_device, {"node": "node2"}),
    ("prod-swift", throttle.throttle_disk, {"daemon": "object-server.node2",
                                            "read_bps": 1_000_000}),
]


@pytest.mark.parametrize("cluster, action, arguments", FAULTS,
                         ids=[f"{a.__module__}.{a.__name__}" for _, a, _ in FAULTS])
def test_every_fault_action_refuses_a_protected_cluster_and_touches_nothing(
        untouchable, cluster, action, arguments):
    with pytest.raises(ActivityFailed) as refused:
        action(**arguments, configuration=untouchable(cluster))
    assert f"cluster {cluster!r} is protected (its inventory does not say chaos: allowed)" \
        in str(refused.value)
    assert "nothing was touched" in str(refused.value)
    assert fault_ledger.outstanding() == []


def test_every_fault_of_the_actions_is_in_the_table_above():
    """Every fault action is marked actions.safety.fault_action, and this table names each one, so
    the test above plays each on a protected cluster."""
    faults = {f"{module.__name__}.{name}"
              for module in (ceph, ceph_scale, corrupt, cpu, disk, fill, memory, network,
                             power, recovery_tuning, swift, throttle)
              for name in module.__all__ if name not in RESTORES | WATCHES}
    assert {m for m in ACTION_MODULES} == {m.__name__ for m in (
        ceph, ceph_scale, corrupt, cpu, disk, fill, memory, network, power, recovery_tuning,
        swift, throttle)}
    assert faults == {f"{a.__module__}.{a.__name__}" for _, a, _ in FAULTS}
    assert all(getattr(a, "faultline_fault", False) for _, a, _ in FAULTS)  # safety.fault_action


def test_the_preflight_names_the_faults_a_protected_cluster_refuses():
    cluster = parse_inventory({"clusters": {"prod": CEPH}})["prod"]
    experiment = {"method": [
        {"type": "action", "name": "kill-osd",
         "provider": {"type": "python", "module": "actions.ceph", "func": "kill_osd"}},
        {"type": "action", "name": "start-osd",
         "provider": {"type": "python", "module": "actions.ceph", "func": "start_osd"}}]}
    with pytest.raises(ProtectedCluster) as refused:
        check_protected(experiment, cluster)
    assert str(refused.value) == (
        "cluster 'prod' is protected (its inventory does not say chaos: allowed): the fault "
        "kill-osd (actions.ceph.kill_osd) refused, nothing was touched (set chaos: allowed "
        "on it in the inventory to let it take faults)")
    # restores and probes alone are no fault: a protected cluster runs them
    check_protected({"method": experiment["method"][1:]}, cluster)
