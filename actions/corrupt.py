"""Silent corruption of one replica, the watch for its detection and repair, and its restore,
as Chaos Toolkit actions.

corrupt_replica writes a canary object through the cluster's client API (or takes a named
object), finds where one replica of it lives (Ceph: `osd map`, one OSD of the acting set;
Swift: the object ring's primaries, the .data file on one node's device) and flips 16 bytes
of that one replica behind the system's back (clusters/faults/replica_ceph.py,
clusters/faults/replica_swift.py). The guard (clusters/faults/corruption.py) refuses a
corruption a repair could not undo: never two copies of one object, never on a pool or ring
of fewer than three.

detect_and_repair then reads the object back through the client API over and over,
counting reads whose bytes differ from what was written, while the system finds the bad
copy and mends it: `triggered` (Ceph: `pg deep-scrub`, then `pg repair` once the PG is
inconsistent; Swift: the object auditor run once on that node, replication puts the copy
back) or `scheduled` (nothing is asked; it waits up to timeout_s). Times are seconds from
its start, right after the corruption (t_fault).

restore_corruption repairs what is not repaired yet and deletes the canary; it is in the
fault ledger before anything is written, so `faultline heal` runs it after a killed run.
What it undoes is the ledger entry's record (the replica, its mount and object directory,
the good bytes), checked against the inventory (clusters.faults.corruption.confined); its
arguments only pick which outstanding corruption.
"""

from __future__ import annotations

import time
from types import ModuleType

from chaoslib.exceptions import ActivityFailed

from clusters.access.inventory import Cluster
from clusters.exceptions import ClusterError, InvalidCorruption
from clusters.faults import replica_ceph, replica_swift
from clusters.faults.corruption import (
    Corruption,
    checked_mode,
    checked_timeout,
    confined,
    judge,
    md5_of,
)
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

__all__ = ["corrupt_replica", "detect_and_repair", "restore_corruption"]

RESTORE = "actions.corrupt.restore_corruption"
POLL_S = 1.0  # how often the watch asks the cluster (reads go at read_every_s)


def _side(cluster: Cluster) -> ModuleType:
    return replica_ceph if cluster.kind == "ceph" else replica_swift


def _whole(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InvalidCorruption(f"{name} must be a whole number from {low}, not {value!r}")
    return value


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run, from the inventory alone: the replica named is in it, the mode and
    bounds make sense."""
    try:
        if func == "corrupt_replica":
            osd_id = arguments.get("osd_id", -1)
            if cluster.kind == "ceph" and _whole("osd_id", osd_id, -1) >= 0:
                cluster.service(f"osd.{osd_id}")
            if cluster.kind == "swift" and arguments.get("node"):
                cluster.node(str(arguments["node"]))
            if not isinstance(arguments.get("object_name", ""), str):
                raise InvalidCorruption("object_name must be an object's name (\"\": a canary), "
                                        f"not {arguments['object_name']!r}")
        elif func == "detect_and_repair":
            checked_mode(arguments.get("mode", "triggered"))
            checked_timeout(arguments.get("timeout_s", 300))
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def check_live(func: str, arguments: dict, cluster: Cluster) -> None:
    """As a run starts, asking the cluster (read-only): a named object exists."""
    if func == "corrupt_replica" and arguments.get("object_name"):
        try:
            _side(cluster).check_exists(cluster, str(arguments["object_name"]))
        except ClusterError as exc:
            raise ActivityFailed(str(exc)) from None


def _outstanding(cluster: Cluster, what: str) -> list[Corruption]:
    """The outstanding corruptions of the cluster, oldest first, as the ledger recorded
    them; a record that points outside what a corruption touches is refused."""
    found = []
    for entry in fault_ledger.outstanding(cluster.name):
        if entry.key.startswith("corrupt:"):
            try:
                corruption = confined(cluster, entry.record.get("corruption"))
            except InvalidCorruption as exc:
                raise refused_record(what, entry.key, str(exc)) from None
            if corruption.key != entry.key:
                raise refused_record(what, entry.key, f"is about {corruption.key}")
            found.append(corruption)
    return found


@fault_action
def corrupt_replica(osd_id: int = -1, node: str = "", object_name: str = "",
                    configuration: dict = None) -> dict:
    """Flip 16 bytes of one replica of one object, on disk, behind the system's back.

    The object: a canary written now through the client API (16 KiB, content derived from its
    name), or `object_name` (Ceph: an object of the inventory's pool; Swift:
    "container/object"), which must exist. The replica: Ceph: `osd_id`, or (-1) a copy of the
    acting set that is not the primary; Swift: the copy on `node`, or ("") the ring's last
    primary. Ceph's OSD is stopped for the flip (ceph-objectstore-tool set-bytes, its noout
    flag set meanwhile) and started again; the action returns once its PG is active+clean.
    Refused when a repair could not tell the good content: a pool or ring of fewer than three
    copies, or a second corrupted copy of one object. Returns what was corrupted and where."""
    cluster = cluster_of(configuration)
    side = _side(cluster)
    try:
        if cluster.kind == "ceph":
            corruption, content, intact = side.plan(cluster, osd_id=_whole("osd_id", osd_id, -1),
                                                    obj=object_name)
        else:
            corruption, content, intact = side.plan(cluster, node=node, obj=object_name)
        already = sum(1 for c in _outstanding(cluster, "corrupt_replica")
                      if c.object == corruption.object)
        where = f"pool {corruption.pool}" if corruption.pool else "the object ring"
        what = f"corrupt {corruption.object} on {corruption.replica}"
        verdict = judge(what, corruption.copies, intact, already, where)
        stop = (check_blast_radius(cluster, f"stop {corruption.replica} to corrupt its copy",
                                   False, osds={corruption.osd})
                if cluster.kind == "ceph" else None)
    except ClusterError as exc:
        raise fail("corrupt_replica", exc) from None
    ledger_before(cluster, corruption.key, corruption.says(), RESTORE,
                  {"object_name": corruption.object, "replica": corruption.replica},
                  {"corruption": corruption.as_arguments()})
    try:
        side.write_canary(cluster, corruption, content)
        detail = side.inject(cluster, corruption)
    except ClusterError as exc:
        raise fail("corrupt_replica", exc) from None
    out = {"corrupted": corruption.says(), "object": corruption.object,
           "canary": corruption.owned, "replica": corruption.replica, "node": corruption.node,
           "offset": corruption.offset, "bytes_flipped": 16, "size": corruption.size,
           "md5_good": corruption.md5, "md5_corrupted": corruption.bad_md5,
           "copies": corruption.copies, "holders": corruption.holders, "guard": verdict}
    if cluster.kind == "ceph":
        out.update(pgid=corruption.pgid, stop_guard=stop, **detail)
    else:
        out.update(file=detail)
    return out


class _Reads:
    """The object read back through the client API: reads, corrupt ones, and those whose
    response gave the corruption away (Swift: the ETag is not the body's MD5)."""

    def __init__(self, corruption: Corruption):
        self.corruption = corruption
        self.reads = self.corrupt = self.flagged = self.unreadable = 0
        self.first_corrupt_s: float | None = None

    def take(self, watcher, since: float) -> None:
        data, flagged = watcher.read()
        self.reads += 1
        if data is None:
            self.unreadable += 1
        elif len(data) != self.corruption.size or md5_of(data) != self.corruption.md5:
            self.corrupt += 1
            self.flagged += int(flagged)
            if self.first_corrupt_s is None:
                self.first_corrupt_s = round(time.monotonic() - since, 2)

    def as_dict(self) -> dict:
        return {"reads": self.reads, "corrupt_reads": self.corrupt,
                "corrupt_reads_flagged": self.flagged, "unreadable_reads": self.unreadable,
                "first_corrupt_read_s": self.first_corrupt_s}


def detect_and_repair(mode: str = "triggered", timeout_s: float = 300,
                      read_every_s: float = 0.5, configuration: dict = None) -> dict:
    """Watch the outstanding corruption until the system has found and mended it, reading
    the object through the client API every read_every_s and counting corrupt reads.

    mode "triggered": Ceph: `ceph pg deep-scrub <pg>`, then `ceph pg repair <pg>` once the PG
    is inconsistent, and a deep scrub after the repair to confirm; Swift: the object auditor
    run once on the replica's node (replication puts the copy back by itself). mode
    "scheduled": nothing is asked, it waits for the system's own schedule. Gives up after
    timeout_s (the figures it could not measure are null with the reason). Returns seconds
    from its start to detection and to repair, who did each, and the reads."""
    cluster = cluster_of(configuration)
    try:
        checked_mode(mode)
        timeout_s = checked_timeout(timeout_s)
        outstanding = _outstanding(cluster, "detect_and_repair")
        if not outstanding:
            raise InvalidCorruption(f"{cluster.name} has no corruption outstanding: "
                                    "corrupt_replica first")
        corruption = outstanding[-1]
        watcher = (replica_ceph.CephReplica if cluster.kind == "ceph"
                   else replica_swift.SwiftReplica)(cluster, corruption)
    except ClusterError as exc:
        raise fail("detect_and_repair", exc) from None
    try:
        return _watch(watcher, corruption, mode, timeout_s, max(0.05, float(read_every_s)))
    except ClusterError as exc:
        raise fail("detect_and_repair", exc) from None
    finally:
        watcher.close()


def _watch(watcher, corruption: Corruption, mode: str, timeout_s: float,
           read_every_s: float) -> dict:
    started = time.monotonic()
    reads = _Reads(corruption)
    asked: list[str] = []
    detected_s = repaired_s = None
    detected_by = None
    if mode == "triggered":
        asked.append(watcher.start_detection())
    next_read = next_poll = started
    while time.monotonic() - started < timeout_s:
        if time.monotonic() >= next_read:
            reads.take(watcher, started)
            next_read = time.monotonic() + read_every_s
        if time.monotonic() >= next_poll:
            next_poll = time.monotonic() + POLL_S
            if detected_by is None:
                detected_by = watcher.detected()
                if detected_by is not None:
                    detected_s = round(time.monotonic() - started, 1)
                    if mode == "triggered" and (repair := watcher.start_repair()):
                        asked.append(repair)
            elif watcher.repaired():
                repaired_s = round(time.monotonic() - started, 1)
                break
        time.sleep(max(0.01, min(next_read, next_poll) - time.monotonic()))
    if detected_by is not None:
        detected_by = watcher.detected_by(detected_by)
    if getattr(watcher, "reasked", 0):
        asked.append(f"asked again {watcher.reasked} time(s): not begun after "
                     f"{replica_ceph.REASK_S:.0f} s")
    left = max(30.0, timeout_s - (time.monotonic() - started))
    confirmed = watcher.confirm(left) if repaired_s is not None else None
    reads.take(watcher, started)  # once more, after the repair (or the give-up)
    reasons = {}
    if detected_s is None:
        reasons["detected_after_s"] = (
            f"{watcher.detector} did not report it within {timeout_s:.0f} s"
            + (" (left to the schedule)" if mode == "scheduled" else ""))
    if repaired_s is None:
        reasons["repaired_after_s"] = (
            "not detected, so not repaired" if detected_s is None else
            f"not repaired within {timeout_s:.0f} s" + (
                " (nothing asked for a repair: left to the schedule)"
                if mode == "scheduled" else ""))
    return {"mode": mode, "object": corruption.object, "replica": corruption.replica,
            "asked": asked, "detected_after_s": detected_s, "detected_by": detected_by,
            "repaired_after_s": repaired_s,
            "repaired_by": watcher.repaired_by() if repaired_s is not None else None,
            "confirmed": confirmed, "timeout_s": timeout_s, "reasons": reasons,
            **reads.as_dict()}


def restore_corruption(object_name: str = "", replica: str = "",
                       configuration: dict = None) -> dict:
    """Undo the outstanding corruptions of the cluster (idempotent) as the fault ledger
    recorded them: every one, or those of `object_name` and/or on `replica` ("osd.2",
    "node3/d3"). Repairs the replica if it is not repaired yet (Ceph: the OSD running, its
    noout flag off, `pg repair` of an inconsistent PG; Swift: the good bytes written back,
    quarantined copies removed), deletes the canary, and strikes it off. With none
    outstanding it does nothing and says so."""
    cluster = cluster_of(configuration)
    targets = [c for c in _outstanding(cluster, "restore_corruption")
               if object_name in ("", c.object) and replica in ("", c.replica)]
    if not targets:
        return {"restored": [], "note": "no such corruption is outstanding in the fault "
                                        "ledger: nothing was done"}
    restored = []
    for target in targets:
        try:
            restored.append(_side(cluster).restore(cluster, target))
        except ClusterError as exc:
            raise fail("restore_corruption", exc) from None
        ledger_restored(cluster, target.key)
    return {"restored": restored}


def _corrupt_scope(cluster: Cluster, a: dict) -> Scope:
    """A Ceph replica's OSD is stopped while its copy is rewritten; a Swift replica is
    rewritten with its server running."""
    check_arguments("corrupt_replica", a, cluster)
    what = a["object_name"] or "a canary object written for it"
    if cluster.kind == "ceph":
        osd_id = a["osd_id"]
        which = f"osd.{osd_id}'s copy" if osd_id >= 0 else "one non-primary copy"
        return Scope(f"corrupts {which} of {what}: 16 bytes flipped with ceph-objectstore-tool "
                     "while that OSD is stopped, then started again",
                     osds=frozenset({osd_id} if osd_id >= 0 else ()))
    node = a["node"]
    which = f"the copy on {node}" if node else "the copy on the ring's last primary node"
    return Scope(f"corrupts {which} of {what}: 16 bytes flipped in its .data file, behind "
                 "Swift's back")


FAULTS = {"corrupt_replica": Fault("restore_corruption", _corrupt_scope, notes={
    "ceph": (
        "Ceph reads an object from its PG's primary only, and BlueStore's checksums were "
        "rewritten with the flipped bytes (ceph-objectstore-tool writes through BlueStore): "
        "only a deep scrub, comparing the copies, finds such a corruption (every "
        "osd_deep_scrub_interval, a week by default, unless asked), and only `pg repair` "
        "mends it (osd_scrub_auto_repair is off by default)."),
    "swift": (
        "Swift's object auditor reads every object and quarantines a copy whose MD5 is not "
        "its ETag; the object server does the same after a GET that read the copy whole, "
        "but only after sending it, so a client that does not check the ETag may receive "
        "corrupt bytes. Replication then puts a good copy back.")})}
# watches a fault rather than injecting or undoing one
WATCHES = ("detect_and_repair",)
