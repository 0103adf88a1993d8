"""Whether a series of 1 s figures is steady: a one-sided Mann–Kendall trend test with Sen's
slope for the size of the trend. Pure, standard library only.

The baseline check (service.results.baseline) asks it whether the 1 s p50 latency rose
during the baseline: a queue building up (the cluster cannot sustain the offered rate)
makes the latency of an open loop grow second after second. A trend is called a queue when
both hold:
- Mann–Kendall's one-sided p-value (normal approximation, with the correction for ties and
  the continuity correction) is under ALPHA = 0.01: on a stationary series of independent
  seconds the test rises falsely at most 1% of the time, whatever the distribution of
  the values (it uses only their order; on seconds that are not independent, see below);
- the rise over the window (Sen's slope × the window's span) is at least RISE_FLOOR_MS and
  at least RISE_SHARE of the series' median: a significant but small drift (caches warming,
  10 ms to 14 ms) is no queue.
Fewer than MIN_SECONDS seconds with operations are not tested (`tested` False, and why):
below ten points the normal approximation is off and the test has next to no power.

False-alarm rate, measured (tests/unit/test_steady.py, 2,000 simulated stationary windows
of 20 s: Poisson arrivals at 20 and at 200 ops/s, lognormal latencies with a median of
20 ms and σ 1.0 or 1.3, the 1 s p50 of each second as the series): Mann–Kendall alone
rises on 1.2% of them (24 of 2,000; nominal 1%, binomial sd 0.2%); with the size rule, on
none (0 of 2,000). Power, same simulation: a queue adding 10 ms a second (190 ms over
20 s) is caught in 100 of 100 windows at 20 and at 200 ops/s; one adding 5 ms a second
(95 ms, under the size that counts) in 12 of 100 at 20 ops/s. Seconds of a real cluster
are not independent (a slow second is often followed by another): the measured rate on
the labs is the benchmark's (bench/p8_baseline.py).

Autocorrelated seconds. A cluster whose latency comes in bursts of several seconds (Swift's
updaters, a dispersion report) gives seconds that are not independent, and there the test
rises falsely more often: on stationary AR(1) series of 20 points, 2.8% at a lag-1
autocorrelation of 0.3, 6.5% at 0.5 and 11.9% at 0.7 (the Swift lab's baselines at half
its capacity had a median of 0.55: bench/p8_autocorrelation.py). The rule is not widened
for it: corrections of the variance (Hamed–Rao's, or one with a cautious estimate of the
autocorrelation) were simulated at 20 points, and those that bring the rate near 1% also
stop seeing a step, however large, in such seconds (a rank test cannot tell a step from a
burst, and the correction pays for the burst). Measured on seeded AR(1) series: Hamed–Rao's
correction (pymannkendall 1.4.3) still rose on 6.2% at 0.5 and 10.5% at 0.7; one whose
estimate was raised by its small-sample bias and one standard error rose on 1.9% and 2.7%,
but found a step of 8 standard deviations halfway through in 50 of 200 series at 0.5.
A baseline that rose is better called
invalid and rerun than let through. Instead each trend carries its series' autocorrelation
(`autocorrelation`, of what is left after its Sen line or one step), and
`false_alarm_rate` gives, by a seeded simulation of stationary AR(1) series of the same
length, how often the test would rise on such seconds with no queue at all: the check says
it beside a queue it calls on such seconds (service.results.baseline.AUTOCORRELATED).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from statistics import fmean, median

ALPHA = 0.01
MIN_SECONDS = 10
RISE_FLOOR_MS = 100.0
RISE_SHARE = 0.5


@dataclass(frozen=True)
class Trend:
    tested: bool
    seconds: int  # points in the series
    p_value: float | None  # one-sided, for a rise
    rise: float | None  # Sen's slope × span, in the series' unit
    level: float | None  # the series' median
    rising: bool  # a significant rise of the size that counts
    why: str | None = None  # why it was not tested
    autocorrelation: float | None = None  # lag-1 of the residuals (see `residuals`)


def rising(values: list[float], alpha: float = ALPHA, floor: float = RISE_FLOOR_MS,
           share: float = RISE_SHARE, min_points: int = MIN_SECONDS) -> Trend:
    """Whether `values` (one per second, in order) rise: see the module's rule."""
    n = len(values)
    if n < min_points:
        return Trend(False, n, None, None, median(values) if values else None, False,
                     f"{n} seconds with operations: the trend test needs {min_points}")
    p = mann_kendall_p(values)
    slope = sen_slope(values)
    rise = slope * (n - 1)
    level = median(values)
    return Trend(True, n, p, rise, level,
                 p < alpha and rise >= floor and rise >= share * level,
                 autocorrelation=round(lag1(residuals(values, slope)), 2))


def mann_kendall_p(values: list[float]) -> float:
    """One-sided p-value of Mann–Kendall's test for an increasing trend."""
    n = len(values)
    s = sum((values[j] > values[i]) - (values[j] < values[i])
            for i in range(n) for j in range(i + 1, n))
    ties: dict[float, int] = {}
    for v in values:
        ties[v] = ties.get(v, 0) + 1
    var = (n * (n - 1) * (2 * n + 5)
           - sum(t * (t - 1) * (2 * t + 5) for t in ties.values())) / 18
    if var <= 0:
        return 1.0  # every value the same
    z = (s - 1) / math.sqrt(var) if s > 0 else (s + 1) / math.sqrt(var) if s < 0 else 0.0
    return 0.5 * math.erfc(z / math.sqrt(2))


def sen_slope(values: list[float]) -> float:
    """The median of the slopes between every pair of points (per step)."""
    slopes = [(values[j] - values[i]) / (j - i)
              for i in range(len(values)) for j in range(i + 1, len(values))]
    return median(slopes) if slopes else 0.0


def lag1(values: list[float]) -> float:
    """The lag-1 autocorrelation of a series (0 for a constant one)."""
    mean = fmean(values)
    deviations = [v - mean for v in values]
    spread = sum(d * d for d in deviations)
    return (sum(a * b for a, b in zip(deviations, deviations[1:], strict=False)) / spread
            if spread else 0.0)


def residuals(values: list[float], slope: float) -> list[float]:
    """What is left of a series once its shape is taken out: its Sen line, or one step
    between two levels, whichever leaves less. A jump that stayed, left in, would read as
    autocorrelation."""
    mean = fmean(v - slope * i for i, v in enumerate(values))
    best = [v - slope * i - mean for i, v in enumerate(values)]
    least = sum(r * r for r in best)
    for k in range(2, len(values) - 1):
        before, after = fmean(values[:k]), fmean(values[k:])
        step = [v - before for v in values[:k]] + [v - after for v in values[k:]]
        spread = sum(r * r for r in step)
        if spread < least:
            best, least = step, spread
    return best


def false_alarm_rate(points: int, rho: float, alpha: float = ALPHA, series: int = 500,
                     seed: int = 26) -> float:
    """How often Mann–Kendall at `alpha` rises on stationary AR(1) series of `points` points
    and lag-1 autocorrelation `rho` (clipped to [0, 0.95]): a seeded simulation, the same
    answer every time. 500 series: about ±1 point at 5%."""
    rng = random.Random(seed)
    rho = min(max(rho, 0.0), 0.95)
    return sum(mann_kendall_p(ar1(rng, rho, points)) < alpha for _ in range(series)) / series


def ar1(rng: random.Random, rho: float, points: int) -> list[float]:
    """A stationary AR(1) series of unit variance and lag-1 autocorrelation rho."""
    scale = math.sqrt(1 - rho * rho)
    value, series = rng.gauss(0, 1), []
    for _ in range(points):
        series.append(value)
        value = rho * value + scale * rng.gauss(0, 1)
    return series
