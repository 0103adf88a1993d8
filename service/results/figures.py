"""Compute a stored run's figures from its recordings (the bridge from rows to analysis)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.store.models import Alert, ClusterSample, Event, LoadSample, Run

from .analysis import ClusterPoint, Second, Timeline, analyze
from .exceptions import RunNotFound


def get_run(session: Session, run_id: int) -> Run:
    run = session.get(Run, run_id)
    if run is None:
        raise RunNotFound(f"run {run_id} does not exist")
    return run


def seconds_of(session: Session, run_id: int, since: float | None = None) -> list[Second]:
    """Per-second load summed over op types (only the seconds after `since`, if given), with
    the missed starts of each second and of each operation."""
    query = select(LoadSample).where(LoadSample.run_id == run_id)
    if since is not None:
        query = query.where(LoadSample.ts > since)
    rows = session.execute(query).scalars()
    acc: dict[float, dict[str, Any]] = defaultdict(
        lambda: {"ops": 0, "bytes": 0, "errors": 0, "by_class": defaultdict(int),
                 "by_op": defaultdict(int), "h": [], "missed": defaultdict(int)})
    for r in rows:
        a = acc[r.ts]
        a["ops"] += r.ops
        a["bytes"] += r.bytes
        a["errors"] += r.errors
        if r.errors:
            a["by_op"][r.op] += r.errors
        for cls, n in r.errors_by_class.items():
            a["by_class"][cls] += n
        if r.histogram:
            a["h"].append(r.histogram)
        if r.missed:
            a["missed"][r.op] += r.missed
    return [Second(ts=ts, ops=a["ops"], bytes=a["bytes"], errors=a["errors"],
                   errors_by_class=dict(a["by_class"]), histograms=tuple(a["h"]),
                   errors_by_op=dict(a["by_op"]), missed=sum(a["missed"].values()),
                   missed_by_op=dict(a["missed"]))
            for ts, a in sorted(acc.items())]


def _complete(state: dict[str, Any], restore: float | None) -> bool:
    """Fully redundant with every daemon back.

    Swift also needs a replication pass on every node that began after the restore:
    one that began before it may have skipped the restored server.
    """
    if not state.get("fully_redundant"):
        return False
    if "num_osds" in state:
        return state.get("num_up_osds") == state.get("num_in_osds") == state.get("num_osds")
    started = state.get("oldest_pass_start")
    return (state.get("down") == 0 and started is not None
            and (restore is None or started >= restore))


def _at_risk(state: dict[str, Any]) -> bool | None:
    """None when the sample could not tell (a Swift sample without a dispersion report)."""
    value = state.get("at_risk")
    return None if value is None and "error" not in state else bool(value)


# Ceph's own report of a slow component while every OSD stays up: heartbeats answered late
# (a lossy network: osd_heartbeat_grace * mon_warn_on_slow_ping_ratio), or operations
# waiting past osd_op_complaint_time (a slow disk)
SLOW_CHECKS = ("OSD_SLOW_PING_TIME_BACK", "OSD_SLOW_PING_TIME_FRONT", "SLOW_OPS")
# Ceph's own report of a corrupted copy: a scrub found copies that differ
SCRUB_CHECKS = ("OSD_SCRUB_ERRORS", "PG_DAMAGED")


def fault_seen(state: dict[str, Any]) -> bool:
    """The cluster itself reported the fault in this sample: a daemon or device down, or
    (Ceph) a slow-heartbeat or slow-ops warning, all a lossy link or a slow disk may get, or
    scrub errors, how a silent corruption is seen."""
    return bool(state.get("fault_seen")) or any(
        check in SLOW_CHECKS + SCRUB_CHECKS for check in state.get("checks") or ())


def points_of(session: Session, run_id: int, restore: float | None = None) -> list[ClusterPoint]:
    rows = session.execute(select(ClusterSample).where(ClusterSample.run_id == run_id)
                           .order_by(ClusterSample.ts)).scalars()
    return [ClusterPoint(ts=r.ts, fault_seen=fault_seen(r.state),
                         fully_redundant=bool(r.state.get("fully_redundant")),
                         complete=_complete(r.state, restore),
                         at_risk=_at_risk(r.state), recovering=recovering(r.state),
                         degraded=_count(r.state.get("degraded_objects")))
            for r in rows]


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


RECOVERY_STATES = ("recover", "backfill")  # recovering, recovery_wait, backfilling, ...


def recovering(state: dict[str, Any]) -> bool | None:
    """Whether the cluster reports recovery at work or waiting: a Ceph PG recovering or
    backfilling; None where the sample has no PG states (Swift)."""
    pgs = state.get("pgs_by_state")
    if not isinstance(pgs, dict):
        return None
    return any(n and any(word in name for word in RECOVERY_STATES) for name, n in pgs.items())


def compute(session: Session, run_id: int) -> dict[str, Any]:
    run = get_run(session, run_id)
    seconds = seconds_of(session, run_id)
    restore = session.execute(select(Event.ts).where(Event.run_id == run_id,
                                                     Event.kind == "restored")
                              .order_by(Event.ts).limit(1)).scalar()
    baseline_start = session.execute(select(Event.ts).where(
        Event.run_id == run_id, Event.kind == "baseline_started").order_by(Event.ts)
        .limit(1)).scalar()
    points = points_of(session, run_id, restore)
    ends = [s.ts + 1 for s in seconds] + [p.ts for p in points]
    timeline = Timeline(load_start=run.load_started_ts or (seconds[0].ts if seconds else 0.0),
                        fault=run.fault_ts, restore=restore,
                        end=max(ends) if ends else (run.fault_ts or 0.0),
                        ramp_s=float(run.workload.get("ramp_s", 0.0)),
                        baseline_start=baseline_start)
    result = analyze(seconds, points, timeline, run.verify)
    _time_to_alert(session, run, result)
    return result


def milestones(fault_ts: float | None, result: dict[str, Any]) -> list[tuple[str, float]]:
    """The moments a run's figures put on its timeline, as (event kind, epoch seconds):
    when the cluster noticed the fault, the clients recovered, and it was fully redundant."""
    if not fault_ts:
        return []
    return [(kind, fault_ts + result[key])
            for key, kind in (("time_to_detect_s", "cluster_noticed"),
                              ("time_to_client_recovery_s", "client_recovered"),
                              ("time_to_full_redundancy_s", "fully_redundant"))
            if result.get(key) is not None]


def _time_to_alert(session: Session, run: Run, figures: dict[str, Any]) -> None:
    """From the fault to the first alert about the run's cluster (its `cluster` label) that
    began firing after it. Prometheus sends the moment the rule fired (its `for` included)
    as startsAt, so this is what an operator's pager would have seen, less Alertmanager's
    own delay."""
    if run.fault_ts is None:
        figures["time_to_alert_s"] = None
        figures["reasons"]["time_to_alert_s"] = "no fault was injected"
        return
    started = [a.starts_at.timestamp() for a in session.execute(
        select(Alert).where(Alert.run_id == run.id)).scalars()
        if a.labels.get("cluster") == run.cluster]
    after = [ts for ts in started if ts >= run.fault_ts]
    figures["time_to_alert_s"] = round(min(after) - run.fault_ts, 3) if after else None
    if not after:
        figures["reasons"]["time_to_alert_s"] = (
            f"no alert about {run.cluster} reached the service between the fault and the "
            "end of the run")
