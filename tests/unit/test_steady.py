"""The trend test of the baseline check (service.results.steady): its false-alarm rate on
stationary series, measured by simulation, and what it must still catch."""

from __future__ import annotations

import math
import random
from functools import cache
from statistics import median

from service.results.steady import (
    ALPHA,
    false_alarm_rate,
    lag1,
    mann_kendall_p,
    residuals,
    rising,
    sen_slope,
)
from service.results.steady import (
    ar1 as steady_ar1,
)

WINDOWS = 500  # per (rate, sigma): 2,000 windows in all
SECONDS = 20


def poisson(rng: random.Random, mean: float) -> int:
    # Knuth's method for small means, the normal approximation for large ones
    if mean > 50:
        return max(0, round(rng.gauss(mean, math.sqrt(mean))))
    limit, k, p = math.exp(-mean), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def p50_series(rng: random.Random, rate: float, sigma: float, median_ms: float = 20.0,
               growth_ms_per_s: float = 0.0, seconds: int = SECONDS) -> list[float]:
    """The 1 s p50 latency of a simulated open loop (Poisson arrivals, lognormal latency),
    plus a queue growing by `growth_ms_per_s` every second when asked."""
    series = []
    for second in range(seconds):
        n = max(1, poisson(rng, rate))
        latencies = [rng.lognormvariate(math.log(median_ms), sigma)
                     + growth_ms_per_s * second for _ in range(n)]
        series.append(median(latencies))
    return series


@cache
def simulated(rates=(20, 200), sigmas=(1.0, 1.3), seed=26):
    rng = random.Random(seed)
    return [p50_series(rng, rate, sigma) for rate in rates for sigma in sigmas
            for _ in range(WINDOWS)]


def test_mann_kendall_alone_rises_falsely_at_most_its_alpha_on_stationary_series():
    series = simulated()
    false = sum(mann_kendall_p(s) < ALPHA for s in series)

    # 1% of 2,000 is 20; binomial sd 4.5: 32 would be 2.7 sd above the bound
    assert false <= 32, f"{false} of {len(series)}"


def test_with_the_size_rule_a_stationary_baseline_is_never_called_a_queue():
    series = simulated()
    false = sum(rising(s).rising for s in series)

    assert false <= len(series) * ALPHA, f"{false} of {len(series)}"


def test_a_queue_that_grows_by_a_tenth_of_a_second_each_second_is_always_caught():
    # 10% over capacity: the backlog grows by 0.1 s of work every second
    rng = random.Random(7)
    caught = sum(rising(p50_series(rng, rate, 1.3, growth_ms_per_s=100)).rising
                 for rate in (20, 200) for _ in range(100))

    assert caught == 200


def test_a_slow_queue_of_10_ms_a_second_is_caught_nearly_always():
    # 190 ms over the 20 s window: just over the 100 ms that counts, at 20 and 200 ops/s
    rng = random.Random(8)
    caught = sum(rising(p50_series(rng, rate, 1.0, growth_ms_per_s=10)).rising
                 for rate in (20, 200) for _ in range(100))

    assert caught >= 190


def test_a_falling_latency_is_no_queue():
    assert not rising([100.0 - 3 * i for i in range(20)]).rising


def test_a_step_up_is_a_rise_and_a_flat_series_is_not():
    assert rising([10.0] * 10 + [900.0] * 10).rising
    flat = rising([10.0] * 20)
    assert flat.tested and flat.p_value == 1.0 and not flat.rising


def test_a_small_significant_drift_is_below_the_size_that_counts():
    trend = rising([10.0 + 0.2 * i for i in range(20)])

    assert trend.p_value < ALPHA and not trend.rising


def test_too_few_seconds_are_not_tested_and_say_why():
    trend = rising([5.0, 5.0, 400.0, 400.0])

    assert not trend.tested and not trend.rising
    assert trend.why == "4 seconds with operations: the trend test needs 10"


def test_sen_slope_is_the_median_pairwise_slope():
    assert sen_slope([0.0, 2.0, 4.0, 6.0]) == 2.0
    assert sen_slope([0.0, 2.0, 4.0, 6.0, 100.0]) == 2.0  # one outlier does not move it


def ar1(rng: random.Random, rho: float, points: int = SECONDS) -> list[float]:
    """Seconds that are not independent (steady.ar1, of the test's length by default)."""
    return steady_ar1(rng, rho, points)


def test_on_autocorrelated_stationary_seconds_the_test_rises_falsely_far_above_its_alpha():
    # why every queue the check calls says the rate for its own seconds (baseline.py)
    rng = random.Random(30)
    false = sum(mann_kendall_p(ar1(rng, 0.7)) < ALPHA for _ in range(1000))

    assert false >= 60, f"{false} of 1,000"  # 11.9% measured on 2,000


def test_the_false_alarm_rate_is_simulated_the_same_every_time_and_grows_with_rho():
    rates = [false_alarm_rate(SECONDS, rho) for rho in (0.0, 0.3, 0.5, 0.7)]

    assert rates == [false_alarm_rate(SECONDS, rho) for rho in (0.0, 0.3, 0.5, 0.7)]
    assert rates[0] <= 0.02 < rates[1] < rates[2] < rates[3]
    assert 0.07 <= rates[3] <= 0.17  # 11.9% on 2,000 series
    assert false_alarm_rate(SECONDS, 2.0) == false_alarm_rate(SECONDS, 0.95)


def test_the_autocorrelation_is_of_what_is_left_after_a_line_or_a_step():
    rng = random.Random(33)
    bursty = ar1(rng, 0.7, 200)

    assert lag1(bursty) > 0.55  # the estimate finds it on a long series
    assert lag1(residuals([10.0] * 10 + [900.0] * 10, 0.0)) == 0.0  # a jump is no burst
    ramp = [2.0 * i + (1 if i % 2 else -1) for i in range(20)]
    assert lag1(residuals(ramp, sen_slope(ramp))) < -0.5  # alternating noise about a line
    assert rising([10.0] * 10 + [900.0] * 10).autocorrelation == 0.0
