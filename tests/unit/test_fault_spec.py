"""Each action module describes its own faults (actions.fault_spec): every fault is declared
with a restore of its own module, its scope gets the action's own defaults, and a report's
note follows the action an activity calls, never the activity's name."""

from __future__ import annotations

import importlib

import pytest

from actions import ACTION_MODULES, fault_spec
from clusters.access.inventory import parse_inventory
from clusters.exceptions import ClusterError
from service.results.report import fault_note
from service.store.models import Event, Run

NODES = [{"name": f"node{i}", "address": f"192.0.2.{i}", "zone": f"zone{i}"} for i in (1, 2, 3)]
CLUSTERS = parse_inventory({"clusters": {
    "ceph": {"kind": "ceph", "client": {"conf": "/etc/ceph/ceph.conf"}, "nodes": NODES,
             "disks": [{"node": f"node{i + 1}", "device": "/dev/sdb", "mount": f"/osd/ceph-{i}",
                        "osd": i} for i in range(3)],
             "services": [{"name": f"osd.{i}", "kind": "osd", "node": f"node{i + 1}",
                           "unit": f"ceph-osd@{i}"} for i in range(3)]},
    "swift": {"kind": "swift", "client": {"swift_dir": "/etc/swift"}, "nodes": NODES,
              "disks": [{"node": f"node{i}", "device": f"/srv/d{i}.img", "mount": f"/srv/d{i}",
                         "swift_device": f"d{i}"} for i in (1, 2, 3)],
              "services": [{"name": f"object-server.node{i}", "kind": "object-server",
                            "node": f"node{i}", "unit": f"swift-object@{i}"}
                           for i in (1, 2, 3)]},
}})


def _marked_faults(name: str) -> set[str]:
    module = importlib.import_module(name)
    return {f for f in module.__all__ if getattr(getattr(module, f), "faultline_fault", False)}


@pytest.mark.parametrize("name", ACTION_MODULES)
def test_every_marked_fault_is_declared_with_a_restore_of_its_own_module(name):
    module = importlib.import_module(name)
    declared = getattr(module, "FAULTS", {})
    assert set(declared) == _marked_faults(name)
    for fault in declared.values():
        restore = getattr(module, fault.restore)
        assert fault.restore in module.__all__ and not getattr(restore, "faultline_fault", False)


def test_a_scope_gets_the_actions_own_defaults():
    kill = fault_spec.fault_actions()[("actions.ceph", "kill_osd")]
    assert kill.scope(CLUSTERS["ceph"], {}).says == \
        "kills one running OSD picked at random (SIGKILL)"
    assert kill.scope(CLUSTERS["ceph"], {"osd_id": -2}).osds == frozenset()  # any, as -1
    hang = fault_spec.fault_actions()[("actions.ceph", "hang_osd")]  # osd_id=1 by default
    assert hang.scope(CLUSTERS["ceph"], {}).osds == {1}
    memory = fault_spec.fault_actions()[("actions.memory", "exhaust_memory")]
    assert "for at most 120 s" in memory.scope(CLUSTERS["swift"], {}).says


def test_an_argument_the_action_does_not_take_is_a_problem_of_the_experiment():
    kill = fault_spec.fault_actions()[("actions.swift", "kill_server")]
    with pytest.raises(ClusterError, match="kill_server: .*'osd_id'"):
        kill.scope(CLUSTERS["swift"], {"osd_id": 1})


def _run(kind: str, method: list[dict], fault: str, filled: bool = False) -> Run:
    """A run started from the command line: the experiment is in its journal only."""
    events = [Event(kind="fault_injected", ts=2.0, detail={"name": fault})]
    controls = []
    if filled:
        events.insert(0, Event(kind="baseline_started", ts=1.0, detail={}))
        controls = [{"name": "faultline", "provider": {
            "type": "python", "module": "service.control",
            "arguments": {"baseline_after": method[0]["name"]}}}]
    return Run(cluster_kind=kind, journal={"experiment": {"method": method,
                                                            "controls": controls}},
               events=events)


def _action(name: str, module: str, func: str) -> dict:
    return {"type": "action", "name": name,
            "provider": {"type": "python", "module": module, "func": func}}


def test_the_note_follows_the_action_not_the_activitys_name():
    # a disk failure named by its author "zap", beside a kill named "fail-disk-x"
    zap = _run("swift", [_action("zap", "actions.disk", "fail_disk")], "zap")
    assert fault_note(zap).startswith("A failed device answers 507")
    misnamed = _run("swift", [_action("fail-disk-x", "actions.swift", "kill_server")],
                    "fail-disk-x")
    assert fault_note(misnamed) is None
    # the same fault on Ceph has no Swift note
    assert fault_note(_run("ceph", [_action("zap", "actions.disk", "fail_disk")], "zap")) is None


def test_a_queued_runs_own_experiment_is_read_first():
    run = _run("swift", [_action("zap", "actions.disk", "fail_disk")], "zap")
    run.experiment = {"method": [_action("zap", "actions.swift", "kill_server")]}
    assert fault_note(run) is None  # the queued document, not the journal's


def test_a_throttled_disk_has_its_note_on_both_systems():
    method = [_action("slow", "actions.throttle", "throttle_disk")]
    assert "SLOW_OPS" in fault_note(_run("ceph", method, "slow"))
    assert "answers its healthcheck" in fault_note(_run("swift", method, "slow"))


def test_a_fault_after_a_fill_gets_the_fills_note_on_ceph_and_its_own_on_swift():
    method = [_action("fill", "actions.fill", "fill_cluster"),
              _action("off", "actions.power", "power_off_zone")]
    assert fault_note(_run("ceph", method, "off", filled=True)).startswith(
        "On a filled cluster")
    assert fault_note(_run("ceph", method, "off")).startswith("With one copy per zone")
    assert fault_note(_run("swift", method, "off", filled=True)).startswith(
        "A powered-off node or zone is transient")
