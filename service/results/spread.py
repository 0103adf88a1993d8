"""The spread of a figure over repeated trials, and whether a difference is larger than it.

A group of N trials gives each figure as its median with the min-max range and, from 5
trials on, a bootstrap 95% interval of the median. Two groups differ on a figure only when
their intervals do not overlap: the 95% intervals when both groups have them, else the
min-max ranges. Anything else is "within noise"; with fewer than 2 trials on a side there is
no spread to judge by, and no verdict.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import asdict, dataclass
from typing import Any

BOOTSTRAP_FROM = 5  # trials; fewer make a bootstrap interval meaningless
RESAMPLES = 2000
SEED = 20261125  # a figure's interval must not change from one report to the next


@dataclass(frozen=True)
class Spread:
    n: int
    median: float
    low: float  # min
    high: float  # max
    ci_low: float | None = None  # bootstrap 95% interval of the median, N >= 5
    ci_high: float | None = None

    def interval(self) -> tuple[float, float]:
        """What a difference must clear: the 95% interval if there is one, else min-max."""
        if self.ci_low is not None and self.ci_high is not None:
            return self.ci_low, self.ci_high
        return self.low, self.high

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def spread(values: list[float | None]) -> Spread | None:
    """The spread of the measured values (n/a ones left out); None if none was measured."""
    measured = sorted(float(v) for v in values if v is not None)
    if not measured:
        return None
    ci = _bootstrap(measured) if len(measured) >= BOOTSTRAP_FROM else (None, None)
    return Spread(n=len(measured), median=statistics.median(measured), low=measured[0],
                  high=measured[-1], ci_low=ci[0], ci_high=ci[1])


def _bootstrap(values: list[float]) -> tuple[float, float]:
    rng = random.Random(SEED)
    medians = sorted(statistics.median(rng.choices(values, k=len(values)))
                     for _ in range(RESAMPLES))
    return medians[int(0.025 * RESAMPLES)], medians[int(0.975 * RESAMPLES) - 1]


def verdict(a: Spread | None, b: Spread | None) -> str | None:
    """"different", "within noise", or None when either side has fewer than 2 trials."""
    if a is None or b is None or a.n < 2 or b.n < 2:
        return None
    (a_low, a_high), (b_low, b_high) = a.interval(), b.interval()
    return "different" if a_high < b_low or b_high < a_low else "within noise"
