"""A run's time series for its charts: per-second load, the cluster's recovery, the events.

What the run page draws (live while the run goes on), the comparison overlays and the
downloadable reports embed. Times are seconds from the fault, or from the start of the
load when no fault was injected (yet), or from the first sample of a run that has not
marked the start of its load.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from clusters.ceph.admin import is_clean
from loadgen.samples import merge_histograms
from service.store.models import ClusterSample, Event, LoadSample, Run

from .event_labels import event_label
from .figures import get_run

ACTIVE = ("queued", "running")
# events drawn on the charts as vertical lines (the others are in the timeline table)
MARKED = ("fault_injected", "restored", "cluster_noticed", "client_recovered",
          "fully_redundant")


def run_series(session: Session, run_id: int, since: float | None = None) -> dict[str, Any]:
    """The run's series as JSON-able data (RunNotFound for an unknown run).

    Each load and cluster point has `t` (seconds from the origin) and `ts` (epoch seconds);
    `origin_ts` is the origin's epoch. A load point's `errors` counts, as the figures do,
    the failed operations and the starts the open loop could not issue (`not_started`, of
    which they are part). With `since` (epoch seconds), only the points after
    it: a live page asks for what is new (the percentiles of a second merge its histograms,
    too much to redo for a whole run every 2 s); the events always come whole.
    """
    run = get_run(session, run_id)
    seconds = _seconds(session, run_id, since)  # summed over op types, as analysis sees it
    samples = select(ClusterSample).where(ClusterSample.run_id == run_id)
    if since is not None:
        samples = samples.where(ClusterSample.ts > since)
    samples = list(session.execute(samples.order_by(ClusterSample.ts)).scalars())
    timeline = run_timeline(session, run)
    origin = timeline["origin_ts"]
    return {
        "run_id": run.id, "cluster_kind": run.cluster_kind, "status": run.status,
        "ended": run.status not in ACTIVE, "origin": timeline["origin"], "origin_ts": origin,
        "since": since,
        "load": [{"t": round(ts - origin, 2), "ts": ts, "ops": ops,
                  "errors": errors + not_started, "not_started": not_started,
                  "p50_ms": p50_ms, "p99_ms": p99_ms}
                 for ts, ops, errors, not_started, p50_ms, p99_ms in seconds],
        "cluster": [{**cluster_point(c.ts - origin, c.health, c.state), "ts": c.ts}
                    for c in samples],
        "events": timeline["events"],
        "steady_t": _steady_t(run, timeline),
    }


def run_timeline(session: Session, run: Run) -> dict[str, Any]:
    """The origin and the events of run_series, without the load and cluster points (the run
    page renders these; its charts load the points from series.json)."""
    events = session.execute(select(Event).where(Event.run_id == run.id)
                             .order_by(Event.ts)).scalars()
    origin, origin_name = _origin(session, run)
    return {"origin": origin_name, "origin_ts": origin,
            "events": [{"t": round(e.ts - origin, 2), "kind": e.kind,
                        "label": event_label(e.kind), "name": e.detail.get("name"),
                        "status": e.detail.get("status")}
                       for e in events]}


def _seconds(session: Session, run_id: int, since: float | None
             ) -> list[tuple[float, int, int, int, float | None, float | None]]:
    """(ts, ops, errors, missed starts, p50 ms, p99 ms) of each second, summed over op types
    in the database; the percentiles merged when the second was stored (LoadSample.second_p50_ms,
    second_p99_ms), or merged here from the histograms for the seconds stored without them."""
    where = [LoadSample.run_id == run_id]
    if since is not None:
        where.append(LoadSample.ts > since)
    unmerged = ((LoadSample.second_p50_ms.is_(None) | LoadSample.second_p99_ms.is_(None))
                & (LoadSample.histogram != ""))
    rows = session.execute(
        select(LoadSample.ts, func.sum(LoadSample.ops), func.sum(LoadSample.errors),
               func.sum(LoadSample.missed), func.max(LoadSample.second_p50_ms),
               func.max(LoadSample.second_p99_ms),
               func.count().filter(unmerged))
        .where(*where).group_by(LoadSample.ts).order_by(LoadSample.ts)).all()
    histograms: dict[float, list[str]] = defaultdict(list)
    if any(row[6] for row in rows):
        redo = select(LoadSample.ts).where(*where, unmerged).scalar_subquery()
        for ts, blob in session.execute(select(LoadSample.ts, LoadSample.histogram)
                                        .where(*where, LoadSample.ts.in_(redo))):
            if blob:
                histograms[ts].append(blob)
    return [(ts, int(ops), int(errors), int(missed or 0),
             *(_percentiles_ms(tuple(histograms[ts])) if unmerged_n else (p50, p99)))
            for ts, ops, errors, missed, p50, p99, unmerged_n in rows]


def cluster_point(t: float, health: str, state: dict[str, Any]) -> dict[str, Any]:
    """One cluster sample as the recovery chart draws it (the sampler's keys,
    service/runs/sampler.py: clusters.ceph.admin.CephState / clusters.swift.state.SwiftState)."""
    pgs = state.get("pgs_by_state")
    return {"t": round(t, 2), "health": health,
            # Ceph
            "degraded": state.get("degraded_objects"),
            "misplaced": state.get("misplaced_objects"),
            "clean_pgs": (sum(n for s, n in pgs.items() if is_clean(s))
                          if isinstance(pgs, dict) else None),
            "num_pgs": state.get("num_pgs"),
            # Swift
            "dispersion_pct": (state.get("dispersion") or {}).get("object_pct"),
            "handoffs": state.get("handoff_partitions")}


def _steady_t(run: Run, timeline: dict[str, Any]) -> float | None:
    """When the steady load began, in seconds from the origin: the baseline's start, else the
    load's start plus its ramp (the charts scale their y-axis from there, not the ramp)."""
    for event in timeline["events"]:
        if event["kind"] == "baseline_started":
            return event["t"]
    if run.load_started_ts is None:
        return None
    ramp_s = float((run.workload or {}).get("ramp_s") or 0.0)
    return round(run.load_started_ts + ramp_s - timeline["origin_ts"], 2)


def _origin(session: Session, run: Run) -> tuple[float, str]:
    if run.fault_ts:
        return run.fault_ts, "fault"
    if run.load_started_ts:
        return run.load_started_ts, "load start"
    firsts = [ts for ts in (
        session.execute(select(func.min(LoadSample.ts)).where(LoadSample.run_id == run.id))
        .scalar(),
        session.execute(select(func.min(ClusterSample.ts))
                        .where(ClusterSample.run_id == run.id)).scalar()) if ts is not None]
    return (min(firsts), "first sample") if firsts else (0.0, "load start")


def _percentiles_ms(histograms: tuple[str, ...]) -> tuple[float | None, float | None]:
    merged = merge_histograms(list(histograms))  # exact over every op type
    if not merged.get_total_count():
        return None, None
    return merged.get_value_at_percentile(50) / 1000, merged.get_value_at_percentile(99) / 1000


def series(sessions: sessionmaker[Session], run_id: int) -> dict[str, Any]:
    """run_series() for the whole run, in a session of its own (the API's samples)."""
    with sessions() as session:
        return run_series(session, run_id)
