"""bench.results.median_interval: the order-statistic interval for a median, with the
exact coverage a benchmark's "met" rests on (P1-ceph judges the interval's end)."""

import itertools

import pytest

from bench.results import median_interval


def brute_force_coverage(n: int, k: int) -> float:
    """P(x(k) <= median < x(n+1-k)) counted over all 2^n equally likely patterns of draws
    falling below or above the true median."""
    inside = sum(1 for signs in itertools.product((0, 1), repeat=n)
                 if k <= sum(signs) <= n - k)  # sum: draws below the median
    return inside / 2 ** n


@pytest.mark.parametrize("n", range(2, 13))
def test_the_stated_coverage_is_the_exact_one(n):
    values = list(range(n))
    low, high, coverage = median_interval(values, 0.9)
    k = low + 1  # values are their own ranks - 1

    assert high == n - k
    assert coverage == pytest.approx(brute_force_coverage(n, k))


def test_five_pairs_give_min_to_max_covering_the_median_with_93_75_percent():
    assert median_interval([1.02, 0.91, 1.10, 0.97, 1.00]) == (0.91, 1.10, 0.9375)


def test_nine_values_drop_one_at_each_end_and_keep_at_least_90_percent():
    low, high, coverage = median_interval([9, 1, 8, 2, 7, 3, 6, 4, 5])

    assert (low, high) == (2, 8)
    assert coverage >= 0.9
    assert median_interval(list(range(9)), 0.97)[:2] == (0, 8)  # 96.1% < 97%: widen


def test_no_values_is_an_error():
    with pytest.raises(ValueError):
        median_interval([])
