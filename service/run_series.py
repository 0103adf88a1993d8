"""A run's time series, as the run page's chart and the API show them: per second load
(ops, errors and p99 over every op type), the cluster's health, and the timeline events.

Times are seconds from the fault (or, for a run without one, from the start of the load).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from loadgen.samples import merge_histograms

from .figures import get_run, seconds_of
from .models import ClusterSample, Event


def series(sessions: sessionmaker[Session], run_id: int) -> dict[str, Any]:
    """{"origin", "load": [{t, ops, errors, p99_ms}], "cluster": [{t, health, degraded,
    dispersion_pct, handoffs}], "events": [{t, kind}]}; RunNotFound if there is no such run."""
    with sessions() as session:
        run = get_run(session, run_id)
        seconds = seconds_of(session, run_id)  # summed over op types, as the analysis sees it
        origin = run.fault_ts or run.load_started_ts or 0.0
        health = [{"t": round(c.ts - origin, 2), "health": c.health,
                   "degraded": c.state.get("degraded_objects"),
                   "dispersion_pct": (c.state.get("dispersion") or {}).get("object_pct"),
                   "handoffs": c.state.get("handoff_partitions")}
                  for c in session.execute(select(ClusterSample)
                                           .where(ClusterSample.run_id == run_id)
                                           .order_by(ClusterSample.ts)).scalars()]
        events = [{"t": round(e.ts - origin, 2), "kind": e.kind}
                  for e in session.execute(select(Event).where(Event.run_id == run_id)
                                           .order_by(Event.ts)).scalars()]
        has_fault = run.fault_ts is not None
    load = [{"t": round(s.ts - origin, 2), "ops": s.ops, "errors": s.errors,
             "p99_ms": p99_ms(s.histograms)} for s in seconds]
    return {"origin": "fault" if has_fault else "load start", "load": load, "cluster": health,
            "events": events}


def p99_ms(histograms: tuple[str, ...]) -> float | None:
    merged = merge_histograms(list(histograms))  # exact p99 over every op type
    return merged.get_value_at_percentile(99) / 1000 if merged.get_total_count() else None
