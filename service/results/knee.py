"""The knee read from repeated stages: which levels a calibration measures again, and the
rule that turns every measurement into the capacity and its spread.

One stage is a few seconds on a shared machine: a scrub, a replicator pass or another
process can move it by a third, and the highest of single noisy stages is biased upwards
(the maximum of noise). So, once the first pass has found the region (the level of most
throughput, `capacity.knee`), the levels around it (the one below, it, the one above, those
that qualified) are measured `repeats` more times each, in turns (a, b, c, a, b, c: a drift
of the cluster over the minute moves every level alike, not one).

The rule, deterministic given the stages:
- a level qualifies when none of its stages had an error and the median of its stages'
  p99 is within p99_factor of the first stage's (`capacity.knee`'s bound). Not every
  stage's p99: one repeat of a few seconds meets a replicator pass or a scrub, and in a
  make demo on the Swift lab one such repeat at 1 in flight (262 ms against a bound of
  240 ms) and the two levels above it left no level at all, so no capacity and no run;
- the best level is the qualifying level of highest median throughput (the lower one on a
  tie); the noise is what its own repeats spread over, so the threshold is the lowest
  throughput measured at the best level;
- the knee is the LOWEST repeated level whose median throughput reaches the threshold:
  past it, more load buys nothing the best level's own repeats can tell from noise;
- the capacity is the knee's median, with its min and max (the spread).

With no repeats (repeats 0) every level has one stage, the threshold is the best stage's
throughput, and the rule is the first pass's: the stage of most throughput.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Any

from .capacity import Limits, Stage, knee

AROUND = 1  # levels measured again on each side of the first pass's knee (Settings.repeats)
DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Level:
    in_flight: int
    ops_s: tuple[float, ...]  # each of its stages' throughput, in the order measured

    @property
    def median(self) -> float:
        return round(median(self.ops_s), 2)

    def as_dict(self) -> dict[str, Any]:
        return {"in_flight": self.in_flight, "ops_s": list(self.ops_s),
                "min": min(self.ops_s), "median": self.median, "max": max(self.ops_s)}


@dataclass(frozen=True)
class Knee:
    in_flight: int
    ops_s: float  # the knee level's median: the capacity
    low: float  # its lowest and highest stage
    high: float
    best_in_flight: int
    threshold_ops: float  # the lowest throughput measured at the best level
    levels: tuple[Level, ...]  # the repeated levels (every qualifying level without repeats)
    stages: tuple[Stage, ...]  # the knee level's: its MB/s and its generator's CPU

    @property
    def mb_s(self) -> float:
        return round(median(s.mb_s for s in self.stages), 3)

    def spread(self, repeats: int) -> dict[str, Any]:
        """What a calibration stores of the rule (Calibration.spread)."""
        return {"repeats": repeats, "stages": len(self.stages), "min": self.low,
                "median": self.ops_s, "max": self.high,
                "best_in_flight": self.best_in_flight, "threshold_ops": self.threshold_ops,
                "levels": [level.as_dict() for level in self.levels]}


def repeat_levels(first_pass: list[Stage], limits: Limits = DEFAULT_LIMITS,
                  around: int = AROUND) -> list[int]:
    """The levels to measure again: the first pass's knee and up to `around` qualifying
    levels on each side of it, lowest first; none when the first pass found no knee."""
    found = knee(first_pass, limits)
    if found is None:
        return []
    fit = {s.in_flight for s in _qualifying(first_pass, limits)}
    order = [s.in_flight for s in first_pass]
    at = order.index(found.in_flight)
    near = order[max(0, at - around):at + around + 1]
    return [n for n in near if n in fit]


def schedule(levels: list[int], repeats: int) -> list[tuple[int, int]]:
    """(in flight, repeat number) in turns over the levels: a, b, c, a, b, c."""
    return [(n, r) for r in range(1, repeats + 1) for n in levels]


def knee_of(stages: list[Stage], limits: Limits = DEFAULT_LIMITS) -> Knee | None:
    """The knee of every stage of a calibration (first pass and repeats); None if no level
    qualifies. Candidates are the levels measured more than once when there are any (the
    region), else every level."""
    by_level: dict[int, list[Stage]] = {}
    for stage in stages:
        by_level.setdefault(stage.in_flight, []).append(stage)
    bound = p99_bound(stages, limits)
    levels = [Level(n, tuple(s.ops_s for s in group)) for n, group in sorted(by_level.items())
              if _level_fits(group, bound)]
    repeated = [level for level in levels if len(level.ops_s) > 1]
    candidates = repeated or levels
    if not candidates:
        return None
    best = max(candidates, key=lambda level: (level.median, -level.in_flight))
    threshold = min(best.ops_s)
    chosen = next(level for level in candidates if level.median >= threshold)
    return Knee(in_flight=chosen.in_flight, ops_s=chosen.median, low=min(chosen.ops_s),
                high=max(chosen.ops_s), best_in_flight=best.in_flight,
                threshold_ops=threshold, levels=tuple(candidates),
                stages=tuple(by_level[chosen.in_flight]))


def p99_bound(stages: list[Stage], limits: Limits) -> float | None:
    """`capacity.knee`'s bound: p99_factor times the p99 of the first stage that measured
    one (the first pass's lowest level); None when none did."""
    first = next((s for s in stages if s.p99_ms is not None), None)
    return None if first is None else first.p99_ms * limits.p99_factor


def _level_fits(group: list[Stage], bound: float | None) -> bool:
    """Whether one level's stages may be the knee: no error in any, and their median p99
    within the bound."""
    if bound is None or any(s.errors or s.p99_ms is None for s in group):
        return False
    return median(s.p99_ms for s in group) <= bound


def _qualifying(stages: list[Stage], limits: Limits) -> list[Stage]:
    """The stages that may be (part of) the knee, each on its own: no error, p99 within
    the bound."""
    bound = p99_bound(stages, limits)
    if bound is None:
        return []
    return [s for s in stages if s.errors == 0 and s.p99_ms is not None and s.p99_ms <= bound]
