"""P1's figures of one tool over its two runs in a pair (A B B A)."""

import pytest

from bench.pairs import pair_figures


def test_a_pair_averages_the_rates_and_weighs_cpu_per_op_by_each_run_s_operations():
    first = ({"write": 400.0, "read": 8000.0}, {"write": 0.2, "read": 0.05})
    second = ({"write": 600.0, "read": 12000.0}, {"write": 0.1, "read": 0.04})
    figures = pair_figures([first, second])
    assert figures["write"] == 500.0 and figures["read"] == 10000.0
    # 400 ops at 0.2 ms and 600 at 0.1 ms: 140 ms over 1,000 ops, not the mean 0.15
    assert figures["write_cpu_ms"] == pytest.approx(0.14)
    assert figures["read_cpu_ms"] == pytest.approx((8000 * 0.05 + 12000 * 0.04) / 20000)


def test_a_drift_over_the_pair_weighs_on_both_tools_alike():
    """The cluster slows by the same step each run: A B B A gives both tools the same mean."""
    speeds = [1000.0, 900.0, 800.0, 700.0]  # runs 1 to 4

    def run(speed):
        return ({"write": speed, "read": speed}, {"write": 0.1, "read": 0.1})

    a = pair_figures([run(speeds[0]), run(speeds[3])])
    b = pair_figures([run(speeds[1]), run(speeds[2])])
    assert a["write"] / b["write"] == pytest.approx(1.0)
