"""Ceph faults and their restores, as Chaos Toolkit actions.

Daemons are signalled by PID on the node that runs them (over SSH), as the
inventory describes; nothing is matched by process name.

kill_osd and kill_daemon take an `intent` (clusters/faults/supervision.py): "down" (the default:
stopped and kept stopped until the restore, even under systemd or cephadm) or "crash"
(SIGKILL, and its supervisor may start it again; the restore reports when it came back).
Their restores, start_osd and start_daemon, undo what the fault ledger says was done (and
only that: they take which daemon, never what to start) and report any daemon that came
back while it was meant to stay down (`deviations`).
"""

from __future__ import annotations

import random

from chaoslib.exceptions import ActivityFailed

from clusters.access import services
from clusters.access.config import cluster_from_configuration
from clusters.access.inventory import Cluster, Service
from clusters.exceptions import ClusterError
from clusters.faults import supervision

from .fault_spec import SIGSTOP, Fault, Scope, where, whole_number
from .safety import (
    check_blast_radius,
    check_intent,
    fault_action,
    inject_process_fault,
    ledger_before,
    ledger_restored,
    process_record,
    restore_report,
    undo_process_fault,
)

__all__ = ["kill_osd", "start_osd", "hang_osd", "resume_osd", "kill_daemon", "start_daemon"]

# daemons other than OSDs that kill_daemon takes (OSDs: kill_osd, with the guard)
DAEMON_KINDS = ("mon", "mgr", "rgw")


def _osd(cluster: Cluster, osd_id: int) -> Service:
    try:
        return cluster.service(f"osd.{osd_id}")
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def _daemon(cluster: Cluster, daemon: str) -> Service:
    try:
        service = cluster.service(daemon)
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None
    if service.kind not in DAEMON_KINDS:
        raise ActivityFailed(f"kill_daemon takes a {', '.join(DAEMON_KINDS)} daemon, not "
                             f"{daemon!r} (use kill_osd for an OSD)")
    return service


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run: a named OSD or daemon is in the inventory."""
    if func in ("kill_daemon", "start_daemon"):
        _daemon(cluster, str(arguments.get("daemon", "")))
        if func == "kill_daemon":
            check_intent(arguments.get("intent", supervision.DEFAULT_INTENT))
        return
    if func not in ("kill_osd", "start_osd", "hang_osd", "resume_osd"):
        return
    if func == "kill_osd":
        check_intent(arguments.get("intent", supervision.DEFAULT_INTENT))
    osd_id = arguments.get("osd_id", -1)
    if isinstance(osd_id, bool) or not isinstance(osd_id, int):
        raise ActivityFailed(f"osd_id must be a whole number (-1: any), not {osd_id!r}")
    if osd_id >= 0:
        _osd(cluster, osd_id)


@fault_action
def kill_osd(osd_id: int = -1, allow_unavailable: bool = False, intent: str = "down",
             configuration: dict = None) -> dict:
    """Kill one OSD daemon with SIGKILL: the named one, or a random running one when osd_id
    is -1. intent "down" keeps it stopped until start_osd (a systemd unit is masked until
    then); "crash" lets its supervisor restart it. Refused if it would leave data
    unavailable or with one copy, unless allow_unavailable. Returns the OSD id, its node,
    the PID killed and the intent."""
    cluster = cluster_from_configuration(configuration)
    try:
        if osd_id < 0:
            running = [s for s in cluster.services_of_kind("osd")
                       if services.pid_of(cluster, s) is not None]
            if not running:
                raise ActivityFailed(f"no OSD of {cluster.name} is running")
            service = random.choice(running)
        else:
            service = _osd(cluster, osd_id)
        killed_id = int(service.name.split(".")[1])
        verdict = check_blast_radius(cluster, f"kill {service.name}", allow_unavailable,
                                     osds={killed_id})
        done = inject_process_fault(cluster, service, intent, "actions.ceph.start_osd",
                       {"osd_id": killed_id})
    except (ClusterError, ValueError) as exc:
        raise ActivityFailed(f"kill_osd: {exc}") from None
    return {"osd_id": killed_id, "node": service.node, "signal": "KILL", **done,
            "guard": verdict}


def start_osd(osd_id: int = -1, configuration: dict = None) -> dict:
    """Start an OSD daemon again (the restore of kill_osd): the named one, or every OSD
    when osd_id is -1, undoing what kill_osd did as the fault ledger recorded it (a masked
    unit is unmasked; the unit is always the inventory's). Returns the OSDs it started, each
    one's outcome (a crashed one: when its supervisor brought it back, how often) and the
    deviations (a daemon meant to stay down that came back)."""
    cluster = cluster_from_configuration(configuration)
    targets = ([_osd(cluster, osd_id)] if osd_id >= 0 else cluster.services_of_kind("osd"))
    try:
        # every record checked before any daemon is touched
        records = [process_record(cluster, service, "start_osd") for service in targets]
        return restore_report([undo_process_fault(cluster, service, details)
                               for service, details in zip(targets, records, strict=True)])
    except ClusterError as exc:
        raise ActivityFailed(f"start_osd: {exc}") from None


@fault_action
def hang_osd(osd_id: int = 1, allow_unavailable: bool = False,
             configuration: dict = None) -> dict:
    """Hang one OSD with SIGSTOP until resume_osd: the gray failure, a daemon that neither
    dies nor answers. Its peers stop getting heartbeats and report it; the monitors mark it
    down after the heartbeat grace (osd_heartbeat_grace), and clients whose PGs it leads
    wait until then. Guarded as a kill is (its copies are unreachable either way). Returns
    the OSD id, its node and the PID stopped."""
    cluster = cluster_from_configuration(configuration)
    service = _osd(cluster, osd_id)
    try:
        verdict = check_blast_radius(cluster, f"hang {service.name}", allow_unavailable,
                                     osds={osd_id})
        ledger_before(cluster, f"daemon:{service.name}",
                      f"{service.name} hung (SIGSTOP) on {service.node}",
                      "actions.ceph.resume_osd", {"osd_id": osd_id})
        pid = services.suspend(cluster, service)
    except ClusterError as exc:
        raise ActivityFailed(f"hang_osd: {exc}") from None
    return {"osd_id": osd_id, "node": service.node, "pid": pid, "signal": "STOP",
            "guard": verdict}


def resume_osd(osd_id: int = 1, configuration: dict = None) -> dict:
    """SIGCONT a hung OSD (the restore of hang_osd). It finds itself marked down ("wrongly
    marked me down") and boots back into the map. Returns whether it was running."""
    cluster = cluster_from_configuration(configuration)
    service = _osd(cluster, osd_id)
    try:
        pid = services.resume(cluster, service)
    except ClusterError as exc:
        raise ActivityFailed(f"resume_osd: {exc}") from None
    ledger_restored(cluster, f"daemon:{service.name}")
    return {"osd_id": osd_id, "resumed": pid is not None, "pid": pid}


@fault_action
def kill_daemon(daemon: str = "rgw.lab", allow_unavailable: bool = False,
                intent: str = "down", configuration: dict = None) -> dict:
    """Kill one mon, mgr or RGW daemon with SIGKILL (as the inventory names it, e.g.
    "mon.a"), with the intent "down" (kept stopped until start_daemon) or "crash" (its
    supervisor may restart it). Killing a monitor is refused when the others would not
    keep a quorum, unless allow_unavailable."""
    cluster = cluster_from_configuration(configuration)
    service = _daemon(cluster, daemon)
    try:
        if service.kind == "mon":
            mons = cluster.services_of_kind("mon")
            running = [m for m in mons if services.pid_of(cluster, m) is not None]
            left = len([m for m in running if m.name != service.name])
            if left <= len(mons) // 2 and not allow_unavailable:
                raise ActivityFailed(
                    f"refused: killing {service.name} leaves {left} of {len(mons)} monitors, "
                    f"no quorum (a majority, {len(mons) // 2 + 1}, is needed): the whole "
                    "cluster would stop serving (set allow_unavailable: true to inject anyway)")
        done = inject_process_fault(cluster, service, intent, "actions.ceph.start_daemon",
                       {"daemon": service.name})
    except (ClusterError, ValueError) as exc:
        raise ActivityFailed(f"kill_daemon: {exc}") from None
    return {"daemon": service.name, "node": service.node, "signal": "KILL", **done}


def start_daemon(daemon: str = "rgw.lab", configuration: dict = None) -> dict:
    """Start a mon, mgr or RGW daemon again (the restore of kill_daemon; idempotent),
    undoing what kill_daemon did as the fault ledger recorded it, and report as start_osd
    does."""
    cluster = cluster_from_configuration(configuration)
    service = _daemon(cluster, daemon)
    try:
        outcome = undo_process_fault(cluster, service,
                                     process_record(cluster, service, "start_daemon"))
    except ClusterError as exc:
        raise ActivityFailed(f"start_daemon: {exc}") from None
    return {**restore_report([outcome]), "daemon": service.name,
            "started": outcome["started_by_restore"]}


def _kill_osd_scope(cluster: Cluster, a: dict) -> Scope:
    # any negative number is "any", as kill_osd takes it
    osd_id = whole_number("osd_id", a["osd_id"], -(2**63), "a whole number (-1: any)")
    if osd_id < 0:
        return Scope("kills one running OSD picked at random (SIGKILL)")
    service = cluster.service(f"osd.{osd_id}")
    return Scope(f"kills osd.{osd_id} {where(service.node)} (SIGKILL)", osds=frozenset({osd_id}))


def _hang_osd_scope(cluster: Cluster, a: dict) -> Scope:
    osd_id = whole_number("osd_id", a["osd_id"], 0, "an OSD's number")
    service = cluster.service(f"osd.{osd_id}")
    return Scope(f"hangs osd.{osd_id} {where(service.node)} {SIGSTOP}", osds=frozenset({osd_id}))


def _kill_daemon_scope(cluster: Cluster, a: dict) -> Scope:
    service = cluster.service(str(a["daemon"]))
    return Scope(f"kills {service.name} {where(service.node)} (SIGKILL)")


FAULTS = {
    "kill_osd": Fault("start_osd", _kill_osd_scope),
    "hang_osd": Fault("resume_osd", _hang_osd_scope),
    "kill_daemon": Fault("start_daemon", _kill_daemon_scope),
}
