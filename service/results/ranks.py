"""Exact rank tests for small groups of trials, in plain Python (docs/statistics.md). Pure.

- `rank_test(a, b)`: the two-sided permutation test of the sum of ranks (Mann-Whitney's,
  with ties at their mid-ranks, which is also Gehan's generalised Wilcoxon when every
  right-censored value ranks above every measured one): exact over all C(a+b, a) splits up
  to EXACT_UP_TO values, else a seeded Monte-Carlo of PERMUTATIONS splits;
- `shift(a, b)`: the Hodges-Lehmann shift of b against a (the median of the pairwise
  differences) and its exact distribution-free interval (order statistics of the
  differences at the Mann-Whitney critical value);
- `signed_rank_test(d)` and `paired_shift(d)`: the same for paired changes (Wilcoxon's
  signed-rank test, the median of the Walsh averages);
- `fisher(k1, n1, k2, n2)`: Fisher's exact test of two proportions;
- `holm(ps)`: Holm's step-down adjustment;
- `smallest_p(a, b)` / `trials_needed(level)` / `size(a, b)`: what the exact test can
  reach at all, and its exact false-positive rate.
"""

from __future__ import annotations

import random
import statistics
from functools import lru_cache
from math import comb

ALPHA = 0.05
EXACT_UP_TO = 100  # values in both groups (two groups of the most trials, 50); counted by sums
PERMUTATIONS = 20_000
SEED = 20261127  # a verdict must not change from one report to the next
_EPS = 1e-9


def midranks(keys: list) -> list[float]:
    """Ranks 1..n of comparable keys, tied keys sharing the mean of their ranks."""
    order = sorted(range(len(keys)), key=keys.__getitem__)
    ranks = [0.0] * len(keys)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and keys[order[j + 1]] == keys[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


@lru_cache(maxsize=256)
def _subset_sums(scores: tuple[int, ...], size: int) -> tuple[tuple[int, int], ...]:
    """How many subsets of `size` of the integer scores have each sum: (sum, count).

    The generating function prod(1 + y x^s), one Python integer per power of y whose
    fixed-width bit fields are the counts per sum: the additions and shifts run at C speed,
    so even 50 against 50 values is counted exactly in a fraction of a second."""
    width = 8 * ((comb(len(scores), size).bit_length() + 8) // 8)  # bits per count, whole bytes
    table = [0] * (size + 1)
    table[0] = 1
    for seen, s in enumerate(scores):
        for k in range(min(size, seen + 1), 0, -1):
            table[k] += table[k - 1] << (s * width)
    step = width // 8
    raw = table[size].to_bytes(max(1, (table[size].bit_length() + 7) // 8 + step), "little")
    counts = ((total, int.from_bytes(raw[total * step:(total + 1) * step], "little"))
              for total in range(len(raw) // step))
    return tuple((total, count) for total, count in counts if count)


def rank_test(a: list, b: list) -> float:
    """Two-sided p-value that the keys of a and b come from one distribution (keys compare
    with <, e.g. numbers, or (1, 0) tuples for censored values ranked above (0, x))."""
    if not a or not b:
        return 1.0
    ranks = midranks(list(a) + list(b))
    scores = [round(2 * r) for r in ranks]  # mid-ranks are halves: integers after doubling
    n, size = len(scores), len(a)
    mean = size * sum(scores) / n
    observed = abs(sum(scores[:size]) - mean)
    if n <= EXACT_UP_TO:
        sums = _subset_sums(tuple(sorted(scores)), size)
        extreme = sum(c for total, c in sums if abs(total - mean) >= observed - _EPS)
        return extreme / comb(n, size)
    rng = random.Random(SEED)
    pool, hits = list(scores), 0
    for _ in range(PERMUTATIONS):
        rng.shuffle(pool)
        hits += abs(sum(pool[:size]) - mean) >= observed - _EPS
    return (hits + 1) / (PERMUTATIONS + 1)


def smallest_p(a: int, b: int) -> float:
    """The smallest two-sided p-value the exact rank test of a vs b values can give."""
    return 1.0 if a == 0 or b == 0 else min(1.0, 2 / comb(a + b, a))


def size(a: int, b: int, level: float = ALPHA) -> float:
    """The exact chance that the test of a vs b distinct values says p <= level when nothing
    differs: at most `level`, less where the discrete p-values skip past it."""
    n = a + b
    sums = _subset_sums(tuple(range(2, 2 * n + 1, 2)), a)
    total, mean = comb(n, a), a * (n + 1)
    rejected = 0
    for s, count in sums:
        p = sum(c for t, c in sums if abs(t - mean) >= abs(s - mean) - _EPS) / total
        rejected += count if p <= level else 0
    return rejected / total


def trials_needed(level: float) -> int:
    """The fewest trials per side (equal sides) whose exact test can reach `level`."""
    n = 1
    while smallest_p(n, n) > level:
        n += 1
    return n


def _critical(counts: tuple[tuple[int, int], ...], total: int, alpha: float) -> int:
    """The largest k with P(statistic <= lowest + k - 1) <= alpha / 2: the interval is the
    k-th smallest to k-th largest order statistic; 0 when no interval reaches 1 - alpha."""
    k, cumulative = 0, 0
    for _, count in counts:
        if (cumulative + count) / total > alpha / 2 + _EPS:
            break
        cumulative += count
        k += 1
    return k


def shift(a: list[float], b: list[float],
          alpha: float = ALPHA) -> tuple[float, float | None, float | None]:
    """Hodges-Lehmann shift of b against a, and its 1 - alpha interval (None, None when the
    groups are too small for one)."""
    diffs = sorted(y - x for x in a for y in b)
    estimate = statistics.median(diffs)
    n = len(a) + len(b)
    counts = _subset_sums(tuple(range(1, n + 1)), len(a)) if n <= EXACT_UP_TO else None
    if counts is None:  # large groups: the normal approximation of U's spread
        sd = (len(a) * len(b) * (n + 1) / 12) ** 0.5
        k = max(0, int(len(a) * len(b) / 2 - 1.959964 * sd))
    else:
        k = _critical(counts, comb(n, len(a)), alpha)
    if k < 1:
        return estimate, None, None
    return estimate, diffs[k - 1], diffs[len(diffs) - k]


@lru_cache(maxsize=128)
def _signed_sums(scores: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """How many of the 2^n sign choices give each sum of the positive scores."""
    table = {0: 1}
    for s in scores:
        nxt = dict(table)
        for total, count in table.items():
            nxt[total + s] = nxt.get(total + s, 0) + count
        table = nxt
    return tuple(sorted(table.items()))


def signed_rank_test(d: list[float]) -> float:
    """Two-sided p-value of Wilcoxon's signed-rank test that paired changes centre on 0
    (zero changes dropped, tied sizes at mid-ranks), exact over every sign choice."""
    nonzero = [x for x in d if x != 0]
    if not nonzero:
        return 1.0
    scores = [round(2 * r) for r in midranks([abs(x) for x in nonzero])]
    mean = sum(scores) / 2
    observed = abs(sum(s for s, x in zip(scores, nonzero, strict=True) if x > 0) - mean)
    sums = _signed_sums(tuple(sorted(scores)))
    extreme = sum(c for total, c in sums if abs(total - mean) >= observed - _EPS)
    return extreme / 2 ** len(nonzero)


def paired_shift(d: list[float],
                 alpha: float = ALPHA) -> tuple[float, float | None, float | None]:
    """Hodges-Lehmann centre of paired changes (median of the Walsh averages) and its
    1 - alpha interval (None, None under 6 pairs at 5%)."""
    walsh = sorted((d[i] + d[j]) / 2 for i in range(len(d)) for j in range(i, len(d)))
    counts = _signed_sums(tuple(range(1, len(d) + 1)))
    k = _critical(counts, 2 ** len(d), alpha)
    if k < 1:
        return statistics.median(walsh), None, None
    return statistics.median(walsh), walsh[k - 1], walsh[len(walsh) - k]


def fisher(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided p-value of Fisher's exact test that k1 of n1 and k2 of n2 share one rate."""
    k, n = k1 + k2, n1 + n2
    if n1 == 0 or n2 == 0 or k in (0, n):
        return 1.0

    def prob(x: int) -> float:
        return comb(n1, x) * comb(n2, k - x) / comb(n, k)

    observed = prob(k1)
    return min(1.0, sum(p for x in range(max(0, k - n2), min(k, n1) + 1)
                        if (p := prob(x)) <= observed * (1 + 1e-7)))


def holm(ps: list[float]) -> list[float]:
    """Holm's adjusted p-values, in the order given: reject where adjusted <= the level,
    and the chance of any false rejection stays at most the level."""
    order = sorted(range(len(ps)), key=ps.__getitem__)
    adjusted = [1.0] * len(ps)
    running = 0.0
    for step, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - step) * ps[i]))
        adjusted[i] = running
    return adjusted
