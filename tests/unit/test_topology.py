"""What the topology lets each system do about an experiment's faults, said before anything is
injected (service.experiments.topology), and how a run's report and a comparison show it."""

from __future__ import annotations

import pytest

from clusters.access.inventory import parse_inventory
from service.experiments.topology import topology_notes
from service.results.comparison import caveats
from service.results.report import format_report, topology_note
from service.store.models import Event, Run

# the lab's shape: zone1 = node1 + node2, zone2 = node3, zone3 = node4; one OSD or Swift
# device per node, osd.N on node N+1
LAB = {"node1": "zone1", "node2": "zone1", "node3": "zone2", "node4": "zone3"}


def ceph(zones: dict[str, str | None] = LAB):
    nodes = list(zones)
    return parse_inventory({"clusters": {"ceph": {
        "kind": "ceph", "client": {"conf": "/etc/ceph/ceph.conf"},
        "nodes": [{"name": n, "address": f"192.0.2.{i}", **({"zone": z} if z else {})}
                  for i, (n, z) in enumerate(zones.items(), 1)],
        "disks": [{"node": n, "device": "/dev/sdb", "mount": f"/osd/ceph-{i}", "osd": i}
                  for i, n in enumerate(nodes)],
        "services": [{"name": f"osd.{i}", "kind": "osd", "node": n, "unit": f"ceph-osd@{i}"}
                     for i, n in enumerate(nodes)]}}})["ceph"]


def swift():
    return parse_inventory({"clusters": {"swift": {
        "kind": "swift", "client": {"swift_dir": "/etc/swift"},
        "nodes": [{"name": n, "address": f"192.0.2.{i}", "zone": z}
                  for i, (n, z) in enumerate(LAB.items(), 1)],
        "disks": [{"node": n, "device": "/dev/sdb", "mount": f"/srv/d{i}",
                   "swift_device": f"d{i}"} for i, n in enumerate(LAB, 1)],
        "services": [{"name": f"object-server.{n}", "kind": "object-server", "node": n,
                      "unit": f"swift-object@{i}"} for i, n in enumerate(LAB, 1)]}}})["swift"]


def action(module: str, func: str, **arguments) -> dict:
    return {"type": "action", "name": func.replace("_", "-"),
            "provider": {"type": "python", "module": f"actions.{module}", "func": func,
                         "arguments": arguments}}


def experiment(*method: dict) -> dict:
    return {"title": "t", "method": list(method)}


def test_killing_the_only_osd_of_a_zone_says_ceph_cannot_re_replicate_it():
    notes = topology_notes(experiment(action("ceph", "kill_osd", osd_id=3)), ceph())

    assert notes == [
        "osd.3 is the only OSD in zone3: 2 zones are left for 3 copies, one per zone, so Ceph "
        "cannot re-replicate its PGs while it is down, and time to full redundancy while the "
        'fault persists can only time out, as can a "healed while dead" probe.']


def test_powering_off_a_whole_zone_names_every_osd_it_takes():
    notes = topology_notes(experiment(action("power", "power_off_zone", zone="zone1")), ceph())

    assert notes == [
        "osd.0 and osd.1, every OSD in zone1, are down: 2 zones are left for 3 copies, one per "
        "zone, so Ceph cannot re-replicate zone1's copies while they are down, and time to "
        "full redundancy while the fault persists can only time out, as can a \"healed while "
        'dead" probe.']


def test_a_node_that_is_its_zone_counts_as_the_zone():
    [note] = topology_notes(experiment(action("power", "power_off_node", node="node3")), ceph())

    assert note.startswith("osd.2 is the only OSD in zone2: ")


def test_without_zones_each_host_is_a_failure_domain():
    hosts = ceph({"node1": None, "node2": None, "node3": None})

    [note] = topology_notes(experiment(action("ceph", "kill_osd", osd_id=0)), hosts)

    assert note.startswith("osd.0 is the only OSD in host node1: 2 hosts are left for 3 "
                           "copies, one per host, so Ceph cannot re-replicate its PGs")


def test_a_lost_zone_is_rebuilt_elsewhere_when_zones_outnumber_the_copies():
    four_zones = ceph({"node1": "zone1", "node2": "zone2", "node3": "zone3", "node4": "zone4"})

    assert topology_notes(experiment(action("ceph", "kill_osd", osd_id=3)), four_zones) == []


@pytest.mark.parametrize("fault", [
    action("ceph", "kill_osd", osd_id=1),  # zone1's other OSD takes its copies
    action("disk", "fail_disk", node="node2"),
    action("ceph", "kill_osd", osd_id=-1),  # picked at random: nothing is known
    action("ceph", "kill_osd", osd_id=9),  # not in the inventory: preflight's to refuse
])
def test_nothing_is_said_when_the_topology_decides_nothing(fault):
    assert topology_notes(experiment(fault), ceph()) == []


def test_one_of_a_zones_two_osds_at_75_percent_fill_pushes_the_other_past_backfillfull():
    notes = topology_notes(experiment(action("fill", "fill_cluster", target=0.75),
                                      action("ceph", "kill_osd", osd_id=1)), ceph())

    assert notes == [
        "With osd.1 down at 75% fill, osd.0, zone1's other OSD, must hold zone1's whole copy: "
        "about 150% of its capacity, past Ceph's backfillfull ratio 0.90 (full 0.95), so "
        "backfill to it stops (backfill_toofull), the PGs stay degraded, and time to full "
        "redundancy while the fault persists can only time out."]


def test_a_fill_that_leaves_the_survivor_nearfull_says_health_warn_stays():
    [note] = topology_notes(experiment(action("fill", "fill_cluster", target=0.44),
                                       action("ceph", "kill_osd", osd_id=1)), ceph())

    assert "about 88% of its capacity, past Ceph's nearfull ratio 0.85, so HEALTH_WARN " \
           "(OSD_NEARFULL) stays once the copies are rebuilt" in note


def test_a_fill_the_survivor_can_take_says_nothing():
    notes = topology_notes(experiment(action("fill", "fill_cluster", target=0.4),
                                      action("ceph", "kill_osd", osd_id=1)), ceph())

    assert notes == []


def test_a_fill_with_its_default_target_counts_as_half_full():
    [note] = topology_notes(experiment(action("fill", "fill_cluster"),
                                       action("ceph", "kill_osd", osd_id=0)), ceph())

    assert note.startswith("With osd.0 down at 50% fill, osd.1, zone1's other OSD, must hold "
                           "zone1's whole copy: about 100% of its capacity")


def test_a_fill_of_a_fixed_count_of_objects_aims_at_no_usage_and_says_nothing():
    notes = topology_notes(experiment(action("fill", "fill_cluster", objects=8000,
                                             object_mib=0.015625),
                                      action("ceph", "kill_osd", osd_id=1)), ceph())

    assert notes == []


def test_swift_says_a_device_that_does_not_answer_is_not_rebuilt_elsewhere():
    notes = topology_notes(experiment(action("swift", "kill_server", server="object",
                                             node="node1")), swift())

    assert notes == [
        "Swift does not rebuild the partitions of node1/d1 (object ring) elsewhere while it is "
        "down (a device that does not answer is transient to it: only new writes go to "
        "handoffs), so time to full redundancy while the fault persists is normally n/a "
        "(compare the after-restore figure)."]


def test_swift_a_zone_off_names_each_device_once_for_every_ring():
    [note] = topology_notes(experiment(action("power", "power_off_zone", zone="zone1")),
                            swift())

    assert note.startswith("Swift does not rebuild the partitions of node1/d1 and node2/d2 "
                           "(every ring) elsewhere while they are down")


def test_swift_a_failed_disk_is_copied_to_handoffs_but_still_missing_from_dispersion():
    [note] = topology_notes(experiment(action("disk", "fail_disk", node="node1")), swift())

    assert note == (
        "node1/d1 (every ring) stays in Swift's rings while failed: it answers 507, so "
        "replicators copy its partitions to handoff devices, but the dispersion report still "
        "misses its primary copies, and time to full redundancy while the fault persists is "
        "normally n/a (compare the after-restore figure).")


def test_swift_says_nothing_about_the_proxy():
    fault = action("swift", "kill_server", server="proxy")

    assert topology_notes(experiment(fault), swift()) == []


def test_a_runs_note_comes_from_its_figures_else_from_its_event():
    finished = Run(figures={"topology_note": ["a"]},
                   events=[Event(kind="topology_note", ts=0, detail={"notes": ["b"]})])
    interrupted = Run(figures=None,
                      events=[Event(kind="topology_note", ts=0, detail={"notes": ["b"]})])

    assert (topology_note(finished), topology_note(interrupted), topology_note(Run())) \
        == (["a"], ["b"], [])


def test_the_report_prints_each_note_on_its_own_line():
    data = {"run_id": 1, "title": "t", "cluster": "lab-ceph", "cluster_kind": "ceph",
            "status": "completed", "workload": {}, "reasons": {}, "error": None,
            "topology_note": ["osd.3 is the only OSD in zone3: ..."]}
    data.update(dict.fromkeys(["baseline_ops", "baseline_mbps", "baseline_p50_ms",
                               "baseline_p99_ms", "errors", "errors_by_class", "errors_by_op",
                               "throughput_drop", "worst_second_drop", "time_to_detect_s",
                               "time_to_client_recovery_s", "time_to_full_redundancy_s",
                               "restore_at_s", "time_to_full_redundancy_after_restore_s",
                               "time_to_alert_s", "data_at_risk_s", "lost_objects",
                               "corrupt_objects"]))

    assert "\n  topology: osd.3 is the only OSD in zone3: ...\n" in format_report(data) + "\n"


def test_a_comparison_gives_each_note_once_with_the_runs_it_applies_to():
    entries = [{"run_id": i, "cluster_kind": "ceph", "api": "rados", "fault": "kill-osd",
                "workload": {}, "status": "completed", "topology_note": notes}
               for i, notes in ((1, ["zone3 note"]), (2, ["zone3 note"]), (3, []))]

    assert "run 1, run 2: zone3 note" in caveats(entries)
