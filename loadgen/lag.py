"""The open loop's schedule lag (submit time - intended start) of every operation, kept per
second of the schedule in fixed buckets, so that any window can be judged over all of its
operations in bounded memory (a week at 200 ops/s is 604,800 seconds of 14 counts, 34 MB;
a list of every lag would be 121 million floats)."""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_left
from dataclasses import dataclass

# upper edges of the buckets, in ms; the last bucket holds everything later
EDGES_MS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
BUCKETS = len(EDGES_MS) + 1


@dataclass(frozen=True)
class LagCounts:
    """How many operations of a window started how late: `counts[i]` started no later than
    EDGES_MS[i] (and later than the edge before); the last count, later than every edge."""

    counts: tuple[int, ...]

    @property
    def ops(self) -> int:
        return sum(self.counts)

    def later_than(self, edge_ms: float) -> int:
        """Operations that started more than `edge_ms` late (`edge_ms` one of EDGES_MS)."""
        return sum(self.counts[EDGES_MS.index(edge_ms) + 1:])

    def quantile_ms(self, q: float) -> float | None:
        """The upper edge of the bucket holding the q-quantile (None: no operation; inf: past
        the last edge)."""
        total = self.ops
        if not total:
            return None
        rank, seen = q * total, 0
        for i, count in enumerate(self.counts):
            seen += count
            if seen >= rank and count:
                return float(EDGES_MS[i]) if i < len(EDGES_MS) else float("inf")
        return float("inf")

    @classmethod
    def of(cls, lags_s: list[float]) -> LagCounts:
        counts = [0] * BUCKETS
        for lag in lags_s:
            counts[bucket_of(lag)] += 1
        return cls(tuple(counts))


def bucket_of(lag_s: float) -> int:
    """The first bucket whose edge is at or above the lag (past every edge: the last)."""
    return bisect_left(EDGES_MS, lag_s * 1000)


class LagLog:
    """Every operation's lag, by the second of the schedule it was meant to start in."""

    def __init__(self) -> None:
        self._counts = array("I")
        self._lock = threading.Lock()

    def add(self, second: float, lag_s: float) -> None:
        index = max(0, int(second))
        with self._lock:
            if len(self._counts) < (index + 1) * BUCKETS:
                self._counts.extend([0] * ((index + 1) * BUCKETS - len(self._counts)))
            self._counts[index * BUCKETS + bucket_of(lag_s)] += 1

    def window(self, start_s: float, end_s: float) -> LagCounts:
        """The operations meant to start in the seconds [start_s, end_s) of the schedule."""
        counts = [0] * BUCKETS
        with self._lock:
            last = min(int(end_s), len(self._counts) // BUCKETS)
            for second in range(max(0, int(start_s)), last):
                base = second * BUCKETS
                for i in range(BUCKETS):
                    counts[i] += self._counts[base + i]
        return LagCounts(tuple(counts))
