"""The deficit's pure parts (service/results/deficit.py): on time is within 1 s of the
intended start, and a deficit is never negative."""

from __future__ import annotations

import pytest

from loadgen.samples import new_histogram
from service.results.deficit import ON_TIME_S, deficit, on_time_ops


def latencies(*values_us):
    h = new_histogram()
    for v in values_us:
        h.record_value(v)
    return h


def test_operations_up_to_1_s_from_their_intended_start_are_on_time():
    h = latencies(1_000, 500_000, 1_000_000, 1_002_000, 2_500_000)

    assert ON_TIME_S == 1.0
    assert on_time_ops(h) == 3


def test_the_bound_may_be_given():
    assert on_time_ops(latencies(1_000, 300_000, 600_000), limit_s=0.5) == 2


def test_an_empty_histogram_has_nothing_on_time():
    assert on_time_ops(new_histogram()) == 0


def test_the_deficit_is_the_offered_operations_not_served_on_time():
    offered, missing, missing_s = deficit(50.0, 20, 900)

    assert (offered, missing, missing_s) == (1000.0, 100.0, 2.0)


def test_more_on_time_than_offered_is_no_deficit_not_a_negative_one():
    assert deficit(50.0, 20, 1003) == (1000.0, 0.0, 0.0)


@pytest.mark.parametrize("base", [0.5, 20.0, 1156.0])
def test_the_deficit_in_seconds_is_in_seconds_of_full_load(base):
    _, missing, missing_s = deficit(base, 10, 0)

    assert missing_s == pytest.approx(10.0)
    assert missing == pytest.approx(10 * base)
