"""The baseline check before a fault (service.results.baseline), on synthetic windows."""

from __future__ import annotations

from loadgen.samples import new_histogram
from service.results.analysis import Second
from service.results.baseline import cluster_problem, judge, summary, window_of

HEALTHY = {"health": "HEALTH_OK", "down": 0, "fault_seen": False, "at_risk": False,
           "summary": "HEALTH_OK, 4/4 OSDs up"}


def latency_ms(value: float, count: int) -> str:
    h = new_histogram()
    h.record_value(int(value * 1000), count)
    return h.encode().decode()


def seconds(rate_per_s: list[int], p_ms: list[float], errors: int = 0) -> list[Second]:
    return [Second(ts=1000.0 + i, ops=ops, errors=errors if i == 0 else 0,
                   errors_by_class={"ETIMEDOUT": errors} if errors and i == 0 else {},
                   histograms=(latency_ms(p, max(ops, 1)),))
            for i, (ops, p) in enumerate(zip(rate_per_s, p_ms, strict=True))]


def window(secs, rate=50.0, lags=None, cpu=0.1, problems=()):
    return window_of(secs, 1000.0, 1000.0 + len(secs), rate, lags, cpu, list(problems))


def test_a_baseline_that_carried_its_load_is_valid():
    verdict = judge(window(seconds([50] * 20, [16] * 20), lags=[0.002] * 1000))

    assert verdict["valid"] and verdict["reasons"] == [] and verdict["hint"] is None
    assert verdict["measured"]["achieved_rate"] == 50.0
    assert summary(verdict) == "the baseline held"


def test_a_saturated_cluster_is_invalid_and_says_what_it_reached():
    rates = [50] * 10 + [40] * 10 + [41]
    latencies = [16] * 10 + [2800] * 11
    verdict = judge(window(seconds(rates[:20], latencies[:20]) ))

    assert not verdict["valid"]
    assert verdict["reasons"][0] == ("the cluster could not sustain 50.0 ops/s: 45.0 achieved, "
                                     "p50 rose from 16 ms to 2.8 s")
    assert "lower the rate" in verdict["hint"]
    assert summary(verdict).startswith("the cluster could not sustain")


def test_a_short_window_may_miss_two_operations_across_its_edges():
    # 3 s at 20 ops/s: 60 operations; 2% would be 1.2, but one op may cross each edge
    assert judge(window(seconds([20, 19, 19], [5] * 3), rate=20.0))["valid"]
    assert not judge(window(seconds([20, 18, 18], [5] * 3), rate=20.0))["valid"]


def test_errors_invalidate_the_baseline_with_their_classes():
    verdict = judge(window(seconds([50] * 10, [10] * 10, errors=3)))

    assert not verdict["valid"]
    assert "3 operations failed during the baseline (3 ETIMEDOUT)" in verdict["reasons"]


def test_a_late_generator_and_a_busy_one_are_named_as_the_bottleneck():
    verdict = judge(window(seconds([50] * 10, [10] * 10), lags=[0.001] * 90 + [0.5] * 10,
                           cpu=1.3))

    assert not verdict["valid"]
    assert any("schedule lag p99 500 ms" in r for r in verdict["reasons"])
    assert any("used 1.30 cores" in r for r in verdict["reasons"])
    assert "bottleneck" in verdict["hint"]


def test_a_late_start_small_beside_the_latency_measured_is_no_bottleneck():
    # seen on the Swift lab with monitoring up: 128 ms late at p99 beside a p99 of 400 ms
    assert judge(window(seconds([20] * 20, [400] * 20), rate=20.0,
                        lags=[0.001] * 390 + [0.128] * 10))["valid"]
    late = judge(window(seconds([20] * 20, [400] * 20), rate=20.0,
                        lags=[0.001] * 390 + [0.250] * 10))
    assert late["reasons"] == ["the load generator started operations late: schedule lag "
                               "p99 250 ms (bound 200 ms)"]


def test_a_queue_building_up_is_caught_even_when_the_rate_held():
    verdict = judge(window(seconds([50] * 20, [10] * 10 + [900] * 10)))

    assert not verdict["valid"]
    assert verdict["reasons"] == ["a queue built up during the baseline: "
                                  "p99 rose from 10 ms to 900 ms"]


def test_a_small_p99_wobble_is_not_a_queue():
    assert judge(window(seconds([50] * 20, [10] * 10 + [60] * 10)))["valid"]


def test_a_closed_loop_has_no_target_rate_to_miss():
    assert judge(window(seconds([300] * 10, [5] * 10), rate=None))["valid"]


def test_an_unhealthy_cluster_invalidates_the_baseline_once_per_problem():
    problem = cluster_problem("HEALTH_WARN", {**HEALTHY, "down": 1, "summary": "3/4 OSDs up"})
    verdict = judge(window(seconds([50] * 10, [10] * 10), problems=[problem, problem]))

    assert not verdict["valid"]
    assert verdict["reasons"] == ["the cluster was not healthy during the baseline: a daemon "
                                  "or device was down (3/4 OSDs up)"]


def test_what_counts_as_a_cluster_problem():
    assert cluster_problem("HEALTH_OK", HEALTHY) is None
    assert cluster_problem("HEALTHY", {"down": 0, "summary": "HEALTHY"}) is None
    assert "could not be sampled" in cluster_problem("UNREACHABLE", {"error": "timed out"})
    assert "below its replica count" in cluster_problem("HEALTH_WARN",
                                                        {**HEALTHY, "at_risk": True})
    assert "HEALTH_ERR" in cluster_problem("HEALTH_ERR", HEALTHY)
    assert "down" in cluster_problem("FAULT", {"down": 0, "fault_seen": True,
                                               "summary": "FAULT: node1/sdb"})


def test_no_recorded_second_is_invalid():
    verdict = judge(window_of([], 1000.0, 1020.0, 50.0, None, None, []))

    assert not verdict["valid"]
    assert "no whole second" in verdict["reasons"][0]


def test_one_slow_operation_in_a_short_light_baseline_is_not_a_queue():
    # 15 ops/s for 3 s: 22 operations a half, so its p99 is its slowest operation
    secs = seconds([15, 15, 15, 15], [5, 5, 5, 5])
    stray = new_histogram()
    stray.record_value(5_000, 14)
    stray.record_value(111_000, 1)
    secs[3] = Second(ts=secs[3].ts, ops=15, errors=0, errors_by_class={},
                     histograms=(stray.encode().decode(),))
    verdict = judge(window(secs, rate=15.0))

    assert verdict["measured"]["half_ops"] == (30, 30)
    assert verdict["measured"]["second_half_ms"][1] > 100  # the p99 did jump
    assert verdict["valid"], verdict["reasons"]


def test_a_queue_in_a_short_light_baseline_still_shows_in_its_p50():
    verdict = judge(window(seconds([15] * 4, [5, 5, 400, 400]), rate=15.0))

    assert verdict["reasons"] == ["a queue built up during the baseline: p99 rose from 5 ms "
                                  "to 400 ms"]
