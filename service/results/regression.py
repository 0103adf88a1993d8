"""Regression detection for a scheduled series: a new run's figures against its history. Pure.

`judge(figures, history, policy)` takes the new run's figures (as `report_dict` or
`Run.figures` give them, DESIGN.md "What a run measures") and the figures of the
earlier runs of the same series, oldest first, and returns a `Verdict`.

The method, per figure (every judged figure is worse when larger), is the rank method of
the comparisons (docs/statistics.md), for one new run against a series of single runs:
- the history is the last `policy.window` runs (40); a run that did not measure the
  figure (null) is skipped;
- the new value's one-sided exact rank test against the m history values: under "nothing
  changed" every order of the m + 1 runs is equally likely, so p = (1 + the history values
  at or above it) / (m + 1); it is worse only when p <= `policy.alpha` (5%). So a figure
  is judged only from the m that can reach it (19 values at 5%), and with a full window of
  40, a value may lie below one earlier night and still be worse: one wild night no longer
  sets the limit;
- and only when it is also above median + max(min_increase, min_ratio x median) (the
  figure's floors): a series whose runs all took 52 s does not flag 53 s. The floors can
  only lower the error rate;
- the limit shown is the smallest value that would be worse;
- a null value where more than half of the window's runs measured the figure (and
  at least the values the test needs) is a regression too: the cluster or the clients
  never got back there (time to client recovery n/a), or the run could not measure
  what its series always measures; the reason quotes the run's own reason for the
  null. A figure the history mostly lacked (Swift's time to full redundancy while
  the fault persists) is not held against a run that lacks it too.
Error rate: when nothing changed, each judged figure is flagged "worse" on at most
`alpha` of the nights (exact, whatever the figure's distribution, if the nights are
exchangeable); a night that judges J figures shows a false "worse" on at most J x alpha of
the nights (Bonferroni; the floors make it rarer).

The floors (`DEFAULT_RULES`), chosen from what varies between identical runs:
- the deficit (the operations not served on time during the fault, in seconds of full
  load; DESIGN.md): 2 s or 20% of the median. It replaced the mean throughput drop, which
  a stall's catch-up burst washes out and which moves with the window's length alone. A
  series whose earlier runs predate the deficit judges it once 19 of them have one;
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

import math
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

INTEGRITY = {"lost_objects": "lost objects", "corrupt_objects": "corrupt objects"}


@dataclass(frozen=True)
class FigureRule:
    """How one figure is judged.

    `key` is the figure's name in the report, `label` how a reason names it, `unit`
    how a reason prints it ("s": seconds, "%": a fraction 0..1 printed as a percentage,
    "": a count). The floors: median + max(min_increase, min_ratio x median), where
    `min_increase` is in the figure's own unit (0.05 is 5 percentage points of a fraction).
    A value is worse only when the rank test says so and it is past these floors.
    """

    key: str
    label: str
    unit: Literal["s", "%", ""]
    min_increase: float
    min_ratio: float = 0.0


DEFAULT_RULES: tuple[FigureRule, ...] = (
    FigureRule("deficit_s", "deficit", "s", 2.0, 0.2),
    FigureRule("errors", "error count", "", 10, 0.5),
    FigureRule("time_to_client_recovery_s", "time to client recovery", "s", 5.0, 0.2),
    FigureRule("time_to_full_redundancy_s", "time to full redundancy", "s", 5.0, 0.2),
    FigureRule("time_to_full_redundancy_after_restore_s",
               "time to full redundancy after the restore", "s", 5.0, 0.2),
)


@dataclass(frozen=True)
class RegressionPolicy:
    """The parameters of `judge`: the history window (runs), each figure's false-alarm rate
    per night (`alpha`), and the figures' rules. A figure is judged once its history holds
    `min_history` values, the fewest whose rank test can reach alpha."""

    window: int = 40
    alpha: float = 0.05
    rules: tuple[FigureRule, ...] = DEFAULT_RULES

    @property
    def min_history(self) -> int:
        """The smallest m with 1 / (m + 1) <= alpha."""
        return max(1, math.ceil(1 / self.alpha - 1e-9) - 1)

    def __post_init__(self) -> None:
        problems = []
        if not 0 < self.alpha < 1:
            problems.append(f"alpha must be between 0 and 1, got {self.alpha}")
        elif self.window < self.min_history:
            problems.append(f"a window of {self.window} runs cannot reach alpha {self.alpha}: "
                            f"it needs at least {self.min_history}")
        for rule in self.rules:
            if rule.min_increase < 0 or rule.min_ratio < 0:
                problems.append(f"the floors of {rule.key} must not be negative, got "
                                f"{rule.min_increase} and {rule.min_ratio}")
        if problems:
            raise ValueError("invalid regression policy: " + "; ".join(problems))

    def error_rate(self, judged: int) -> str:
        """The verdict's error rate in words."""
        if judged == 0:
            return "nothing was judged"
        night = min(1.0, judged * self.alpha)
        return (f"where nothing changed, each judged figure is falsely 'worse' on at most "
                f"{self.alpha:.0%} of the nights (exact rank test against the series); "
                f"this night's {judged} judged figures on at most {night:.0%} (Bonferroni)")


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
    p: float | None = None  # the rank test's p-value ("worse")


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
    error_rate: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-able, for the API and the dashboard."""
        return {"status": self.status, "summary": self.summary,
                "history_runs": self.history_runs, "judged": list(self.judged),
                "error_rate": self.error_rate,
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
            findings += _worse(rule, value, values, len(window), policy.alpha)

    status: Status
    if any(f.kind == "lost" for f in findings):
        status = "failure"
    elif findings:
        status = "regression"
    elif judged:
        status = "ok"
    else:
        status = "insufficient_history"
    judged_by_test = sum(1 for k in judged if k not in INTEGRITY)
    return Verdict(status, tuple(findings), len(window), tuple(judged),
                   _summary(status, findings, len(window), policy),
                   policy.error_rate(judged_by_test))


def limit_of(rule: FigureRule, values: Sequence[float], alpha: float) -> tuple[float, float]:
    """The median of the history values and the limit above which a value is worse: where
    the rank test's p = (1 + values at or above it) / (m + 1) reaches alpha, and past the
    floors (module docstring). Needs at least as many values as alpha asks."""
    median = statistics.median(values)
    may_exceed = math.floor(alpha * (len(values) + 1) + 1e-9) - 1  # values at or above it
    if may_exceed < 0:
        raise ValueError(f"{len(values)} values cannot reach alpha {alpha}")
    rank_limit = sorted(values, reverse=True)[may_exceed]
    floor = max(rule.min_increase, rule.min_ratio * abs(median))
    return median, max(median + floor, rank_limit)


def rank_p(value: float, values: Sequence[float]) -> float:
    """One-sided exact p-value of a new value against m earlier ones (ties count against)."""
    return (1 + sum(1 for v in values if v >= value)) / (len(values) + 1)


def _worse(rule: FigureRule, value: float, values: list[float], runs: int,
           alpha: float) -> list[Finding]:
    median, limit = limit_of(rule, values, alpha)
    if value <= limit:
        return []
    spread = f"[{_fmt(min(values), rule.unit)} to {_fmt(max(values), rule.unit)}]"
    p = rank_p(value, values)
    return [Finding(rule.key, "worse", value, median, limit, len(values),
                    f"{rule.label} {_fmt(value, rule.unit)} is worse than "
                    f"{_runs(len(values), runs)} (median {_fmt(median, rule.unit)} {spread}, "
                    f"limit {_fmt(limit, rule.unit)}; rank test p {p:.3g})", p)]


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
