"""The figures of a run (DESIGN.md, "What a run measures"), from its recordings. Pure.

Times are seconds from t_fault, the moment the fault action returned, except
`time_to_full_redundancy_after_restore_s`, which counts from the restore
(`restore_at_s` says when that was). Decisions where DESIGN.md is silent:
- the baseline window holds the whole seconds of load from the end of the
  ramp-up until the fault, or, when the experiment prepares the cluster first
  (a fill), from the end of that step;
- `errors` counts every failed operation from t_fault to the end of the load;
- a start the open loop could not issue (a missed start: the driver was
  saturated, or the cluster stalled with max_in_flight operations waiting) is
  an error of class `not started`, of its operation: it was never sent, so it
  has no latency to count, and an error is what the client got;
- the fault window (for the deficit and the throughput drop) runs from t_fault
  to full redundancy (while the fault persists, else after the restore), or to
  the end of the load if the cluster never got there;
- the deficit (`deficit_ops`, `deficit_s`; service/results/deficit.py) is the
  headline loss of throughput: operations not served on time against the
  offered rate. The mean drop (`throughput_drop`) is kept for old runs and
  the API, but a catch-up burst after a stall washes it out;
- clients that never dipped (every second of the fault window good, as the
  client recovery counts it) had no disruption: `time_to_client_recovery_s` is
  then None with a reason starting "no disruption", not 0 s (an instant
  recovery), and `client_disruption` is False;
- "fully redundant" must hold for 10 s (and on at least 3 samples), because
  right after an OSD boots, or is marked out, Ceph reports every PG clean for a
  few seconds before peering starts (seen: 3 clean polls, then 8 PGs peering);
- data at risk is the time the cluster itself reported degraded/undersized
  data: between the kill and the detection the cluster does not know yet;
- the recovery (`recovery_s`, and the clients' throughput and p99 during it against
  the baseline's, `recovery_ops_ratio`, `recovery_p99_ratio`; `recovery_objects`, the
  most degraded objects seen meanwhile, says how much it rebuilt) runs from the first
  sample after the fault where the cluster reports recovery at work (Ceph: a PG
  recovering or backfilling, or waiting to) to full redundancy while the fault
  persists: what an operator's recovery settings trade against the clients. Not
  before: until Ceph marks the dead OSD out there is nothing to recover onto. Swift does
  not rebuild while a device is away (its samples say nothing of recovery at work): its
  recovery is the replicators' catch-up after the restore, from the restore to full
  redundancy with every daemon back (`time_to_full_redundancy_after_restore_s`); it
  counts handoff partitions, not objects, so `recovery_objects` stays None for it.
A figure that cannot be measured is None, and `reasons` says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loadgen.samples import merge_histograms

from .consistency import consistency_of, counted
from .deficit import deficit, on_time_ops

CLIENT_RECOVERY_HOLD_S = 10
CLIENT_RECOVERY_TOLERANCE = 0.05
STABLE_POLLS = 3
STABLE_HOLD_S = 10.0
NOT_STARTED = "not started"  # the error class of a missed start
NO_DISRUPTION = "no disruption"  # how the reason of clients that never dipped begins
# each figure of the consistency checker, by its class (loadgen.consistency)
CHECKED = {"stale_reads": "stale", "resurrected_objects": "resurrected",
           "unexpected_objects": "unexpected", "recovered_writes": "recovered",
           "listing_gaps": "listing_gap"}


@dataclass(frozen=True)
class Second:
    """All operations of one second of load, summed over op types and workers."""

    ts: float
    ops: int
    bytes: int = 0
    errors: int = 0
    errors_by_class: dict[str, int] = field(default_factory=dict)
    histograms: tuple[str, ...] = ()
    errors_by_op: dict[str, int] = field(default_factory=dict)
    # intended starts the open loop could not issue (not in `errors`: failed operations)
    missed: int = 0
    missed_by_op: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ClusterPoint:
    ts: float
    fault_seen: bool
    fully_redundant: bool  # no data below its replica count, health OK
    complete: bool = False  # fully redundant with every daemon back (up and in)
    at_risk: bool | None = False  # None: this sample could not tell
    recovering: bool | None = None  # None: the system does not say (Swift)
    degraded: int | None = None  # Ceph's degraded objects (copies below their count)


@dataclass(frozen=True)
class Timeline:
    load_start: float
    fault: float | None
    end: float
    restore: float | None = None
    ramp_s: float = 0.0
    baseline_start: float | None = None  # set when the baseline follows a setup step (a fill)


def analyze(seconds: list[Second], points: list[ClusterPoint], tl: Timeline,
            verify: dict[str, Any] | None = None) -> dict[str, Any]:
    seconds = sorted(seconds, key=lambda s: s.ts)
    points = sorted(points, key=lambda p: p.ts)
    figures: dict[str, Any] = {}
    reasons: dict[str, str] = {}
    figures["reasons"] = reasons

    _baseline(seconds, tl, figures, reasons)
    if tl.fault is None:
        for key in ("errors", "deficit_ops", "deficit_s", "throughput_drop",
                    "worst_second_drop", "time_to_detect_s", "time_to_client_recovery_s",
                    "time_to_full_redundancy_s", "time_to_full_redundancy_after_restore_s",
                    "data_at_risk_s", *RECOVERY_KEYS):
            figures[key] = None
            reasons[key] = "no fault was injected"
        figures["errors_by_class"] = figures["errors_by_op"] = {}
        figures["client_disruption"] = None
    else:
        _errors(seconds, tl.fault, figures)
        # how long after the fault the run watched: a time never reached is "> this"
        figures["observed_s"] = round(tl.end - tl.fault, 3)
        _detection(points, tl, figures, reasons)
        _redundancy(points, tl, figures, reasons)
        window_end = figures.pop("_window_end")
        window_end = tl.end if window_end is None else window_end
        _throughput(seconds, tl, window_end, figures, reasons)
        _client_recovery(seconds, tl.fault, window_end, figures, reasons)
        _data_at_risk(points, tl, figures, reasons)
        _recovery(seconds, points, tl, figures, reasons)
    figures["restore_at_s"] = (round(tl.restore - tl.fault, 3)
                               if tl.restore is not None and tl.fault is not None else None)
    if verify is None:
        figures["lost_objects"] = figures["corrupt_objects"] = None
        reasons["lost_objects"] = reasons["corrupt_objects"] = "no verify phase ran"
    else:
        figures["lost_objects"] = verify.get("lost_objects")
        figures["corrupt_objects"] = verify.get("corrupt_objects")
        figures["verified_objects"] = verify.get("checked")
        unreadable = verify.get("unreadable_objects") or 0
        figures["unreadable_objects"] = unreadable
        if unreadable:  # "0 lost" would claim more than was checked
            figures["lost_objects"] = figures["corrupt_objects"] = None
            reasons["lost_objects"] = reasons["corrupt_objects"] = (
                f"{unreadable} acknowledged objects could not be read back (errors other "
                "than 'not found'); see the run's verify record")
    _consistency(verify, figures, reasons)
    return figures


def _consistency(verify: dict[str, Any] | None, figures: dict, reasons: dict) -> None:
    """The checker's counts, or why there are none."""
    record = consistency_of(verify)
    for key, kind in CHECKED.items():
        if record is not None:
            figures[key] = counted(record, kind)
            if figures[key] is None:
                reasons[key] = ("no container listing was read (a run recorded before the "
                                "verify listed, or every listing failed)")
            continue
        figures[key] = None
        reasons[key] = ("no verify phase ran" if verify is None else
                        "not checked for this run (a load of several drivers one of which "
                        "could not verify its share, or a run recorded before the checker)")


def _baseline(seconds: list[Second], tl: Timeline, figures: dict, reasons: dict) -> None:
    stop = tl.fault if tl.fault is not None else tl.end
    start = tl.baseline_start if tl.baseline_start is not None else tl.load_start + tl.ramp_s
    window = [s for s in seconds if s.ts >= start and s.ts + 1 <= stop]
    if not window:
        for key in ("baseline_ops", "baseline_mbps", "baseline_p50_ms", "baseline_p99_ms"):
            figures[key] = None
            reasons[key] = "no complete second of load between the ramp-up and the fault"
        return
    figures["baseline_seconds"] = len(window)
    figures["baseline_ops"] = round(sum(s.ops for s in window) / len(window), 2)
    figures["baseline_mbps"] = round(sum(s.bytes for s in window) / len(window) / 1e6, 4)
    merged = merge_histograms([h for s in window for h in s.histograms])
    has = merged.get_total_count() > 0
    figures["baseline_p50_ms"] = merged.get_value_at_percentile(50) / 1000 if has else None
    figures["baseline_p99_ms"] = merged.get_value_at_percentile(99) / 1000 if has else None


def _errors(seconds: list[Second], fault: float, figures: dict) -> None:
    by_class: dict[str, int] = {}
    by_op: dict[str, int] = {}
    for s in seconds:
        if s.ts + 1 > fault:
            for cls, n in s.errors_by_class.items():
                by_class[cls] = by_class.get(cls, 0) + n
            for op, n in s.errors_by_op.items():
                by_op[op] = by_op.get(op, 0) + n
            if s.missed:
                by_class[NOT_STARTED] = by_class.get(NOT_STARTED, 0) + s.missed
            for op, n in s.missed_by_op.items():
                by_op[op] = by_op.get(op, 0) + n
    figures["errors"] = sum(by_class.values())
    figures["errors_by_class"] = by_class
    figures["errors_by_op"] = by_op


def _first_stable(points: list[ClusterPoint], start: float, attr: str) -> float | None:
    """Time of the first point (at or after start) from which attr held on every point for
    at least STABLE_HOLD_S, seen on at least STABLE_POLLS points."""
    first: ClusterPoint | None = None
    count = 0
    for p in points:
        if p.ts < start:
            continue
        if not getattr(p, attr):
            first, count = None, 0
            continue
        if first is None:
            first = p
        count += 1
        if count >= STABLE_POLLS and p.ts - first.ts >= STABLE_HOLD_S:
            return first.ts
    return None


def _detection(points: list[ClusterPoint], tl: Timeline, figures: dict, reasons: dict) -> None:
    seen = next((p.ts for p in points if p.ts >= tl.fault and p.fault_seen), None)
    figures["time_to_detect_s"] = round(seen - tl.fault, 3) if seen is not None else None
    if seen is None:
        reasons["time_to_detect_s"] = "the cluster never reported the fault"


def _redundancy(points: list[ClusterPoint], tl: Timeline, figures: dict, reasons: dict) -> None:
    detected = tl.fault + (figures["time_to_detect_s"] or 0.0)
    during = _first_stable(points, detected, "fully_redundant") \
        if figures["time_to_detect_s"] is not None else None
    if during is not None and tl.restore is not None and during >= tl.restore:
        during = None
    figures["time_to_full_redundancy_s"] = (round(during - tl.fault, 3)
                                         if during is not None else None)
    if during is None:
        reasons["time_to_full_redundancy_s"] = (
            "the cluster never reported the fault" if figures["time_to_detect_s"] is None
            else "not fully redundant again while the fault persisted")
    after = _first_stable(points, tl.restore, "complete") if tl.restore is not None else None
    figures["time_to_full_redundancy_after_restore_s"] = (
        round(after - tl.restore, 3) if after is not None else None)
    if after is None:
        reasons["time_to_full_redundancy_after_restore_s"] = (
            "the fault was not restored during the run" if tl.restore is None
            else "not fully redundant with every daemon back before the run ended")
    ends = [t for t in (during, after) if t is not None]
    figures["_window_end"] = min(ends) if ends else None


def _throughput(seconds: list[Second], tl: Timeline, end: float, figures: dict,
                reasons: dict) -> None:
    window = [s for s in seconds if s.ts + 1 > tl.fault and s.ts < end]
    base = figures.get("baseline_ops")
    if not base or not window:
        why = "no baseline" if not base else "no load during the fault window"
        for key in ("deficit_ops", "deficit_s", "throughput_drop", "worst_second_drop"):
            figures[key] = None
            reasons[key] = why
        return
    figures["fault_window_s"] = round(end - tl.fault, 3)
    # the latency the clients saw while the fault lasted, beside the baseline's p99
    merged = merge_histograms([h for s in window for h in s.histograms])
    figures["fault_p99_ms"] = (merged.get_value_at_percentile(99) / 1000
                               if merged.get_total_count() > 0 else None)
    if merged.get_total_count() < sum(s.ops for s in window):
        # some operations have no latency: which of them were on time is not known
        figures["deficit_ops"] = figures["deficit_s"] = None
        reasons["deficit_ops"] = reasons["deficit_s"] = (
            "the latency of some operations of the fault window was not recorded")
    else:
        offered, missing, missing_s = deficit(base, len(window), on_time_ops(merged))
        figures["offered_ops"] = round(offered)
        figures["deficit_ops"] = round(missing)
        figures["deficit_s"] = round(missing_s, 3)
    mean = sum(s.ops for s in window) / len(window)
    figures["throughput_drop"] = _fraction(1 - mean / base)
    figures["worst_second_drop"] = _fraction(1 - min(s.ops for s in window) / base)


RECOVERY_KEYS = ("recovery_s", "recovery_ops_ratio", "recovery_p99_ratio", "recovery_objects")


def _recovery(seconds: list[Second], points: list[ClusterPoint], tl: Timeline, figures: dict,
              reasons: dict) -> None:
    """The recovery's length, and the clients' throughput and p99 during it against the
    baseline's (see the module's docstring)."""
    start = next((p.ts for p in points if p.ts >= tl.fault and p.recovering), None)
    done = figures.get("time_to_full_redundancy_s")
    end = tl.fault + done if done is not None else None
    why = None
    if not any(p.recovering is not None for p in points):
        _catch_up(seconds, tl, figures, reasons)
        return
    if start is None:
        why = "no recovery was seen (no PG recovering or backfilling after the fault)"
    elif end is None or end <= start:
        why = "the cluster did not finish recovering while the fault persisted"
    window = [s for s in seconds if s.ts + 1 > start and s.ts < end] if why is None else []
    if why is None and not window:
        why = "no load during the recovery"
    if why is not None:
        _not_measured(figures, reasons, why)
        return
    figures["recovery_s"] = round(end - start, 3)
    # how much there was to rebuild: recovery times of different amounts do not compare
    degraded = [p.degraded for p in points if start <= p.ts <= end and p.degraded is not None]
    figures["recovery_objects"] = max(degraded) if degraded else None
    if not degraded:
        reasons["recovery_objects"] = "the cluster's samples do not count degraded objects"
    _client_share(window, figures, reasons)


def _catch_up(seconds: list[Second], tl: Timeline, figures: dict, reasons: dict) -> None:
    """Swift's recovery: the replicators' catch-up from the restore to full redundancy with
    every daemon back."""
    after = figures.get("time_to_full_redundancy_after_restore_s")
    why = None
    if tl.restore is None:
        why = "the fault was not restored during the run (Swift recovers after the restore)"
    elif after is None:
        why = "not fully redundant with every daemon back before the run ended"
    start, end = tl.restore, (tl.restore or 0.0) + (after or 0.0)
    window = [s for s in seconds if s.ts + 1 > start and s.ts < end] if why is None else []
    if why is None and not window:
        why = "no load during the catch-up after the restore"
    if why is not None:
        _not_measured(figures, reasons, why)
        return
    figures["recovery_s"] = round(end - start, 3)
    figures["recovery_objects"] = None
    reasons["recovery_objects"] = "Swift counts handoff partitions, not objects to rebuild"
    _client_share(window, figures, reasons)


def _not_measured(figures: dict, reasons: dict, why: str) -> None:
    for key in RECOVERY_KEYS:
        figures[key] = None
        reasons[key] = why


def _client_share(window: list[Second], figures: dict, reasons: dict) -> None:
    """The clients' throughput and p99 during the recovery against the baseline's."""
    base_ops, base_p99 = figures.get("baseline_ops"), figures.get("baseline_p99_ms")
    mean = sum(s.ops for s in window) / len(window)
    figures["recovery_ops_ratio"] = round(mean / base_ops, 4) if base_ops else None
    merged = merge_histograms([h for s in window for h in s.histograms])
    p99 = (merged.get_value_at_percentile(99) / 1000 if merged.get_total_count() > 0
           else None)
    figures["recovery_p99_ratio"] = (round(p99 / base_p99, 3)
                                     if p99 is not None and base_p99 else None)
    for key in ("recovery_ops_ratio", "recovery_p99_ratio"):
        if figures[key] is None:
            reasons[key] = "no baseline" if not base_ops else "no latency was recorded"


def _fraction(x: float) -> float:
    return round(min(1.0, max(0.0, x)), 4)


def _client_recovery(seconds: list[Second], fault: float, window_end: float, figures: dict,
                     reasons: dict) -> None:
    """First moment after which every second is good (ops within 5% of the baseline, or
    one operation at a low rate, no error) for at least 10 s and until the end of the fault
    window: a Ceph OSD that is marked out 30 s after the kill stalls the clients a second
    time, and they have not recovered before that."""
    base = figures.get("baseline_ops")
    figures["client_disruption"] = None
    if not base:
        figures["time_to_client_recovery_s"] = None
        reasons["time_to_client_recovery_s"] = "no baseline"
        return
    after = [s for s in seconds if s.ts + 1 > fault]

    # the band is 5% of the baseline, or one whole operation when that is more: a second
    # counts whole operations, so at 6 ops/s it can only be 5, 6 or 7, and a 0.3-op band
    # left Swift at 10% of its capacity (make demo) never recovered
    band = max(CLIENT_RECOVERY_TOLERANCE * base, 1.0)

    def within(ops: float) -> bool:
        return abs(ops - base) <= band + 1e-9

    def adjacent(i: int, j: int) -> bool:
        return 0 <= j < len(after) and abs(after[i].ts - after[j].ts) <= 1 + 1e-6

    # Operations count in the second they completed: one that straddles a boundary moves
    # from one second to the next. At 50 ops/s a 5% band is 2.5 ops, narrower than that
    # jitter, so a second off the band (by at most twice the band) still counts when it pairs
    # with a neighbour on the other side of the baseline and their mean is within the band.
    # Each second pairs at most once, and a stall (0 then a burst of late completions) is far
    # outside twice the band.
    good_ops = [within(s.ops) for s in after]
    paired: set[int] = set()
    for i, s in enumerate(after):
        if good_ops[i] or i in paired or abs(s.ops - base) > 2 * band:
            continue
        for j in (i - 1, i + 1):
            if (adjacent(i, j) and j not in paired and abs(after[j].ops - base) <= 2 * band
                    and (s.ops - base) * (after[j].ops - base) < 0
                    and within((s.ops + after[j].ops) / 2)):
                good_ops[i] = good_ops[j] = True
                paired |= {i, j}
                break

    start = None  # start of the current run of good, contiguous seconds
    for i, s in enumerate(after):
        good = s.errors == 0 and s.missed == 0 and good_ops[i]
        contiguous = i > 0 and s.ts - after[i - 1].ts <= 1 + 1e-6
        if not good:
            start = None
            continue
        if start is None or not contiguous:
            start = s.ts
        if s.ts + 1 - start >= CLIENT_RECOVERY_HOLD_S and s.ts + 1 >= window_end:
            # good from the fault's own second on: nothing to recover from
            figures["client_disruption"] = start > fault
            figures["time_to_client_recovery_s"] = (round(start - fault, 3)
                                                    if start > fault else None)
            if start <= fault:
                reasons["time_to_client_recovery_s"] = (
                    f"{NO_DISRUPTION}: the clients never dipped below "
                    f"{1 - CLIENT_RECOVERY_TOLERANCE:.0%} of the baseline throughput and had "
                    "no error and no missed start, from the fault to the end of the fault "
                    "window")
            return
    figures["client_disruption"] = True
    figures["time_to_client_recovery_s"] = None
    reasons["time_to_client_recovery_s"] = (
        f"throughput never stayed within {CLIENT_RECOVERY_TOLERANCE:.0%} of the baseline with "
        f"zero errors for {CLIENT_RECOVERY_HOLD_S} s and until the end of the fault window "
        "before the load ended")


def _data_at_risk(points: list[ClusterPoint], tl: Timeline, figures: dict,
                  reasons: dict) -> None:
    if not any(p.ts >= tl.fault for p in points):  # the sampler never saw the fault
        figures["data_at_risk_s"] = None
        reasons["data_at_risk_s"] = "no sample of the cluster was recorded after the fault"
        return
    total, unknown = 0.0, 0.0
    for here, there in zip(points, points[1:] + [None], strict=True):
        if here.ts < tl.fault:
            continue
        length = (there.ts if there is not None else tl.end) - here.ts
        if here.at_risk is None:
            unknown += length
        elif here.at_risk:
            total += length
    if unknown:
        figures["data_at_risk_s"] = None
        reasons["data_at_risk_s"] = (f"the cluster could not tell for {unknown:.0f} s of the "
                                     "run whether data was below its replica count (e.g. no "
                                     "Swift dispersion report while the proxy was down)")
        return
    figures["data_at_risk_s"] = round(total, 3)
