"""The exact tests behind every verdict (service.results.ranks), on cases small enough to
check by hand: every split of the values listed, the p-value counted."""

from __future__ import annotations

import math
from itertools import combinations

import pytest

from service.results import ranks
from service.results.ranks import (
    fisher,
    holm,
    midranks,
    paired_shift,
    rank_test,
    shift,
    signed_rank_test,
    smallest_p,
    trials_needed,
)

NEVER = (1, 0.0)  # a right-censored value: ranks above every measured one


def measured(*values: float) -> list[tuple[int, float]]:
    return [(0, v) for v in values]


def test_tied_values_share_the_mean_of_their_ranks():
    assert midranks([3, 1, 3, 2]) == [3.5, 1.0, 3.5, 2.0]
    assert midranks([NEVER, (0, 5.0), NEVER]) == [2.5, 1.0, 2.5]


@pytest.mark.parametrize(("a", "b", "p"), [
    ([1, 2], [3, 4], 2 / 6),  # 2 vs 2: the most extreme split of six is p 1/3
    ([1, 2, 3], [4, 5, 6], 2 / 20),  # 3 vs 3 completely apart: 10%, not significant
    ([1, 2, 3, 4], [5, 6, 7, 8], 2 / 70),  # 4 vs 4 apart: 2.9%
    ([1, 2, 4], [3, 5, 6], 4 / 20),  # sums 6, 7 and 14, 15 are as far from 10.5 as 7
    ([1, 1, 2], [2, 3, 3], 4 / 20),  # ties: rank sums 6.5 (2 splits) and 14.5 (2 splits)
    ([5, 6, 7], [5, 6, 7], 1.0),
])
def test_the_rank_test_counts_every_split_at_least_as_far_from_the_mean(a, b, p):
    assert rank_test(a, b) == pytest.approx(p)


def test_the_rank_test_agrees_with_brute_force_enumeration_with_ties():
    a, b = [2, 2, 5, 7, 9], [3, 5, 5, 10, 11, 12]
    ranks = midranks(a + b)
    mean = len(a) * sum(ranks) / len(ranks)
    observed = abs(sum(ranks[:len(a)]) - mean)
    splits = list(combinations(ranks, len(a)))
    brute = sum(abs(sum(s) - mean) >= observed - 1e-9 for s in splits) / len(splits)

    assert rank_test(a, b) == pytest.approx(brute)


def test_a_trial_that_never_got_there_ranks_worse_than_every_measured_one():
    # 3 measured against 1 measured and 2 never recovered: as far apart as 3 vs 3 can be
    assert rank_test(measured(10, 12, 11), measured(50) + [NEVER, NEVER]) == pytest.approx(0.1)
    # never recovered on both sides: they tie with each other
    assert rank_test(measured(10) + [NEVER], measured(11) + [NEVER]) == pytest.approx(1.0)


def test_large_groups_are_counted_exactly_and_agree_with_the_normal_approximation():
    a, b = list(range(16)), [x + 0.5 for x in range(3, 19)]
    # the normal approximation of the rank sum, without ties: W_a's mean and spread
    ranks = midranks(a + b)
    w, mean, sd = sum(ranks[:16]), 16 * 33 / 2, (16 * 16 * 33 / 12) ** 0.5
    approx = math.erfc((abs(w - mean) - 0.5) / sd / math.sqrt(2))

    assert rank_test(a, b) == pytest.approx(approx, abs=0.01)


def test_past_the_exact_limit_a_seeded_monte_carlo_is_close_to_exact_and_repeats(monkeypatch):
    a, b = [1, 3, 4, 6, 9, 10, 12, 15], [2, 5, 7, 8, 11, 13, 14, 16, 17]
    exact = rank_test(a, b)
    monkeypatch.setattr(ranks, "EXACT_UP_TO", 10)

    sampled = rank_test(a, b)

    assert sampled == pytest.approx(exact, abs=0.01)  # 20,000 splits: +-0.007 at 2 sd
    assert sampled == rank_test(a, b)


def test_the_smallest_p_of_an_exact_test_and_the_trials_it_needs():
    assert smallest_p(2, 2) == pytest.approx(1 / 3)
    assert smallest_p(3, 3) == pytest.approx(0.1)
    assert smallest_p(1, 40) == pytest.approx(2 / 41)
    assert trials_needed(0.05) == 4  # 2 / C(8, 4) = 2.9%
    assert trials_needed(0.05 / 12) == 6  # Holm's first step over 12 tests: 2 / C(12, 6)


def test_the_hodges_lehmann_shift_is_the_median_of_pairwise_differences_with_its_interval():
    # 4 vs 4: P(U = 0) = 1/70 <= 2.5% < P(U <= 1) = 2/70: the interval is the extreme
    # differences
    assert shift([1, 2, 3, 4], [5, 6, 7, 8]) == (4, 1, 7)
    # 5 vs 5: P(U <= 2) = 4/252 <= 2.5% < P(U <= 3) = 7/252: the 3rd smallest and largest
    a, b = [0, 1, 2, 3, 4], [10, 11, 12, 13, 14]
    diffs = sorted(y - x for x in a for y in b)
    assert shift(a, b) == (10, diffs[2], diffs[-3])


def test_under_four_trials_a_side_there_is_no_95_percent_interval():
    assert shift([1, 2, 3], [4, 5, 6]) == (3, None, None)


def test_the_signed_rank_test_and_the_paired_shift_of_changes():
    assert signed_rank_test([1, 2, 3, 4, 5, 6]) == pytest.approx(2 / 64)
    assert signed_rank_test([-0.09, -0.095, -0.087]) == pytest.approx(2 / 8)  # 3 trials: 25%
    centre, low, high = paired_shift([1, 2, 3, 4, 5, 6])
    assert (centre, low, high) == (3.5, 1.0, 6.0)  # P(W+ = 0) = 1/64: the extremes
    assert paired_shift([1, 2, 3])[1:] == (None, None)


@pytest.mark.parametrize(("k1", "n1", "k2", "n2", "p"), [
    (3, 3, 0, 3, 0.1),  # hypergeometric: 1/20 each way
    (5, 5, 0, 5, 2 / 252),
    (1, 3, 1, 3, 1.0),
    (0, 3, 0, 3, 1.0),
])
def test_fisher_exact_test_of_two_counts(k1, n1, k2, n2, p):
    assert fisher(k1, n1, k2, n2) == pytest.approx(p)


def test_holm_multiplies_the_ith_smallest_p_by_m_minus_i_and_keeps_the_order():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert holm([]) == []
