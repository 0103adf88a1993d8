"""Scale lab-ceph out by one OSD and back in (actions.ceph_scale): bad input is one error
and changes nothing; an OSD added by a run that is then SIGKILLed is up and in at node1's
place in zone1, takes PGs and is started like the others; `faultline heal` drains, purges
and deletes it; HEALTH_OK with 4 OSDs again, and no acknowledged object lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalogue import CephObjects, killed_after, wait_for
from chaoslib.exceptions import ActivityFailed

from actions import ceph_scale
from clusters.access import services
from clusters.access.inventory import load_cluster
from clusters.ceph import osd_map
from clusters.ceph.admin import CephAdmin
from clusters.paths import default_inventory
from clusters.safety import fault_ledger
from lab import disks

pytestmark = pytest.mark.lab


def _osd_ids(cluster) -> list[int]:
    with CephAdmin.for_cluster(cluster) as admin:
        return sorted(o["osd"] for o in admin.command("osd dump")["osds"])


def _pgs_on(cluster, osd_id: int) -> int:
    with CephAdmin.for_cluster(cluster) as admin:
        return osd_map.pgs_on(admin, osd_id)


def _place(cluster, osd_id: int) -> tuple[str | None, str | None, bool, bool]:
    """(host, zone, up, in) of an OSD."""
    with CephAdmin.for_cluster(cluster) as admin:
        tree = admin.command("osd tree")["nodes"]
        osd = next(o for o in admin.command("osd dump")["osds"] if o["osd"] == osd_id)
    parent = {c: n for n in tree for c in n.get("children", [])}
    host = parent.get(osd_id)
    zone = parent.get(host["id"]) if host else None
    return (host and host["name"], zone and zone["name"], bool(osd["up"]), bool(osd["in"]))


def test_an_osd_added_by_a_killed_run_takes_pgs_and_heal_drains_and_purges_it(
        ceph_cluster, file_ledger, tmp_path, invoke):
    config = {"faultline_cluster": ceph_cluster.name}
    objects = CephObjects(ceph_cluster)
    try:
        objects.write(20)
        # bad input: one error each, nothing made
        for bad, says in (({"node": "node9"}, "has no node 'node9'"),
                          ({"size_gib": 0}, "size_gib must be a number of GiB from 1"),
                          ({"size_gib": 100000}, "from 1 to 1024")):
            with pytest.raises(ActivityFailed, match=says):
                ceph_scale.add_osd(**bad, configuration=config)
        with pytest.raises(ActivityFailed, match="osd.0 was not added by a scale action"):
            ceph_scale.remove_osd(osd_id=0, configuration=config)
        assert _osd_ids(ceph_cluster) == [0, 1, 2, 3]
        assert fault_ledger.outstanding(ceph_cluster.name) == []

        # a run adds an OSD on node1, and is killed (SIGKILL) once it is up and in
        killed_after("from actions import ceph_scale; ceph_scale.add_osd(node='node1', "
                     f"size_gib=2, configuration={config!r})", tmp_path)
        assert [e.key for e in fault_ledger.outstanding(ceph_cluster.name)] == ["scale:osd.4"]
        assert _place(ceph_cluster, 4) == ("node1", "zone1", True, True)
        # the inventory knows it, started like the others: its pid file names it
        grown = load_cluster(default_inventory(), ceph_cluster.name)
        pid = services.pid_of(grown, grown.service("osd.4"))
        assert pid is not None
        # in node1's memory cgroup, as node1's other daemons
        assert f":memory:/faultline-lab/{grown.node('node1').netns}" in Path(
            f"/proc/{pid}/cgroup").read_text()
        disk = next(d for d in grown.disks if d.osd == 4)
        assert disks.is_mounted(disk.mount)
        # CRUSH gives it a share of zone1's copies: PGs move onto it, clients carry on
        wait_for("PGs on osd.4", lambda: _pgs_on(ceph_cluster, 4) > 0, 60)
        objects.write(20)

        healed = invoke("heal", "--cluster", ceph_cluster.name, "--inventory",
                        str(default_inventory()))
        assert healed.exit_code == 0, healed.output
        assert "restored: osd.4 added on a new 2 GiB disk of node1" in healed.output
        assert fault_ledger.outstanding(ceph_cluster.name) == []
        assert _osd_ids(ceph_cluster) == [0, 1, 2, 3]  # purged
        assert not Path(disk.device).exists() and not Path(disk.mount).exists()
        assert not disks.loop_devices(Path(disk.device))
        shrunk = load_cluster(default_inventory(), ceph_cluster.name)
        assert "osd.4" not in [s.name for s in shrunk.services]
        assert 4 not in [d.osd for d in shrunk.disks]
        # the drain moved its copies off before the stop: the purge moves nothing more, so no
        # object is degraded on the way to HEALTH_OK with the lab's four OSDs
        at_risk = []
        with CephAdmin.for_cluster(ceph_cluster) as admin:
            last, waited = admin.wait_until(
                lambda s: at_risk.append(s.at_risk) or (s.fully_redundant and s.num_osds == 4
                                                        and s.num_in_osds == s.num_up_osds == 4),
                timeout_s=120, hold_s=10, polls=5)
        assert waited is not None, last
        assert not any(at_risk), f"{at_risk.count(True)} of {len(at_risk)} polls at risk"
        assert len(objects.acked) == 40, objects.refused
        assert objects.lost() == []
    finally:
        if fault_ledger.outstanding(ceph_cluster.name):  # a failed test leaves nothing
            ceph_scale.remove_osd(configuration=config)
        objects.close()
