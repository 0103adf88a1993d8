"""Regression detection for a scheduled series: a new run's figures against its history. Pure.

`judge(figures, history, policy)` takes the new run's figures (as `report_dict` or
`Run.figures` give them, DESIGN.md "What a run measures") and the figures of the
earlier runs of the same series, oldest first, and returns a `Verdict`.

The method, per figure (every judged figure is worse when larger), is the rule a comparison
of trial groups uses (service.results.spread: a difference counts only when it is larger than
the spread), made robust for a series of single runs:
- the history is the last `policy.window` runs (10); a run that did not measure the
  figure (null) is skipped, and a figure with fewer than `policy.min_history` values (3)
  in the window is not judged;
- a value is worse only when it lies above the history's whole spread (its maximum: a
  single run has no interval of its own, so it is compared as a group of one, min-max
  against min-max) and above median + max(k x 1.4826 x MAD, min_increase, min_ratio x
  median): k (3.0) robust standard deviations (the median absolute deviation, scaled to
  match a normal spread), so a night at the edge of a noisy series does not raise an
  alert, and never closer to the median than the figure's floors, so a series whose
  runs all took 52 s does not flag 53 s. The limit is the larger of the two. One wild
  run in the window widens the spread, as one wild trial does in a comparison: a value
  inside it is within noise, until that run leaves the window;
- a value at or below the limit, or better (smaller) than the median, is not;
- a null value where more than half of the window's runs measured the figure (and
  at least `min_history` of them) is a regression too: the cluster or the clients
  never got back there (time to client recovery n/a), or the run could not measure
  what its series always measures; the reason quotes the run's own reason for the
  null. A figure the history mostly lacked (Swift's time to full redundancy while
  the fault persists) is not held against a run that lacks it too.

The floors (`DEFAULT_RULES`), chosen from what varies between identical runs:
- throughput drop (a fraction): 5 percentage points; the mean over the fault window
  moves by a few points with the window's length alone;
- errors: 10 operations or 50% of the median; at 100 ops/s a stall 0.1 s longer
  fails 10 more operations;
- times to client recovery and to full redundancy (while the fault persists and
  after the restore): 5 s or 20% of the median; the cluster is polled every few
  seconds and "recovered" must hold for 10 s, so a few seconds are sampling noise,
  and long recoveries vary in proportion to their length.
Other figures (worst second, time to detect, data at risk) are not judged by default;
a policy can add a `FigureRule` for them. A key missing from a figures dict counts as
null.

Lost and corrupt objects are judged without history (DESIGN.md: they must be 0): any
acknowledged object missing or read back wrong makes the run a "failure", whatever
the history. A null where the history verified its objects is a regression (the run
could not prove its data intact).

Status: "failure" when an object was lost or corrupt; else "regression" when a
figure is worse or missing; else "ok" when at least one figure was judged against
the history; else "insufficient_history".

Callers pass the history runs they trust: completed runs of the same schedule (same
experiment, cluster and workload); a run that failed before measuring anything would
only dilute the window.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "DEFAULT_RULES", "FigureRule", "Finding", "RegressionPolicy", "Status", "Verdict", "judge",
    "limit_of",
]

Status = Literal["ok", "regression", "failure", "insufficient_history"]
FindingKind = Literal["worse", "missing", "lost"]

ROBUST_SCALE = 1.4826  # MAD x this estimates the standard deviation of a normal spread
INTEGRITY = {"lost_objects": "lost objects", "corrupt_objects": "corrupt objects"}


@dataclass(frozen=True)
class FigureRule:
    """How one figure is judged.

    `key` is the figure's name in the report, `label` how a reason names it, `unit`
    how a reason prints it ("s": seconds, "%": a fraction 0..1 printed as a percentage,
    "": a count). A value is worse only above the history's maximum and above
    median + max(k x 1.4826 x MAD, min_increase, min_ratio x median), where
    `min_increase` is in the figure's own unit (0.05 is 5 percentage points of a fraction).
    """

    key: str
    label: str
    unit: Literal["s", "%", ""]
    min_increase: float
    min_ratio: float = 0.0


DEFAULT_RULES: tuple[FigureRule, ...] = (
    FigureRule("throughput_drop", "throughput drop", "%", 0.05),
    FigureRule("errors", "error count", "", 10, 0.5),
    FigureRule("time_to_client_recovery_s", "time to client recovery", "s", 5.0, 0.2),
    FigureRule("time_to_full_redundancy_s", "time to full redundancy", "s", 5.0, 0.2),
    FigureRule("time_to_full_redundancy_after_restore_s",
               "time to full redundancy after the restore", "s", 5.0, 0.2),
)


@dataclass(frozen=True)
class RegressionPolicy:
    """The parameters of `judge`: history window (runs), the fewest values a figure needs
    in it to be judged, the limit in robust standard deviations, and the figures' rules."""

    window: int = 10
    min_history: int = 3
    k: float = 3.0
    rules: tuple[FigureRule, ...] = DEFAULT_RULES

    def __post_init__(self) -> None:
        problems = []
        if self.window < 1:
            problems.append(f"window must be at least 1, got {self.window}")
        if not 1 <= self.min_history <= self.window:
            problems.append(f"min_history must be between 1 and the window ({self.window}), "
                            f"got {self.min_history}")
        if self.k < 0:
            problems.append(f"k must not be negative, got {self.k}")
        for rule in self.rules:
            if rule.min_increase < 0 or rule.min_ratio < 0:
                problems.append(f"the floors of {rule.key} must not be negative, got "
                                f"{rule.min_increase} and {rule.min_ratio}")
        if problems:
            raise ValueError("invalid regression policy: " + "; ".join(problems))


@dataclass(frozen=True)
class Finding:
    """Why a run failed or regressed on one figure.

    `kind` is "worse" (above the limit), "missing" (null where the history measured it)
    or "lost" (lost or corrupt objects). `median` and `limit` are None where they do not
    apply (no limit for a missing figure, no history for lost objects); `history_values`
    counts the history values the median was taken from.
    """

    figure: str
    kind: FindingKind
    value: float | None
    median: float | None
    limit: float | None
    history_values: int
    reason: str


@dataclass(frozen=True)
class Verdict:
    """A run judged against its series: the status, the findings behind it, how many
    history runs the window held, which figures were compared with the history, and a
    one-line summary for an alert."""

    status: Status
    findings: tuple[Finding, ...] = ()
    history_runs: int = 0
    judged: tuple[str, ...] = ()
    summary: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-able, for the API and the dashboard."""
        return {"status": self.status, "summary": self.summary,
                "history_runs": self.history_runs, "judged": list(self.judged),
                "findings": [vars(f).copy() for f in self.findings]}


def judge(figures: Mapping[str, Any], history: Sequence[Mapping[str, Any]],
          policy: RegressionPolicy | None = None) -> Verdict:
    """Judge a run's figures against the figures of the earlier runs of its series.

    `history` is oldest first; only its last `policy.window` runs count. See the module
    docstring for the method.
    """
    policy = policy or RegressionPolicy()
    window = list(history)[-policy.window:]
    reasons = figures.get("reasons") or {}
    findings: list[Finding] = []
    judged: list[str] = []

    for key in INTEGRITY:
        value = _number(figures, key)
        if value is not None and value > 0:
            findings.append(Finding(key, "lost", value, None, None, 0, _lost(key, value)))
    for key, label in INTEGRITY.items():
        values = _values(window, key)
        if len(values) >= policy.min_history:
            judged.append(key)
            if _number(figures, key) is None:
                findings += _missing(FigureRule(key, label, "", 0.0), values, len(window),
                                     reasons.get(key))

    for rule in policy.rules:
        values = _values(window, rule.key)
        if len(values) < policy.min_history:
            continue
        judged.append(rule.key)
        value = _number(figures, rule.key)
        if value is None:
            findings += _missing(rule, values, len(window), reasons.get(rule.key))
        else:
            findings += _worse(rule, value, values, len(window), policy.k)

    status: Status
    if any(f.kind == "lost" for f in findings):
        status = "failure"
    elif findings:
        status = "regression"
    elif judged:
        status = "ok"
    else:
        status = "insufficient_history"
    return Verdict(status, tuple(findings), len(window), tuple(judged),
                   _summary(status, findings, len(window), policy))


def limit_of(rule: FigureRule, values: Sequence[float], k: float) -> tuple[float, float]:
    """The median of the history values and the limit above which a value is worse: past
    the history's spread and past the robust margin (module docstring)."""
    median = statistics.median(values)
    mad = statistics.median(abs(v - median) for v in values)
    margin = max(k * ROBUST_SCALE * mad, rule.min_increase, rule.min_ratio * abs(median))
    return median, max(median + margin, max(values))


def _worse(rule: FigureRule, value: float, values: list[float], runs: int,
           k: float) -> list[Finding]:
    median, limit = limit_of(rule, values, k)
    if value <= limit:
        return []
    spread = f"[{_fmt(min(values), rule.unit)} to {_fmt(max(values), rule.unit)}]"
    return [Finding(rule.key, "worse", value, median, limit, len(values),
                    f"{rule.label} {_fmt(value, rule.unit)} is worse than "
                    f"{_runs(len(values), runs)} (median {_fmt(median, rule.unit)} {spread}, "
                    f"limit {_fmt(limit, rule.unit)})")]


def _lost(key: str, value: float) -> str:
    n = f"{value:.0f} acknowledged object" + ("" if value == 1 else "s")
    if key == "lost_objects":
        return f"{n} {'was' if value == 1 else 'were'} lost (missing after recovery)"
    return f"{n} read back with the wrong content"


def _missing(rule: FigureRule, values: list[float], runs: int,
             why: str | None) -> list[Finding]:
    if 2 * len(values) <= runs:
        return []
    median = statistics.median(values)
    measured = f"the last {runs} runs" if len(values) == runs \
        else f"{len(values)} of the last {runs} runs"
    because = f" ({why})" if why else ""
    return [Finding(rule.key, "missing", None, median, None, len(values),
                    f"{rule.label}: n/a{because}, but {measured} measured it (median "
                    f"{_fmt(median, rule.unit)})")]


def _summary(status: Status, findings: list[Finding], runs: int,
             policy: RegressionPolicy) -> str:
    if findings:
        return "; ".join(f.reason for f in findings)
    if status == "ok":
        return f"no figure is worse than {_runs(runs, runs)}"
    if runs < policy.min_history:
        return (f"insufficient history: {runs} earlier {'run' if runs == 1 else 'runs'}, a "
                f"figure is judged once {policy.min_history} earlier runs measured it")
    return (f"insufficient history: no figure was measured by {policy.min_history} of the "
            f"last {runs} runs")


def _runs(values: int, runs: int) -> str:
    if values == runs:
        return "the last run" if runs == 1 else f"the last {runs} runs"
    return f"the {values} of the last {runs} runs that measured it"


def _values(window: list[Mapping[str, Any]], key: str) -> list[float]:
    return [v for run in window if (v := _number(run, key)) is not None]


def _number(figures: Mapping[str, Any], key: str) -> float | None:
    value = figures.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"figure {key} is {value!r}, not a number")
    return value


def _fmt(value: float, unit: str) -> str:
    if unit == "%":
        return f"{value * 100:.1f}%"
    if unit == "s":
        return f"{value:.1f} s"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"
