"""Scale a Ceph cluster out under load and back in, as Chaos Toolkit actions: add an OSD on
a new disk of an existing node (clusters/ceph/new_osd.py), and remove it with a proper drain
(clusters/ceph/osd_map.py).

The added OSD is written into the fault ledger (key `scale:osd.N`) before anything is
made, with what remove_osd needs to undo it as the entry's record, so `faultline heal`
removes an OSD left by a killed run; and into the inventory, so kill_osd, start_osd and the
guard see it. Only an OSD whose ledger entry is outstanding can be removed, and only where
the inventory's `scale.ceph_osd` templates put it (its record is checked against them):
scale never takes away an OSD it did not add, and remove_osd takes no record from its
caller.
"""

from __future__ import annotations

import uuid

from chaoslib.exceptions import ActivityFailed

from clusters.access.inventory import Cluster
from clusters.access.ssh import run_on_node
from clusters.ceph import new_osd, osd_map
from clusters.ceph.admin import CephAdmin
from clusters.exceptions import ClusterError, InvalidScale
from clusters.paths import default_inventory
from clusters.safety import fault_ledger

from .fault_spec import Fault, Scope
from .safety import (
    check_blast_radius,
    cluster_of,
    fail,
    fault_action,
    ledger_before,
    ledger_restored,
    refused_record,
)

__all__ = ["add_osd", "remove_osd"]

KEY = "scale:osd."
RESTORE = "actions.ceph_scale.remove_osd"
MAX_TIMEOUT_S = 3600


def _timeout(value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not 1 <= value <= MAX_TIMEOUT_S:
        raise InvalidScale(f"timeout_s must be a number of seconds from 1 to {MAX_TIMEOUT_S}, "
                           f"not {value!r}")
    return float(value)


def _osd_id(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < -1:
        raise InvalidScale(f"osd_id must be a whole number (-1: every OSD scale added), "
                           f"not {value!r}")
    return value


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run: the node exists, the size and the timeouts make sense."""
    if func not in ("add_osd", "remove_osd"):
        return
    try:
        if func == "add_osd":
            new_osd.check_node(cluster, arguments.get("node", "node1"))
            new_osd.check_size(arguments.get("size_gib", 2))
            _timeout(arguments.get("timeout_s", 180))
        else:
            _osd_id(arguments.get("osd_id", -1))
            _timeout(arguments.get("timeout_s", 600))
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def _inventory(configuration: dict | None) -> str:
    return (configuration or {}).get("faultline_inventory") or str(default_inventory())


@fault_action
def add_osd(node: str = "node1", size_gib: float = 2, timeout_s: float = 180,
            allow_unavailable: bool = False, configuration: dict = None) -> dict:
    """Add one OSD on a new disk of `node` (a sparse XFS image of `size_gib` GiB plus room
    for XFS, loop-mounted, as the inventory's `scale.ceph_osd` says), at the node's place in
    CRUSH (its zone, host=node), started like the cluster's other OSDs; wait until it is up
    and in (at most timeout_s). Data then moves onto it: wait for HEALTH_OK after. Takes
    nothing down (the guard's verdict is given). Returns the OSD and how long it took."""
    cluster = cluster_of(configuration)
    inventory = _inventory(configuration)
    try:
        new_osd.check_node(cluster, node)
        size = new_osd.check_size(size_gib)
        wait_s = _timeout(timeout_s)
        templates = new_osd.template(inventory, cluster.name)
        verdict = check_blast_radius(cluster, f"an OSD added on {node}", allow_unavailable)
        with CephAdmin.for_cluster(cluster) as admin:
            osd = new_osd.new_osd(cluster, templates, osd_map.next_osd_id(admin),
                                     str(uuid.uuid4()), node, size)
            target = cluster.node(node)
            # an image or mount already there, or too little room: refused, nothing made
            checked = run_on_node(target, new_osd.check_command(osd), timeout=60,
                                  check=False)
            if checked.exit_status != 0:
                raise InvalidScale(f"cannot add {osd.name} on {node}: "
                                   f"{checked.stderr.strip() or checked.stdout.strip()}")
            ledger_before(cluster, KEY + str(osd.osd_id), osd.says(), RESTORE,
                          {"osd_id": osd.osd_id}, {"added": osd.as_dict()})
            run_on_node(target, new_osd.make_disk_command(osd), timeout=120)
            osd_map.create(admin, osd.osd_id, osd.uuid)
            run_on_node(target, new_osd.mkfs_command(osd), timeout=300)
            new_osd.record_in_inventory(inventory, cluster.name, osd)
            run_on_node(target, new_osd.start_command(osd), timeout=120)
            up_s = osd_map.wait_up_in(admin, osd.osd_id, node, wait_s)
    except ClusterError as exc:
        raise fail("add_osd", exc) from None
    return {"osd": osd.name, "osd_id": osd.osd_id, "node": node, "zone": osd.zone,
            "size_gib": size, "image": osd.image, "mount": osd.mount,
            "up_and_in_after_s": up_s, "guard": verdict}


def _added(cluster: Cluster, osd_id: int, inventory: str) -> list[dict]:
    """What scale added that is still outstanding, as the ledger recorded it: that OSD, or
    (-1) every one; each record checked against the inventory's templates before any is
    touched (a record that points elsewhere is refused)."""
    entries = [e for e in fault_ledger.outstanding(cluster.name) if e.key.startswith(KEY)]
    if osd_id != -1:
        entries = [e for e in entries if e.key == f"{KEY}{osd_id}"]
        if not entries:
            added = ", ".join(e.key.removeprefix("scale:") for e in fault_ledger.outstanding(
                cluster.name) if e.key.startswith(KEY)) or "none"
            raise InvalidScale(f"osd.{osd_id} was not added by a scale action (outstanding in "
                               f"the fault ledger: {added}): remove_osd removes only those")
    if not entries:
        return []
    templates = new_osd.template(inventory, cluster.name)
    found: dict[int, dict] = {}  # the newest record of each OSD
    for entry in entries:
        number = entry.key.removeprefix(KEY)
        if not number.isdigit():
            raise refused_record("remove_osd", entry.key, "is not an OSD's key")
        try:
            found[int(number)] = new_osd.checked_added(cluster, templates, int(number),
                                                          entry.record.get("added"))
        except InvalidScale as exc:
            raise refused_record("remove_osd", entry.key,
                                 str(exc).removeprefix(f"the record of osd.{number} ")) from None
    return list(found.values())


def remove_osd(osd_id: int = -1, timeout_s: float = 600, allow_unavailable: bool = False,
               configuration: dict = None) -> dict:
    """Remove an OSD that add_osd added (-1: every one still there) with a proper drain:
    mark it out, wait until every PG is active+clean with nothing misplaced or degraded (at
    most timeout_s; on timeout it stays out and running, and a second remove_osd goes on),
    stop it, `osd purge` it, unmount and delete its disk, and take it out of the inventory.
    Idempotent: what is already gone is skipped. The guard's verdict on taking it down is
    given first. What is removed (its node, image, mount, pid file) is the fault ledger's
    record, checked against the inventory's scale.ceph_osd templates; an OSD the ledger does
    not hold is refused. Returns each OSD removed and how long its drain took."""
    cluster = cluster_of(configuration)
    try:
        wait_s = _timeout(timeout_s)
        targets = _added(cluster, _osd_id(osd_id), _inventory(configuration))
        removed = [_remove(cluster, osd, wait_s, allow_unavailable, configuration)
                   for osd in targets]
    except ClusterError as exc:
        raise fail("remove_osd", exc) from None
    if not removed:
        return {"removed": [], "osds": [],
                "note": "no OSD added by scale is outstanding in the fault ledger: nothing "
                        "was removed"}
    return {"removed": removed, "osds": [r["osd"] for r in removed]}


def _remove(cluster: Cluster, osd: dict, wait_s: float, allow_unavailable: bool,
            configuration: dict | None) -> dict:
    osd_id = osd["osd_id"]
    with CephAdmin.for_cluster(cluster) as admin:
        present = osd_id in osd_map.osd_ids(admin)
        verdict = check_blast_radius(cluster, f"osd.{osd_id} drained and removed",
                                     allow_unavailable, osds={osd_id}) if present else None
        drained_s = osd_map.drain(admin, osd_id, wait_s) if present else None
        out = run_on_node(cluster.node(osd["node"]), new_osd.remove_command(osd),
                          timeout=120).stdout
        if present:
            admin.command("osd down", ids=[str(osd_id)])  # purge refuses an OSD still up
        purged = osd_map.purge(admin, osd_id)
    new_osd.forget_in_inventory(_inventory(configuration), cluster.name, osd_id)
    ledger_restored(cluster, KEY + str(osd_id))
    return {"osd": f"osd.{osd_id}", "node": osd["node"], "drained_after_s": drained_s,
            "purged": purged, "on_node": out.strip().splitlines(), "guard": verdict}


def _add_osd_scope(cluster: Cluster, a: dict) -> Scope:
    new_osd.check_node(cluster, a["node"])
    size = new_osd.check_size(a["size_gib"])
    return Scope(f"scales out: adds an OSD on a new {size:g} GiB disk of {a['node']} (takes "
                 "nothing down; data moves onto it)")


FAULTS = {"add_osd": Fault("remove_osd", _add_osd_scope, notes={"ceph": (
    "Adding an OSD is no fault: Ceph reports nothing down, so there is no detection and no "
    "redundancy figure; the scale figures are the data movement and the clients' "
    "disruption. CRUSH maps a share of the PGs onto it and their data is copied there; Ceph "
    "counts the PGs it recovers rather than backfills as undersized and their objects as "
    "degraded until the new copy is in, and 'data at risk' counts those seconds (the drain "
    "of the removal does the same, for fewer PGs).")}, takes_down=False)}
