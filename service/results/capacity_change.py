"""A scale run's capacity before and after: two calibrations of the run's workload shape
(service.runs.capacity_runs), compared only when both measured the cluster.

"Adding a server raised capacity by X%" must be a measured claim: the change is given only
when both calibrations completed, found a knee, and their load generator was not the limit
at it (a generator-bound knee is a lower bound of the capacity, and two lower bounds say
nothing about a gain). Otherwise both figures are still shown, and the change is n/a with
the reason. One run is one pair of calibrations, whose knees also move from run to run: a
change is judged only over trials (`capacity_verdict`). Each trial's change is a pair
measured minutes apart, so the changes are judged, not the two groups of knees, which also
carry the machine's drift between runs, with the paired form of the comparisons' rank method
(docs/statistics.md): Wilcoxon's exact signed-rank test that the changes centre on 0
(two-sided, 5%; it cannot reach 5% under 6 trials), and the Hodges-Lehmann centre of the
changes with its exact 95% interval. "different": p <= 5%; "no meaningful difference": the
interval lies within +-MARGIN; else "cannot tell", with the trials needed. Whether the order
of the two calibrations alone moves the knee is for an A/A control run (a pause instead of
the scale action) to show, judged the same way.
"""

from __future__ import annotations

from typing import Any

from .figure_definitions import BY_KEY
from .ranks import ALPHA, paired_shift, signed_rank_test
from .spread import Spread, spread

WHICH = ("before", "after")
MARGIN = BY_KEY["capacity_change"].margin  # a change within +-2% is no meaningful change
PAIRED_TRIALS = 6  # the fewest changes whose exact signed-rank test can reach 5%
ONE_TRIAL = ("one trial: whether this is beyond the run-to-run noise of the calibrations "
             "needs `faultline run --trials 3` (or more) of the experiment")


def calibration_figures(row: Any | None, error: str | None = None) -> dict[str, Any]:
    """What a run keeps of one of its calibrations (a Calibration row, or None with the
    error that kept it from being made), with its validity: `valid` is True only when it
    measured the cluster's capacity, and `why` says why not."""
    if row is None:
        return {"calibration_id": None, "status": "failed", "capacity_ops": None,
                "capacity_mbps": None, "knee_in_flight": None, "generator_bound": None,
                "stop_reason": None, "valid": False,
                "why": f"no calibration was made: {error or 'unknown error'}"}
    figures = {"calibration_id": row.id, "status": row.status,
               "capacity_ops": row.capacity_ops, "capacity_mbps": row.capacity_mbps,
               "knee_in_flight": row.knee_in_flight,
               "generator_bound": bool(row.generator_bound), "stop_reason": row.stop_reason}
    return {**figures, **_validity(figures, row.error)}


def _validity(figures: dict[str, Any], error: str | None) -> dict[str, Any]:
    which = f"calibration {figures['calibration_id']}"
    if figures["status"] != "completed":
        return {"valid": False, "why": f"{which} {figures['status']}: {error or 'no reason'}"}
    if figures["capacity_ops"] is None:
        return {"valid": False, "why": f"{which} found no knee ({error or 'no reason'})"}
    if figures["generator_bound"]:
        return {"valid": False,
                "why": f"{which}'s load generator was the bottleneck at its knee "
                       f"({figures['capacity_ops']:g} ops/s is a lower bound of the capacity)"}
    return {"valid": True, "why": None}


def change(before: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, Any]:
    """The run's `capacity` figures: both calibrations and the relative change in ops/s
    (None, with `reason`, unless both are valid)."""
    out: dict[str, Any] = {"before": before, "after": after, "change": None, "reason": None}
    missing = [w for w, c in zip(WHICH, (before, after), strict=True) if c is None]
    if missing:
        out["reason"] = f"no calibration {' or '.join(missing)} the scale action was made"
        return out
    invalid = [c["why"] for c in (before, after) if not c["valid"]]
    if invalid:
        out["reason"] = "; ".join(invalid)
        return out
    out["change"] = round(after["capacity_ops"] / before["capacity_ops"] - 1, 4)
    return out


def _ops(calibration: dict[str, Any] | None) -> str:
    if calibration is None or calibration.get("capacity_ops") is None:
        return "n/a"
    bound = "at least " if calibration.get("generator_bound") else ""
    return f"{bound}{calibration['capacity_ops']:g}"


def _one(which: str, calibration: dict[str, Any] | None) -> str:
    if calibration is None:
        return f"{which}: not measured"
    state = "valid" if calibration["valid"] else f"not valid: {calibration['why']}"
    ident = calibration.get("calibration_id")
    name = f"calibration {ident}" if ident is not None else "no calibration"
    knee = (f", knee at {calibration['knee_in_flight']} in flight"
            if calibration.get("knee_in_flight") else "")
    return f"{which}: {name}, {_ops(calibration)} ops/s{knee} ({state})"


def capacity_lines(data: dict[str, Any] | None) -> list[str]:
    """The report's lines: "capacity X -> Y ops/s (+Z%)" and each calibration's validity;
    nothing for a run that measured no capacity."""
    if not data:
        return []
    before, after = data.get("before"), data.get("after")
    gain = (f"({data['change'] * 100:+.1f}%; {ONE_TRIAL})" if data.get("change") is not None
            else f"(change n/a: {data.get('reason')})")
    return [f"capacity {_ops(before)} -> {_ops(after)} ops/s {gain}",
            _one("before", before), _one("after", after)]


def capacity_verdict(capacities: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """Over the trials of one scale experiment (each run's `capacity` figures): the
    capacities before and after, the spread of the changes, and the verdict on the change
    ("different", "no meaningful difference", "cannot tell"; None from a single trial), by
    the signed-rank test and the Hodges-Lehmann interval of the module docstring. Only
    trials whose change was measured count; None if no run measured a capacity."""
    if not any(capacities):
        return None
    valid = [c for c in capacities if c and c.get("change") is not None]
    before = spread([c["before"]["capacity_ops"] for c in valid])
    after = spread([c["after"]["capacity_ops"] for c in valid])
    changes = spread([c["change"] for c in valid])
    said, p, centre, low, high = None, None, None, None, None
    if changes is not None and changes.n >= 2:
        d = [c["change"] for c in valid]
        p = signed_rank_test(d)
        centre, low, high = paired_shift(d)
        if p <= ALPHA:
            said = "different"
        elif low is not None and -MARGIN <= low and high <= MARGIN:
            said = "no meaningful difference"
        else:
            said = "cannot tell"
    return {"trials": len(valid), "left_out": len(capacities) - len(valid),
            "before": before.as_dict() if before else None,
            "after": after.as_dict() if after else None,
            "change": changes.as_dict() if changes else None, "verdict": said, "p": p,
            "centre": centre, "low": low, "high": high,
            "text": _verdict_text(len(valid), before, after, changes, said, (p, low, high))}


def _verdict_text(n: int, before: Spread | None, after: Spread | None,
                  changes: Spread | None, said: str | None,
                  test: tuple[float | None, float | None, float | None]) -> str:
    if before is None or after is None or changes is None:
        return "capacity change n/a: no trial measured both calibrations validly"

    def ops(s: Spread) -> str:
        return f"{s.median:g} ops/s" if s.n == 1 else \
            f"{s.median:g} ops/s [{s.low:g} to {s.high:g}]"
    text = (f"capacity before {ops(before)}, after {ops(after)}, change "
            f"{_percent(changes)} over {n} trial{'s' if n != 1 else ''}: ")
    p, low, high = test
    interval = (f", 95% interval {low * 100:+.1f}% to {high * 100:+.1f}%"
                if low is not None else "")
    if said == "different":
        return text + f"different (signed-rank test p {p:.3g}{interval})"
    if said == "no meaningful difference":
        return text + (f"no meaningful difference (p {p:.3g}{interval}, inside "
                       f"+-{MARGIN:.0%})")
    if said == "cannot tell":
        need = (f"the exact signed-rank test cannot reach {ALPHA:.0%} under "
                f"{PAIRED_TRIALS} trials" if n < PAIRED_TRIALS else
                f"the interval is wider than +-{MARGIN:.0%}")
        return text + f"cannot tell (p {p:.3g}{interval}; {need})"
    return text + "no verdict from a single trial"


def _percent(s: Spread) -> str:
    text = f"{s.median * 100:+.1f}%"
    if s.n > 1:
        text += f" [{s.low * 100:+.1f}% to {s.high * 100:+.1f}%]"
    return text


def movement_done_s(states: list[tuple[float, dict[str, Any]]], since: float,
                    hold_s: float = 10.0, min_samples: int = 3) -> float | None:
    """Seconds from `since` until the data movement was over and stayed over for hold_s
    (on at least min_samples samples): the cluster fully redundant (Ceph: HEALTH_OK, every PG
    active+clean, nothing degraded; Swift: dispersion 100%) and no object misplaced.
    `states` are the run's cluster samples (ts, state) in time order; None if it never was."""
    start = None
    count = 0
    for ts, state in states:
        if ts < since:
            continue
        done = bool(state.get("fully_redundant")) and not state.get("misplaced_objects")
        if not done:
            start, count = None, 0
            continue
        start = ts if start is None else start
        count += 1
        if count >= min_samples and ts - start >= hold_s:
            return round(start - since, 3)
    return None
