"""Whether a run's baseline held, judged before its fault (DESIGN.md, "Validity"). Pure.

A figure is worth publishing only beside a baseline that really carried the offered load.
Before anything is injected the run measures its baseline window and checks:
- the achieved rate (completed operations per second) is within ±2% of the target (open
  loop; a closed loop has no target and skips this), or within what the operations in
  flight at the window's two edges explain (see Decisions);
- the latency is steady: the 1 s p50 shows no rising trend (service.results.steady: a
  one-sided Mann–Kendall test at 1%, and a rise of at least 100 ms and half the median over
  the window); a queue building up makes it grow second after second;
- every operation of the open loop started on time: at most 1% of them more than 200 ms
  late, none more than 1 s late (absolute bounds, over every operation of the window);
- the cluster did not stall: at most 1% of the operations (two in a short window) were
  served later than 1 s after their intended start, the deficit's bound of "on time"
  (service.results.deficit), or ten times the window's median latency when that is more
  (a workload of large objects is slow, not stalled). A stall that ended before the window
  was judged leaves the achieved rate whole, as the late operations complete in one burst,
  but not their latency; and a baseline that already has a deficit would lend it to the
  fault's;
- the load is within the cluster's knee, for a rate asked past a calibrated capacity
  ("150%"): at most 10% of the operations (plus three standard deviations and two) took
  longer than the p99 bound that calibration's knee kept to (p99_factor times its lightest
  stage's p99); a rate the cluster carries only with a long queue is past its capacity,
  however steady (the control passes the bound only then: at or below the capacity, a
  cluster slower than when calibrated is not an overload);
- no operation failed;
- the load generator's own CPU is under a bound, so the generator is not the bottleneck;
- every cluster sample of the window shows a healthy cluster: nothing down, no data below
  its replica count, no fault the cluster reports, no HEALTH_ERR, and no health warning
  but the few of EXPECTED_CHECKS (Swift: no partition left on a handoff).

A window that is not steady (the rate missed, a rising trend, late starts) is measured
again over a window of the same length that slides on by half of it, up to twice the
baseline in all (`extension_s`): a warm-up transient passes, a queue does not. The verdict
is the last window's; the run records how long its baseline really was and why it was
extended.

False alarms: on stationary simulated seconds the trend rule rose on 0 of 2,000 windows
(Mann–Kendall alone: 24 of 2,000, its nominal 1%; see service.results.steady), and a run
is invalid for it only when every window of its extension rose. The rate on the real
labs is bench/p8_baseline.py's. Seconds that are not independent (latency in bursts) make
the trend test rise more often; the rule is kept, and a queue called on seconds whose lag-1
autocorrelation is AUTOCORRELATED or more says how often such seconds read as rising with no
queue (steady.false_alarm_rate), so that the operator knows what the word is worth.

Decisions: a short window counts whole operations, so the ±2% is widened to two operations
over the window when that is more (one operation may move across each edge of it). A window
counts the operations that completed in it, not those that started in it: the two differ by
the change in the number in flight between its edges. With every start on schedule and
latencies independent, the number in flight at an instant is a sum of Bernoulli counts
whose variance is at most its mean, rate × mean latency (Little's law), so the difference
of the two edges has a variance of at most twice that; the ±2% is widened to `edge_sigmas`
(3) standard deviations of it when that is more. On the Swift lab at 20 ops/s with a
300 ms mean latency that is ±10 operations of 200: CI's run 273 missed by 12, then by -8
in the next window, with every start on time and no trend (p = 0.08), and was judged
"could not sustain". A cluster that really cannot carry the rate builds a queue: its
deficit grows with the window, past any edge allowance, and its latency trend and stalls are
judged besides. tests/unit/test_baseline.py measures the false alarms of the rate rule on
simulated open loops (0.3% nominal at 3 sigma). A window
of fewer than 10 seconds with operations is too short for the trend test, which then does
not run and the verdict says so (`measured.trend.why`); a window longer than 120 s is
tested on 120 consecutive stretches (each one's p50), as the test costs n² pairs; the
generator's CPU is the whole run process's, librados' or the HTTP client's threads
included, in cores; the lag bounds are absolute, not a share of the latency measured (that
was circular: a slow cluster excused a slow generator); on the 2-core lab with monitoring
up the generator was seen 128 ms late at p99. The knee's share is 10%, not the knee's own
1%: an open loop is burstier than the closed loop that calibrated it, and on the Ceph lab
runs at half the capacity had 0 to 4.2% of their operations past the bound (20 runs of
4 KiB, 40 of 1 MiB), runs at twice the capacity 45 to 80% (bench P8). It is not applied at
or below the capacity: on the Swift lab, 6 of 20 steady runs at 50% had up to 72% past it
(bench/p8_knee_replay.py).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from hdrh.histogram import HdrHistogram

from loadgen.lag import EDGES_MS, LagCounts
from loadgen.samples import merge_histograms

from . import steady
from .analysis import Second
from .deficit import ON_TIME_S, on_time_ops

# the load generator's process past this many cores may be the bottleneck: its Python
# threads share one GIL, so about one core is all it can use for them
GENERATOR_CPU_CORES = 0.8

# Ceph health warnings that say nothing about the cluster's state now, so a baseline may be
# measured beside them: a crash report of the past (Faultline's own kill faults leave them;
# Ceph keeps them two weeks), and two notices about settings (the lab turns both off). Any
# other warning (slow ops, slow pings, a full OSD, a mon low on space, a PG not clean, ...)
# counts as unhealthy and is named.
EXPECTED_CHECKS = frozenset({"RECENT_CRASH", "RECENT_MGR_MODULE_CRASH",
                             "POOL_NO_REDUNDANCY", "AUTH_INSECURE_GLOBAL_ID_RECLAIM_ALLOWED"})

AUTOCORRELATED = 0.3  # lag-1 from which Mann–Kendall's false alarms pass 2.5% (steady)
TREND_POINTS = 120  # a longer window is tested on this many stretches

# the reasons that waiting may clear (a warm-up transient): the window is extended for them
UNSTEADY = frozenset({"rate", "queue", "lag", "slow", "knee"})


@dataclass(frozen=True)
class BaselineLimits:
    rate_tolerance: float = 0.02
    edge_sigmas: float = 3.0  # of the in-flight difference at the window's edges
    lag_p99_ms: float = 200.0  # at most 1% of operations later than this
    lag_max_ms: float = 1000.0  # no operation later than this
    slow_share: float = 0.01  # served later than the stall bound, at most
    slow_p50_times: float = 10.0  # the stall bound: this many times the p50, or ON_TIME_S
    trend_alpha: float = steady.ALPHA
    trend_rise_floor_ms: float = steady.RISE_FLOOR_MS
    trend_rise_share: float = steady.RISE_SHARE
    trend_min_seconds: int = steady.MIN_SECONDS
    generator_cpu_cores: float = GENERATOR_CPU_CORES
    extend_to: float = 2.0  # times the baseline, at most
    extend_step: float = 0.5  # of the baseline, each time
    # slower than the calibrated knee's p99 bound, at most (a rate resolved from a
    # calibration; see Decisions)
    knee_share: float = 0.10
    knee_sigmas: float = 3.0


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
    p50_series_ms: tuple[float, ...] = ()  # the 1 s p50s (or of TREND_POINTS stretches)
    lag_ops: int | None = None  # operations whose lag was measured
    lag_late: dict[str, int] = field(default_factory=dict)  # later than each bound
    lag_max_ms: float | None = None  # upper edge of the latest operation's lag bucket
    # served later than slow_bound_ms; None when some latencies were not recorded
    slow_ops: int | None = None
    slow_bound_ms: float | None = None
    mean_ms: float | None = None  # the whole window's mean latency
    # the p99 bound of the knee the rate was resolved from (None: an absolute rate), and the
    # operations slower than it
    knee_bound_ms: float | None = None
    over_knee_ops: int | None = None

    @property
    def achieved_rate(self) -> float:
        return (self.ops + self.errors) / self.seconds if self.seconds > 0 else 0.0


def window_of(seconds: list[Second], start: float, end: float, target_rate: float | None,
              lags: LagCounts | list[float] | None, cpu_cores: float | None,
              cluster_problems: list[str],
              limits: BaselineLimits | None = None,
              knee_bound_ms: float | None = None) -> BaselineWindow:
    """The whole seconds of load in [start, end), with what the run measured beside them
    (`lags`: every operation's schedule lag in the window, or a list of lags in seconds;
    `knee_bound_ms`: the p99 bound of the calibration the rate came from)."""
    limits = limits or BaselineLimits()
    inside = sorted((s for s in seconds if start <= s.ts and s.ts + 1 <= end + 1e-6),
                    key=lambda s: s.ts)
    half = len(inside) // 2
    errors_by_class: dict[str, int] = {}
    for second in inside:
        for name, count in second.errors_by_class.items():
            errors_by_class[name] = errors_by_class.get(name, 0) + count
    if isinstance(lags, list):
        lags = LagCounts.of(lags)
    whole = merge_histograms([h for s in inside for h in s.histograms if h])  # merged once
    return BaselineWindow(
        seconds=float(len(inside)), target_rate=target_rate,
        ops=sum(s.ops for s in inside), errors=sum(s.errors for s in inside),
        errors_by_class=errors_by_class,
        first_half_ms=_percentiles(inside[:half]), second_half_ms=_percentiles(inside[half:]),
        p99_ms=_quantile_ms(whole, 99),
        mean_ms=whole.get_mean_value() / 1000 if whole.get_total_count() else None,
        lag_p99_ms=_finite(lags.quantile_ms(0.99)) if lags and lags.ops else None,
        generator_cpu_cores=cpu_cores, cluster_problems=list(cluster_problems),
        half_ops=(sum(s.ops for s in inside[:half]), sum(s.ops for s in inside[half:])),
        p50_series_ms=_p50_series(inside),
        lag_ops=lags.ops if lags is not None else None,
        lag_late=({f"{bound:g} ms": lags.later_than(bound)
                   for bound in (limits.lag_p99_ms, limits.lag_max_ms)} if lags else {}),
        lag_max_ms=_finite(lags.quantile_ms(1.0)) if lags and lags.ops else None,
        knee_bound_ms=knee_bound_ms,
        over_knee_ops=(whole.get_total_count() - on_time_ops(whole, knee_bound_ms / 1000)
                       if knee_bound_ms is not None and whole.get_total_count() else None),
        **_slow(whole, sum(s.ops for s in inside), limits))


def judge(window: BaselineWindow, limits: BaselineLimits = BaselineLimits()) -> dict[str, Any]:
    """The verdict: `valid`, `reasons` in plain words (empty when valid), a `hint`, whether
    only steadiness failed (`unsteady`: waiting may clear it), and what was measured and
    against which limits."""
    failed: list[tuple[str, str]] = []  # (kind, reason)
    hint = None
    if window.seconds <= 0:
        failed.append(("empty", "no whole second of load was recorded in the baseline window"))
    target = window.target_rate
    saturated = False
    if target and window.seconds > 0:
        expected = target * window.seconds
        allowed = max(limits.rate_tolerance * expected, 2,  # operations
                      edge_allowance(target, window.mean_ms, limits))
        achieved = window.achieved_rate
        if abs(window.ops + window.errors - expected) > allowed + 1e-9:
            saturated = achieved < target
            growth = _rose(window)
            missed = "cluster could not sustain" if saturated else "load missed"
            failed.append(("rate", f"the {missed} {_num(target)} ops/s: {_num(achieved)} "
                           "achieved" + (f", {growth}" if growth else "")))
    trend = steady.rising(list(window.p50_series_ms), limits.trend_alpha,
                          limits.trend_rise_floor_ms, limits.trend_rise_share,
                          limits.trend_min_seconds)
    if not failed and trend.rising:
        p = "p < 0.001" if trend.p_value < 0.001 else f"p = {trend.p_value:.3f}"
        failed.append(("queue", "a queue built up during the baseline: "
                       + (_rose(window) or "the 1 s p50 rose")
                       + f" (a trend of +{_ms(trend.rise)} over {trend.seconds} s, {p}"
                       + _false_alarms(trend, limits.trend_alpha) + ")"))
    if window.slow_ops is not None and window.ops:
        allowed_slow = max(limits.slow_share * window.ops, 2)
        if window.slow_ops > allowed_slow + 1e-9:
            failed.append(("slow", f"the cluster stalled: it served {window.slow_ops} of "
                           f"{window.ops} operations later than "
                           f"{_ms(window.slow_bound_ms or 0)} after their intended start "
                           f"(at most {limits.slow_share:.0%} may be; the p99 was "
                           f"{_ms(window.p99_ms or 0)})"))
            hint = hint or ("the cluster stalled or cannot carry this load on time: wait "
                            "until it is quiet, or lower the rate")
    if window.over_knee_ops is not None and window.ops:
        n = window.over_knee_ops
        if n > knee_allowance(window.ops, limits):
            failed.append(("knee", f"the load is past the cluster's knee: {n} of {window.ops} "
                           f"operations took longer than {_ms(window.knee_bound_ms or 0)}, "
                           "the p99 bound of the calibrated capacity (at most "
                           f"{limits.knee_share:.0%} may)"))
            hint = hint or ("the rate is more than the cluster carries within its latency "
                            "bound: lower the share, or calibrate again")
    if window.errors:
        classes = ", ".join(f"{n} {c}" for c, n in sorted(window.errors_by_class.items()))
        failed.append(("errors", f"{window.errors} operations failed during the baseline"
                       + (f" ({classes})" if classes else "")))
    late = _late(window, limits)
    if late:
        failed.append(("lag", f"the load generator started operations late: {late}"))
        hint = hint or "the load generator is the bottleneck: give it more CPU or drivers"
    if (window.generator_cpu_cores is not None
            and window.generator_cpu_cores > limits.generator_cpu_cores):
        failed.append(("cpu", f"the load generator used {window.generator_cpu_cores:.2f} cores "
                       f"(bound {limits.generator_cpu_cores:.2f}): it may be the bottleneck"))
        hint = hint or "spread the load over more drivers (`drivers`), or lower the rate"
    if window.cluster_problems:
        failed.append(("cluster", "the cluster was not healthy during the baseline: "
                       + "; ".join(dict.fromkeys(window.cluster_problems))))
        hint = hint or "wait until the cluster is healthy (`faultline heal`, `ceph -s`)"
    if saturated:
        hint = "lower the rate, or measure the cluster's capacity with a closed loop first"
    reasons = [reason for _, reason in failed]
    return {"valid": not reasons, "reasons": reasons, "hint": hint if reasons else None,
            "unsteady": bool(failed) and all(kind in UNSTEADY for kind, _ in failed),
            "measured": {**asdict(window), "achieved_rate": round(window.achieved_rate, 3),
                         "trend": asdict(trend)},
            "limits": asdict(limits)}


def knee_allowance(ops: int, limits: BaselineLimits) -> float:
    """How many of a window's `ops` operations may take longer than the knee's p99 bound:
    the knee share, three standard deviations of its binomial count, and two."""
    share = limits.knee_share
    return share * ops + limits.knee_sigmas * math.sqrt(ops * share * (1 - share)) + 2


def edge_allowance(target_rate: float, mean_ms: float | None,
                   limits: BaselineLimits = BaselineLimits()) -> float:
    """How many operations the completions of a window may differ from its starts by,
    from the operations in flight at its two edges alone (module docstring, Decisions)."""
    if not mean_ms or target_rate <= 0:
        return 0.0
    return limits.edge_sigmas * math.sqrt(2 * target_rate * mean_ms / 1000)


def extension_s(verdict: dict[str, Any], baseline_s: float, measured_s: float,
                limits: BaselineLimits = BaselineLimits()) -> float | None:
    """How many seconds more to measure before judging again, or None to judge now: only a
    window that is not steady is extended, by `extend_step` of the baseline at a time, up
    to `extend_to` times the baseline in all."""
    if verdict.get("valid") or not verdict.get("unsteady") or baseline_s <= 0:
        return None
    left = limits.extend_to * baseline_s - measured_s
    step = min(limits.extend_step * baseline_s, left)
    return step if step >= 1.0 else None


def summary(verdict: dict[str, Any]) -> str:
    """One line for the run's error and the log."""
    if verdict.get("valid"):
        return "the baseline held"
    text = "; ".join(verdict.get("reasons") or ["the baseline did not hold"])
    return f"{text}; {verdict['hint']}" if verdict.get("hint") else text


def _late(window: BaselineWindow, limits: BaselineLimits) -> str:
    """What was late, in words, or '' when every start was on time."""
    if not window.lag_ops:
        return ""
    over_p99 = window.lag_late.get(f"{limits.lag_p99_ms:g} ms", 0)
    over_max = window.lag_late.get(f"{limits.lag_max_ms:g} ms", 0)
    said = []
    if over_p99 > 0.01 * window.lag_ops:
        said.append(f"{over_p99} of {window.lag_ops} operations "
                    f"({100 * over_p99 / window.lag_ops:.1f}%) more than "
                    f"{_ms(limits.lag_p99_ms)} late (bound 1%)")
    if over_max:
        said.append(f"{over_max} more than {_ms(limits.lag_max_ms)} late (bound none)")
    return ", ".join(said)


def _false_alarms(trend: steady.Trend, alpha: float) -> str:
    """How often the test rises with no queue on seconds as autocorrelated as these, when
    they are enough that the stated rate would mislead (steady's note)."""
    rho = trend.autocorrelation
    if rho is None or rho < AUTOCORRELATED:
        return ""
    rate = steady.false_alarm_rate(trend.seconds, rho, alpha)
    return (f"; its seconds were autocorrelated ({rho:.2f}), where a steady baseline reads "
            f"as rising {rate:.0%} of the time")


def _rose(window: BaselineWindow, index: int = 0) -> str:
    """'p50 rose from 16 ms to 2.8 s' when it did (index 0: p50, 1: p99)."""
    name = ("p50", "p99")[index]
    first, second = window.first_half_ms[index], window.second_half_ms[index]
    if first is None or second is None or second <= first * 1.5:
        return ""
    return f"{name} rose from {_ms(first)} to {_ms(second)}"


def _p50_series(inside: list[Second]) -> tuple[float, ...]:
    """The p50 of each second with operations; past TREND_POINTS seconds, of as many
    consecutive stretches of whole seconds."""
    size = -(-len(inside) // TREND_POINTS) if inside else 1
    series = []
    for i in range(0, len(inside), size):
        p50 = _percentiles(inside[i:i + size])[0]
        if p50 is not None:
            series.append(p50)
    return tuple(series)


def _slow(merged: HdrHistogram, ops: int, limits: BaselineLimits) -> dict[str, Any]:
    """The stall bound of the window's merged latencies and how many of its `ops`
    operations were served later; none when some have no recorded latency (which of those
    were late is not known)."""
    total = merged.get_total_count()
    if not total or total < ops:
        return {}
    bound_s = max(ON_TIME_S, limits.slow_p50_times * merged.get_value_at_percentile(50) / 1e6)
    return {"slow_ops": total - on_time_ops(merged, bound_s),
            "slow_bound_ms": round(bound_s * 1000, 1)}


def _finite(lag_ms: float | None) -> float | None:
    """A lag past the last bucket (inf) as that bucket's edge: the verdict is stored as JSON,
    which has no infinity (a 1 MiB run at twice the capacity failed to store "Infinity"),
    and the late counts say how many were past each bound anyway."""
    return float(EDGES_MS[-1]) if lag_ms is not None and math.isinf(lag_ms) else lag_ms


def _quantile_ms(merged: HdrHistogram, percentile: float) -> float | None:
    return merged.get_value_at_percentile(percentile) / 1000 if merged.get_total_count() \
        else None


def _percentiles(seconds: list[Second]) -> tuple[float | None, float | None]:
    histograms = [h for s in seconds for h in s.histograms if h]
    if not histograms:
        return None, None
    merged = merge_histograms(histograms)
    if merged.get_total_count() == 0:
        return None, None
    return (merged.get_value_at_percentile(50) / 1000,
            merged.get_value_at_percentile(99) / 1000)


def _num(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def _ms(value: float) -> str:
    return f"{value / 1000:.1f} s" if value >= 1000 else f"{value:.0f} ms"


def cluster_problem(health: str, state: dict[str, Any],
                    expected: frozenset[str] = EXPECTED_CHECKS) -> str | None:
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
    if health == "HEALTH_WARN":
        unexpected = [c for c in state.get("checks") or [] if c not in expected]
        if unexpected or not state.get("checks"):
            return ("the cluster reported HEALTH_WARN: "
                    + (", ".join(unexpected) if unexpected else "no check named")
                    + f" ({summary})")
    if state.get("handoff_partitions"):  # Swift's warning: data not where the ring wants it
        return (f"{state['handoff_partitions']} partitions were on handoff nodes, not where "
                f"the ring wants them ({summary})")
    return None


def reasons_when_invalid(reasons: dict[str, str]) -> dict[str, str]:
    """A run stopped by its baseline injected nothing: its n/a reasons say why."""
    return {key: (f"{why}: the baseline did not hold" if why == "no fault was injected" else why)
            for key, why in reasons.items()}
