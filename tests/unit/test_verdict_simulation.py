"""A/A and power simulations of the comparisons' decision rule (service.results.verdicts).

Each simulated comparison draws both groups of trials from distributions, judges every
outcome figure at once (Holm over the figures), and counts whether any line says
"different". Seeded, so each run measures the same rates; `pytest -s` prints them
(docs/statistics.md quotes them)."""

from __future__ import annotations

import random

import pytest

from service.results.ranks import size
from service.results.verdicts import NEVER, Observed, compare_groups

COMPARISONS = 1000
WINDOW_S = 120.0  # a trial not recovered by then is "never recovered (> 120 s)"


def draw(kind: str, rng: random.Random, shift: float = 0.0) -> Observed:
    """One trial's figure from one of the simulated distributions (shift: added)."""
    if kind == "normal":  # time to detect: 1 s +- 0.2 s
        return Observed("measured", rng.gauss(1.0, 0.2) + shift)
    if kind == "lognormal":  # time to full redundancy: skewed, 60 s median
        return Observed("measured", rng.lognormvariate(4.1, 0.3) + shift)
    if kind == "ties":  # errors: a few whole numbers, many ties
        return Observed("measured", float(rng.choice([0, 0, 0, 1, 1, 2, 3])) + shift)
    if kind == "censored":  # client recovery: some trials never recover within the window
        value = rng.lognormvariate(4.3, 0.5) + shift
        return Observed("measured", value) if value <= WINDOW_S else \
            Observed("never", bound=WINDOW_S, reason="never recovered")
    raise ValueError(kind)


FIGURES = {"time_to_detect_s": "normal", "time_to_full_redundancy_s": "lognormal",
           "errors": "ties", "time_to_client_recovery_s": "censored"}


def simulate(n_a: int, n_b: int, seed: int, shifted: dict[str, float] | None = None,
             figures: dict[str, str] = FIGURES) -> dict[str, float]:
    """The share of comparisons with any "different" line, and with each figure's verdict
    ("different:<key>", "no meaningful difference:<key>")."""
    rng = random.Random(seed)
    shifted = shifted or {}
    counts: dict[str, int] = {"any different": 0}
    for _ in range(COMPARISONS):
        observed = {key: ([draw(kind, rng) for _ in range(n_a)],
                          [draw(kind, rng, shifted.get(key, 0.0)) for _ in range(n_b)])
                    for key, kind in figures.items()}
        said = compare_groups(observed, ("A", "B"))["figures"]
        counts["any different"] += any(f["verdict"] == "different" for f in said.values())
        for key, f in said.items():
            counts[f"{f['verdict']}:{key}"] = counts.get(f"{f['verdict']}:{key}", 0) + 1
    return {k: v / COMPARISONS for k, v in counts.items()}


@pytest.mark.parametrize(("n_a", "n_b"), [(3, 3), (6, 6), (8, 8), (5, 10)])
def test_identical_conditions_give_a_different_line_in_at_most_5_percent_of_comparisons(
        n_a, n_b):
    rates = simulate(n_a, n_b, seed=26 + n_a * 100 + n_b)

    print(f"\nA/A {n_a} vs {n_b}, {len(FIGURES)} figures (normal, lognormal, ties, "
          f"censored): any 'different' in {rates['any different']:.1%} of {COMPARISONS}")
    assert rates["any different"] <= 0.05


@pytest.mark.parametrize("kind", ["normal", "lognormal", "ties", "censored"])
def test_each_kind_of_distribution_alone_keeps_the_rate_at_most_5_percent(kind):
    # four figures of one kind, judged together as a comparison judges its figures
    rates = simulate(8, 8, seed=7, figures={key: kind for key in list(NEVER)[:4]})

    print(f"\nA/A 8 vs 8, 4 figures all {kind}: any 'different' in "
          f"{rates['any different']:.1%} of {COMPARISONS}")
    assert rates["any different"] <= 0.05


@pytest.mark.parametrize(("n_a", "n_b"), [(4, 4), (5, 5), (6, 6), (8, 8), (10, 10), (5, 10)])
def test_the_exact_test_of_one_figure_says_different_at_most_5_percent_of_the_time(n_a, n_b):
    # exact, over every split of distinct values: no simulation noise
    rate = size(n_a, n_b)

    print(f"\nexact false-positive rate of one figure, {n_a} vs {n_b}: {rate:.2%}")
    assert rate <= 0.05


def test_a_shift_of_two_standard_deviations_is_found_with_8_trials_a_side():
    # time to detect 0.4 s later (2 sd) on one side, the other three figures identical
    rates = simulate(8, 8, seed=11, shifted={"time_to_detect_s": 0.4})

    power = rates.get("different:time_to_detect_s", 0.0)
    print(f"\npower, 8 vs 8, a 2 sd shift among 4 figures (Holm): {power:.1%}")
    assert power >= 0.75  # measured 76.4% (docs/statistics.md)


def test_a_large_shift_is_found_with_6_trials_a_side_but_never_with_3():
    big = {"time_to_full_redundancy_s": 60.0}  # twice the median: far apart
    six, three = simulate(6, 6, seed=12, shifted=big), simulate(3, 3, seed=13, shifted=big)

    print(f"\npower, a doubled time to full redundancy: 6 vs 6 "
          f"{six.get('different:time_to_full_redundancy_s', 0):.1%}, 3 vs 3 "
          f"{three.get('different:time_to_full_redundancy_s', 0):.1%}")
    assert six.get("different:time_to_full_redundancy_s", 0) >= 0.85  # measured 89.3%
    assert three.get("different:time_to_full_redundancy_s", 0) == 0  # 10% is its best p


def test_no_meaningful_difference_is_rarely_said_of_a_difference_twice_the_margin():
    # time to detect 2 s later (margin 1 s): "no meaningful difference" would be wrong
    rates = simulate(8, 8, seed=14, shifted={"time_to_detect_s": 2.0})

    wrong = rates.get("no meaningful difference:time_to_detect_s", 0.0)
    print(f"\n'no meaningful difference' of a 2 s shift (margin 1 s), 8 vs 8: {wrong:.1%}")
    assert wrong <= 0.025
