"""A stored calibration in words and in JSON: its stages, the stages repeated around the
knee, the knee with its spread, why the sweep ended and what it was made on (the command
line and the API print the same figures)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from loadgen.samples import merge_histograms
from service.store.models import Calibration

from .exceptions import CalibrationNotFound
from .generator import LOWER_BOUND

STAGE_FIELDS = ("in_flight", "seconds", "ops", "ops_s", "mb_s", "errors", "errors_by_class",
                "p50_ms", "p90_ms", "p99_ms", "p999_ms", "generator_cpu_cores")


def load(session: Session, calibration_id: int | None = None,
         cluster: str | None = None) -> Calibration:
    """A calibration by id, or the latest (of a cluster, or of any)."""
    if calibration_id is not None:
        row = session.get(Calibration, calibration_id)
        if row is None:
            raise CalibrationNotFound(f"no calibration {calibration_id}")
        return row
    query = select(Calibration).order_by(Calibration.id.desc()).limit(1)
    if cluster is not None:
        query = query.where(Calibration.cluster == cluster)
    row = session.execute(query).scalar_one_or_none()
    if row is None:
        raise CalibrationNotFound("no calibration yet" + (f" of {cluster}" if cluster else "")
                              + ": run `faultline calibrate CLUSTER`")
    return row


def calibration_dict(row: Calibration, histograms: bool = False) -> dict[str, Any]:
    """The calibration's figures; `histograms` adds each stage's encoded HDR histogram.
    `stages` is the first pass (one per level, as before repeats existed); `repeats` the
    levels measured again around the knee; `spread` the knee rule's figures (None on a
    calibration made before it). Each stage's `client_busy` and the calibration's
    `generator_bound_why` come from the spread's `generator` (service.results.generator;
    None on a calibration made before it)."""
    fields = STAGE_FIELDS + (("histogram",) if histograms else ())
    judged = (row.spread or {}).get("generator") or {}
    busy = {(s["in_flight"], s["repeat"]): s["client_busy"] for s in judged.get("stages", [])}

    def stage(s) -> dict[str, Any]:
        return {**{f: getattr(s, f) for f in fields},
                "client_busy": busy.get((s.in_flight, s.repeat))}

    first = [s for s in row.stages if not s.repeat]
    again = [s for s in row.stages if s.repeat]
    return {
        "calibration_id": row.id, "cluster": row.cluster, "cluster_kind": row.cluster_kind,
        "api": row.load_api, "workload": row.workload, "settings": row.settings,
        "status": row.status, "started_at": row.started_at.isoformat(),
        "ended_at": row.ended_at.isoformat() if row.ended_at else None,
        "capacity_ops": row.capacity_ops, "capacity_mbps": row.capacity_mbps,
        "knee_in_flight": row.knee_in_flight, "stop_reason": row.stop_reason,
        "generator_bound": row.generator_bound, "error": row.error,
        "generator_bound_why": judged.get("why") if row.generator_bound else None,
        "stages": [stage(s) for s in first],
        "repeats": [{"repeat": s.repeat, **stage(s)} for s in again],
        "spread": row.spread, "release": row.release, "topology": row.topology,
    }


def format_calibration(data: dict[str, Any]) -> str:
    w, s = data["workload"], data["settings"]
    size = f"{w['object_size']} B" + (f"-{w['object_size_max']} B" if w["object_size_max"]
                                      else "")
    mix = "/".join(f"{op} {share}%" for op, share in w["mix"].items())
    lines = [f"Calibration {data['calibration_id']}: {data['cluster']} ({data['api']}), "
             f"{size} objects, {mix}; {data['status']}",
             f"  stages of {s['stage_s']} s after {s['warmup_s']} s of warm-up; the knee among the "
             f"stages with p99 within {s['p99_factor']}x the first stage's"]
    lines.append(f"  {'in flight':>9} {'ops/s':>9} {'MB/s':>8} {'p50 ms':>8} {'p90 ms':>8} "
                 f"{'p99 ms':>8} {'p99.9 ms':>9} {'errors':>7} {'gen. CPU':>8} "
                 f"{'client':>6}")
    for st in data["stages"]:
        mark = "  <- knee" if st["in_flight"] == data["knee_in_flight"] else ""
        lines.append(f"  {st['in_flight']:>9} {st['ops_s']:>9.1f} {st['mb_s']:>8.2f} "
                     f"{_ms(st['p50_ms']):>8} {_ms(st['p90_ms']):>8} {_ms(st['p99_ms']):>8} "
                     f"{_ms(st['p999_ms']):>9} {st['errors']:>7} "
                     f"{_cores(st.get('generator_cpu_cores')):>8} "
                     f"{_cores(st.get('client_busy')):>6}{mark}")
    if data["stop_reason"]:
        lines.append(f"  the sweep stopped: {data['stop_reason']}")
    lines += _spread_lines(data.get("spread"))
    if data["capacity_ops"] is not None:
        bound = data.get("generator_bound")
        lines.append(f"  capacity: {'at least ' if bound else ''}{data['capacity_ops']:.1f} "
                     f"ops/s ({data['capacity_mbps']:.2f} MB/s) at {data['knee_in_flight']} "
                     "in flight" + _range(data.get("spread")))
        if bound:
            why = data.get("generator_bound_why")
            lines.append(f"  {GENERATOR_BOUND}" + (f" ({why})" if why else ""))
    else:
        lines.append(f"  capacity: n/a: {data['error'] or 'the calibration did not finish'}")
    lines.append(f"  made on: {made_on(data)}")
    return "\n".join(lines)


def _spread_lines(spread: dict[str, Any] | None) -> list[str]:
    """Each repeated level's throughputs and the rule that picked the knee among them."""
    if not spread or spread.get("repeats", 0) == 0:
        return []
    lines = [f"  repeated around the knee ({spread['repeats']} more stages of each level, in "
             "turns):"]
    for level in spread["levels"]:
        each = ", ".join(f"{v:.1f}" for v in level["ops_s"])
        lines.append(f"  {level['in_flight']:>9} in flight: {each} ops/s (median "
                     f"{level['median']:.1f})")
    lines.append(f"  knee: {KNEE_RULE} (the best: {spread['best_in_flight']} in flight, its "
                 f"lowest {spread['threshold_ops']:.1f} ops/s)")
    return lines


KNEE_RULE = ("the fewest in flight whose median throughput reaches the lowest stage of the "
             "level of highest median")


def _range(spread: dict[str, Any] | None) -> str:
    if not spread or spread.get("stages", 1) < 2:
        return ""
    return (f"; median of {spread['stages']} stages, {spread['min']:.1f}-{spread['max']:.1f} "
            "ops/s")


def made_on(data: dict[str, Any]) -> str:
    """The release and topology a calibration was made on: what its reuse is keyed by."""
    topology = data.get("topology")
    if topology is None:
        return ("not recorded (made before calibrations kept it): not reused for a relative "
                "rate")
    services = ", ".join(f"{n} {kind}" for kind, n in topology.get("services", {}).items())
    return (f"release {data.get('release') or 'not named'}, {topology['nodes']} nodes, "
            f"{topology['zones']} zones, {topology['devices']} devices, {topology['osds']} "
            f"OSDs" + (f", services: {services}" if services else ""))


GENERATOR_BOUND = LOWER_BOUND  # the knee's words when it is a lower bound


def _cores(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


# where a stage's response-time CDF is read: dense where the tail is
CDF_PERCENTILES = (0, 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 98, 99, 99.5, 99.9, 99.99,
                   100)


def chart_data(row: Calibration) -> dict[str, Any]:
    """What the calibration page draws: throughput against latency, one point per stage, and
    each stage's response-time CDF (latency in ms at each percentile)."""
    stages = []
    for s in (s for s in row.stages if not s.repeat):
        histogram = merge_histograms([s.histogram])
        cdf = ([{"ms": histogram.get_value_at_percentile(p) / 1000, "pct": p}
                for p in CDF_PERCENTILES] if s.ops else [])
        stages.append({"in_flight": s.in_flight, "ops_s": s.ops_s, "p50_ms": s.p50_ms,
                       "p99_ms": s.p99_ms, "cdf": cdf})
    return {"calibration_id": row.id, "knee_in_flight": row.knee_in_flight,
            "capacity_ops": row.capacity_ops, "generator_bound": row.generator_bound,
            "stages": stages, "spread": row.spread}


def recent(session: Session, limit: int = 50) -> list[Calibration]:
    return list(session.execute(select(Calibration).order_by(Calibration.id.desc())
                                .limit(limit)).scalars())
