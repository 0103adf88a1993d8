"""The spread of a figure over repeated trials: its median with the min-max range and, from
6 trials, the median's exact distribution-free 95% interval (order statistics of the
binomial; under 6 trials no such interval reaches 95%: at 5, min-max covers 93.75%).

Whether two groups differ is not read from these: service.results.verdicts judges it with a
stated test (docs/statistics.md).
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from math import comb
from typing import Any


@dataclass(frozen=True)
class Spread:
    n: int
    median: float
    low: float  # min
    high: float  # max
    ci_low: float | None = None  # the median's exact 95% interval, N >= 6
    ci_high: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def spread(values: list[float | None]) -> Spread | None:
    """The spread of the measured values (n/a ones left out); None if none was measured."""
    measured = sorted(float(v) for v in values if v is not None)
    if not measured:
        return None
    ci = median_interval(measured)
    return Spread(n=len(measured), median=statistics.median(measured), low=measured[0],
                  high=measured[-1], ci_low=ci[0], ci_high=ci[1])


def median_interval(ordered: list[float], alpha: float = 0.05) -> tuple[float | None,
                                                                        float | None]:
    """[x_(k), x_(n-k+1)] for the largest k with P(Binomial(n, 1/2) < k) <= alpha / 2."""
    n, k, tail = len(ordered), 0, 0.0
    while k < n and tail + comb(n, k) / 2 ** n <= alpha / 2:
        tail += comb(n, k) / 2 ** n
        k += 1
    return (ordered[k - 1], ordered[n - k]) if k >= 1 else (None, None)
