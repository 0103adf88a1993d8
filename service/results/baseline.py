"""Whether a run's baseline held, judged before its fault (DESIGN.md, "Validity"). Pure.

A figure is worth publishing only beside a baseline that really carried the offered load.
Before anything is injected the run measures its baseline window and checks:
- the achieved rate (completed operations per second) is within ±2% of the target (open
  loop; a closed loop has no target and skips this);
- the open loop's schedule lag p99 is under a bound: the generator started each operation
  on time, or late by little beside the latency it measures;
- no operation failed;
- the second half's p99 is within a factor of the first half's (no queue building up);
- the load generator's own CPU is under a bound, so the generator is not the bottleneck;
- every cluster sample of the window shows a healthy cluster (nothing down, no data below
  its replica count, no fault the cluster reports, no HEALTH_ERR).

Decisions: a short window counts whole operations, so the ±2% is widened to two operations
over the window when that is more (one operation may move across each edge of it); a p99
"grows" only when it is more than 4 times the first half's and more than 100 ms above it,
since a few dozen operations make a noisy p99; the generator's CPU is the whole run
process's, librados' or the HTTP client's threads included, in cores; the schedule lag's
bound is 100 ms or half the window's p99 latency, whichever is more (latency counts from the
intended start, so a late start adds to it; on the 2-core lab with monitoring up, the
generator thread was seen 128 ms late at p99 beside a Swift p99 of 400 ms).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from loadgen.samples import merge_histograms

from .analysis import Second

# the load generator's process past this many cores may be the bottleneck: its Python
# threads share one GIL, so about one core is all it can use for them
GENERATOR_CPU_CORES = 0.8


@dataclass(frozen=True)
class BaselineLimits:
    rate_tolerance: float = 0.02
    lag_p99_ms: float = 100.0
    lag_share_of_p99: float = 0.5
    p99_growth: float = 4.0
    p99_growth_floor_ms: float = 100.0
    # a half with fewer operations has a p99 that is its slowest one or two: one stray slow
    # operation is not a queue, so there the p50 must have grown too, by p50_growth
    p99_min_ops: int = 100
    p50_growth: float = 2.0
    generator_cpu_cores: float = GENERATOR_CPU_CORES


@dataclass(frozen=True)
class BaselineWindow:
    """What was measured over the baseline window."""

    seconds: float  # the window's length
    target_rate: float | None  # ops/s of an open loop; None for a closed loop
    ops: int  # completed without error
    errors: int
    errors_by_class: dict[str, int]
    first_half_ms: tuple[float | None, float | None]  # p50, p99
    second_half_ms: tuple[float | None, float | None]
    p99_ms: float | None  # the whole window's
    lag_p99_ms: float | None  # None: not measured here (closed loop, drivers elsewhere)
    generator_cpu_cores: float | None
    cluster_problems: list[str] = field(default_factory=list)
    half_ops: tuple[int, int] = (0, 0)  # operations completed in each half

    @property
    def achieved_rate(self) -> float:
        return (self.ops + self.errors) / self.seconds if self.seconds > 0 else 0.0


def window_of(seconds: list[Second], start: float, end: float, target_rate: float | None,
              lags_s: list[float] | None, cpu_cores: float | None,
              cluster_problems: list[str]) -> BaselineWindow:
    """The whole seconds of load in [start, end), with what the run measured beside them."""
    inside = sorted((s for s in seconds if start <= s.ts and s.ts + 1 <= end + 1e-6),
                    key=lambda s: s.ts)
    half = len(inside) // 2
    errors_by_class: dict[str, int] = {}
    for second in inside:
        for name, count in second.errors_by_class.items():
            errors_by_class[name] = errors_by_class.get(name, 0) + count
    return BaselineWindow(
        seconds=float(len(inside)), target_rate=target_rate,
        ops=sum(s.ops for s in inside), errors=sum(s.errors for s in inside),
        errors_by_class=errors_by_class,
        first_half_ms=_percentiles(inside[:half]), second_half_ms=_percentiles(inside[half:]),
        p99_ms=_percentiles(inside)[1],
        lag_p99_ms=(_p99(lags_s) * 1000 if lags_s else None),
        generator_cpu_cores=cpu_cores, cluster_problems=list(cluster_problems),
        half_ops=(sum(s.ops for s in inside[:half]), sum(s.ops for s in inside[half:])))


def judge(window: BaselineWindow, limits: BaselineLimits = BaselineLimits()) -> dict[str, Any]:
    """The verdict: `valid`, `reasons` in plain words (empty when valid), a `hint`, and what
    was measured and against which limits."""
    reasons: list[str] = []
    hint = None
    if window.seconds <= 0:
        reasons.append("no whole second of load was recorded in the baseline window")
    target = window.target_rate
    saturated = False
    if target and window.seconds > 0:
        expected = target * window.seconds
        allowed = max(limits.rate_tolerance * expected, 2)  # operations
        achieved = window.achieved_rate
        if abs(window.ops + window.errors - expected) > allowed + 1e-9:
            saturated = achieved < target
            growth = _rose(window)
            reasons.append(f"the {'cluster could not sustain' if saturated else 'load missed'} "
                           f"{_num(target)} ops/s: {_num(achieved)} achieved"
                           + (f", {growth}" if growth else ""))
    if not reasons and _grew(window, limits):
        reasons.append(f"a queue built up during the baseline: {_rose(window, 1)}")
    if window.errors:
        classes = ", ".join(f"{n} {c}" for c, n in sorted(window.errors_by_class.items()))
        reasons.append(f"{window.errors} operations failed during the baseline"
                       + (f" ({classes})" if classes else ""))
    lag_bound = max(limits.lag_p99_ms, limits.lag_share_of_p99 * (window.p99_ms or 0))
    if window.lag_p99_ms is not None and window.lag_p99_ms > lag_bound:
        reasons.append(f"the load generator started operations late: schedule lag p99 "
                       f"{_ms(window.lag_p99_ms)} (bound {_ms(lag_bound)})")
        hint = hint or "the load generator is the bottleneck: give it more CPU or drivers"
    if (window.generator_cpu_cores is not None
            and window.generator_cpu_cores > limits.generator_cpu_cores):
        reasons.append(f"the load generator used {window.generator_cpu_cores:.2f} cores "
                       f"(bound {limits.generator_cpu_cores:.2f}): it may be the bottleneck")
        hint = hint or "spread the load over more drivers (`drivers`), or lower the rate"
    if window.cluster_problems:
        reasons.append("the cluster was not healthy during the baseline: "
                       + "; ".join(dict.fromkeys(window.cluster_problems)))
        hint = hint or "wait until the cluster is healthy (`faultline heal`, `ceph -s`)"
    if saturated:
        hint = "lower the rate, or measure the cluster's capacity with a closed loop first"
    return {"valid": not reasons, "reasons": reasons, "hint": hint if reasons else None,
            "measured": {**asdict(window), "achieved_rate": round(window.achieved_rate, 3)},
            "limits": asdict(limits)}


def summary(verdict: dict[str, Any]) -> str:
    """One line for the run's error and the log."""
    if verdict.get("valid"):
        return "the baseline held"
    text = "; ".join(verdict.get("reasons") or ["the baseline did not hold"])
    return f"{text}; {verdict['hint']}" if verdict.get("hint") else text


def _grew(window: BaselineWindow, limits: BaselineLimits) -> bool:
    first, second = window.first_half_ms[1], window.second_half_ms[1]
    if not (first is not None and second is not None
            and second > limits.p99_growth * first
            and second - first > limits.p99_growth_floor_ms):
        return False
    if min(window.half_ops) >= limits.p99_min_ops:
        return True
    first_p50, second_p50 = window.first_half_ms[0], window.second_half_ms[0]
    return (first_p50 is not None and second_p50 is not None
            and second_p50 > limits.p50_growth * first_p50)


def _rose(window: BaselineWindow, index: int = 0) -> str:
    """'p50 rose from 16 ms to 2.8 s' when it did (index 0: p50, 1: p99)."""
    name = ("p50", "p99")[index]
    first, second = window.first_half_ms[index], window.second_half_ms[index]
    if first is None or second is None or second <= first * 1.5:
        return ""
    return f"{name} rose from {_ms(first)} to {_ms(second)}"


def _percentiles(seconds: list[Second]) -> tuple[float | None, float | None]:
    histograms = [h for s in seconds for h in s.histograms if h]
    if not histograms:
        return None, None
    merged = merge_histograms(histograms)
    if merged.get_total_count() == 0:
        return None, None
    return (merged.get_value_at_percentile(50) / 1000,
            merged.get_value_at_percentile(99) / 1000)


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(0.99 * len(ordered) + 0.5) - 1))]


def _num(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def _ms(value: float) -> str:
    return f"{value / 1000:.1f} s" if value >= 1000 else f"{value:.0f} ms"


def cluster_problem(health: str, state: dict[str, Any]) -> str | None:
    """What is wrong with the cluster in one sample (as service.runs.sampler takes them, of
    either system), or None when it is healthy enough to measure a baseline against."""
    if "error" in state:
        return f"the cluster could not be sampled ({state['error']})"
    summary = state.get("summary") or health
    if (state.get("down") or 0) > 0 or state.get("fault_seen"):
        return f"a daemon or device was down ({summary})"
    if state.get("at_risk"):
        return f"some data was below its replica count ({summary})"
    if health == "HEALTH_ERR":
        return f"the cluster reported HEALTH_ERR ({summary})"
    return None
