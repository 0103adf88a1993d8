"""What an experiment's faults take down, in words, from the experiment and the inventory
alone (service.experiments.fault_scope): the trigger form's confirmation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clusters.access.inventory import parse_inventory
from service.experiments.fault_scope import fault_scopes

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
ZONES = {"node1": "zone1", "node2": "zone1", "node3": "zone2", "node4": "zone3"}
CLUSTERS = parse_inventory({"clusters": {
    "ceph": {"kind": "ceph", "client": {"conf": "/etc/ceph/ceph.conf"},
             "nodes": [{"name": n, "address": f"192.0.2.{i}", "zone": z, "netns": f"ns{i}"}
                       for i, (n, z) in enumerate(ZONES.items(), 1)],
             "disks": [{"node": f"node{i + 1}", "device": f"/dev/sd{i}",
                        "mount": f"/osd/ceph-{i}", "osd": i} for i in range(4)],
             "services": [{"name": f"osd.{i}", "kind": "osd", "node": f"node{i + 1}",
                           "unit": f"ceph-osd@{i}"} for i in range(4)]},
    "swift": {"kind": "swift", "client": {"swift_dir": "/etc/swift"},
              "nodes": [{"name": n, "address": f"192.0.2.{10 + i}", "zone": z}
                        for i, (n, z) in enumerate(ZONES.items(), 1)],
              "disks": [{"node": f"node{i}", "device": f"/dev/sd{i}", "mount": f"/srv/d{i}",
                         "swift_device": f"d{i}"} for i in range(1, 5)],
              "services": [{"name": f"object-server.node{i}", "kind": "object-server",
                            "node": f"node{i}", "unit": f"swift-object@{i}"}
                           for i in range(1, 5)]},
}})


def _scopes(name: str, cluster: str, **arguments):
    document = json.loads((EXPERIMENTS / f"{name}.json").read_text())
    document["method"][0]["provider"]["arguments"].update(arguments)
    return fault_scopes(document, CLUSTERS[cluster])


@pytest.mark.parametrize(("experiment", "cluster", "says", "takes_down"), [
    ("ceph-kill-osd", "ceph", "kills osd.1 on node2 (SIGKILL)", ("osd.1",)),
    ("ceph-hang-osd", "ceph",
     "hangs osd.1 on node2 (SIGSTOP: alive, answering nothing, until resumed)", ("osd.1",)),
    ("swift-hang-object-server", "swift", "hangs object-server.node1 on node1 (SIGSTOP: "
                                          "alive, answering nothing, until resumed)",
     ("object:node1/d1",)),
    ("ceph-fail-disk", "ceph",
     "fails disk /osd/ceph-1 (osd.1) on node2: XFS shut down, then unmounted", ("osd.1",)),
    ("ceph-power-off-zone", "ceph", "powers off zone zone1: node1, node2 (lab link down)",
     ("osd.0", "osd.1")),
    ("ceph-partition-node", "ceph", "cuts node node2 off the network (all its traffic but "
                                    "SSH dropped; its daemons keep running)", ("osd.1",)),
    ("ceph-lossy-link", "ceph", "makes the link lossy: 20% packet loss on node2 (nftables in "
                                "prerouting, or netem where the node has it; daemons keep "
                                "running)", ("osd.1",)),
    ("ceph-throttle-osd-disk", "ceph", "slows a disk: osd.1's I/O to its disk /osd/ceph-1 "
                                       "throttled to read 20 IO/s, write 5 IO/s (cgroup v1 "
                                       "blkio; the daemon stays up)", ("osd.1",)),
    ("swift-throttle-object-disk", "swift", "slows a disk: object-server.node1's I/O to its "
                                            "disk /srv/d1 throttled to read 20 IO/s, write 5 "
                                            "IO/s (cgroup v1 blkio; the daemon stays up)",
     ("object:node1/d1",)),
    ("ceph-cpu-hog", "ceph", "starves a node of CPU: 2 stress-ng CPU worker(s) at 100% on "
                             "node2, at most 1 core(s), for at most 90 s (its daemons keep "
                             "running)", ()),
    ("swift-kill-object-server", "swift", "kills object-server.node1 on node1 (SIGKILL)",
     ("object:node1/d1",)),
    ("swift-power-off-node", "swift",
     "powers off node node1 (nftables over SSH): every daemon of it dies",
     ("account:node1/d1", "container:node1/d1", "object:node1/d1")),
])
def test_a_fault_says_what_it_does_and_what_it_takes_down(experiment, cluster, says,
                                                          takes_down):
    [scope] = _scopes(experiment, cluster)

    assert (scope.says, scope.takes_down, scope.problem) == (says, takes_down, None)


def test_a_hang_is_restored_by_its_resume():
    [scope] = _scopes("ceph-hang-osd", "ceph")

    assert scope.restore == "resume-osd: actions.ceph.resume_osd(osd_id=1)"
    assert scope.held_s == 30


def test_a_lossy_link_is_restored_by_restore_link_and_between_zones_takes_nothing_down():
    [node] = _scopes("swift-lossy-link", "swift")
    [zones] = _scopes("swift-lossy-link", "swift", node="", zones=["zone1", "zone2"])
    [bad] = _scopes("swift-lossy-link", "swift", loss_percent=150)

    assert node.restore == "restore-link: actions.network.restore_link()" and node.held_s == 45
    assert zones.says.startswith("makes the link lossy: 20% packet loss and a 0.25 Mbit/s cap "
                                 "between zone1 and zone2") and zones.takes_down == ()
    assert bad.problem == "loss_percent must be from 1 to 30, not 150"


def test_a_fill_then_a_kill_are_two_faults_and_the_fill_is_removed_by_a_rollback():
    fill, kill = _scopes("ceph-fill-50", "ceph")

    assert fill.says == ("fills the cluster to 50% raw usage with 4 MiB objects in the pool's "
                         "namespace faultline-fill")
    assert fill.takes_down == () and fill.restore == "remove-fill: actions.fill.remove_fill()"
    assert kill.restore == "start-osd: actions.ceph.start_osd(osd_id=1)"


def test_the_pause_after_a_fault_is_how_long_it_is_held_at_least():
    [scope] = _scopes("swift-power-off-zone", "swift")

    assert scope.held_s == 30
    assert scope.restore == "power-on-zone: actions.power.power_on_zone(zone='zone1')"


def test_a_random_osd_is_named_as_such():
    [scope] = _scopes("ceph-kill-osd", "ceph", osd_id=-1)

    assert (scope.says, scope.takes_down) == ("kills one running OSD picked at random "
                                              "(SIGKILL)", ())


def test_allow_unavailable_is_shown_as_an_override():
    [scope] = _scopes("ceph-kill-osd", "ceph", allow_unavailable=True)

    assert scope.override


@pytest.mark.parametrize(("experiment", "arguments", "problem"), [
    ("ceph-power-off-zone", {"zone": "zone9"},
     "cluster 'ceph' has no zone 'zone9' (zones: zone1, zone2, zone3)"),
    ("ceph-kill-osd", {"osd_id": 7}, "cluster 'ceph' has no service 'osd.7'"),
    ("ceph-kill-osd", {"osd_id": "one"}, "osd_id must be a whole number (-1: any), not 'one'"),
])
def test_what_the_inventory_lacks_is_a_problem_not_an_error(experiment, arguments, problem):
    [scope] = _scopes(experiment, "ceph", **arguments)

    assert scope.problem.startswith(problem) and scope.takes_down == ()


def test_a_corruption_names_the_copy_it_rewrites_and_is_restored_by_restore_corruption():
    [ceph] = _scopes("ceph-corrupt-replica", "ceph")
    [osd2] = _scopes("ceph-corrupt-replica", "ceph", osd_id=2)
    [swift] = _scopes("swift-corrupt-replica", "swift", node="node3")
    [bad] = _scopes("ceph-corrupt-replica", "ceph", osd_id=9)

    # the watch (detect-and-repair) is neither a fault nor its restore: one scope each
    assert ceph.says == ("corrupts one non-primary copy of a canary object written for it: "
                         "16 bytes flipped with ceph-objectstore-tool while that OSD is "
                         "stopped, then started again")
    assert ceph.restore == "restore-corruption: actions.corrupt.restore_corruption()"
    assert osd2.takes_down == ("osd.2",) and ceph.takes_down == ()
    assert swift.says == ("corrupts the copy on node3 of a canary object written for it: 16 "
                          "bytes flipped in its .data file, behind Swift's back")
    assert swift.takes_down == ()
    assert bad.problem == "cluster 'ceph' has no service 'osd.9' (known: osd.0, osd.1, osd.2, " \
                          "osd.3)"
