"""Per-second load samples per operation: count, bytes, errors by class, HDR latency.

Operations are bucketed by the second they completed in (throughput is what
the clients got back). Latencies are in microseconds from the intended start.
Each closed second is handed out once, with its histogram encoded so that
seconds and workers can be merged exactly later.

A completion only counts its latency (microseconds: how many) in a dict; the second's HDR
histogram is built when the second is handed out, one record per distinct value. The
histogram is the same as recording each operation (same counts, same min and max), and
the completion path, which runs once per operation, no longer pays for hdrh's
pure-Python record_value.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field

from hdrh.histogram import HdrHistogram

LOWEST_US = 1
HIGHEST_US = 600_000_000  # 10 min: longer than any client timeout
DIGITS = 3


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, DIGITS)


@dataclass
class Bucket:
    ops: int = 0
    bytes: int = 0
    errors: Counter = field(default_factory=Counter)
    missed: int = 0
    latencies: dict[int, int] = field(default_factory=dict)  # microseconds: how many

    def histogram(self) -> HdrHistogram:
        histogram = new_histogram()
        for value, count in self.latencies.items():
            histogram.record_value(value, count)
        return histogram

    def percentile_us(self, histogram: HdrHistogram, percentile: float) -> int:
        """hdrh's get_value_at_percentile (0 < percentile <= 100) of `histogram`, built from
        these latencies, from their few distinct values: hdrh walks its whole counts array
        in Python, about 0.7 ms a percentile, for every second and operation of a load."""
        target = histogram.get_target_count_at_percentile(percentile)
        seen = 0
        for value in sorted(self.latencies):
            seen += self.latencies[value]
            if seen >= target:
                return histogram.get_highest_equivalent_value(value)
        return 0


@dataclass(frozen=True)
class Sample:
    """One closed second of one operation."""

    second: int  # seconds since the load's epoch start, floor
    ts: float  # wall-clock start of that second
    op: str
    ops: int
    bytes: int
    errors: dict[str, int]
    missed: int
    p50_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    histogram: str  # base64 HDR encoding

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


class SampleRecorder:
    def __init__(self, wall_start: float, mono_start: float):
        self.wall_start = wall_start
        self.mono_start = mono_start
        self._buckets: dict[tuple[int, str], Bucket] = {}
        self._lock = threading.Lock()
        self._flushed_until = 0

    def _bucket(self, mono: float, op: str) -> Bucket:
        second = max(int(mono - self.mono_start), self._flushed_until)
        key = (second, op)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = Bucket()
        return bucket

    def success(self, op: str, done_mono: float, latency_s: float, nbytes: int) -> None:
        us = int(latency_s * 1e6)
        us = LOWEST_US if us < LOWEST_US else HIGHEST_US if us > HIGHEST_US else us
        second = int(done_mono - self.mono_start)
        with self._lock:  # _bucket, inlined: this runs once per operation
            if second < self._flushed_until:
                second = self._flushed_until
            bucket = self._buckets.get((second, op))
            if bucket is None:
                bucket = self._buckets[(second, op)] = Bucket()
            bucket.ops += 1
            bucket.bytes += nbytes
            latencies = bucket.latencies
            latencies[us] = latencies.get(us, 0) + 1

    def error(self, op: str, done_mono: float, error_class: str) -> None:
        with self._lock:
            self._bucket(done_mono, op).errors[error_class] += 1

    def missed(self, op: str, mono: float) -> None:
        with self._lock:
            self._bucket(mono, op).missed += 1

    def take_closed(self, now_mono: float, ops: tuple[str, ...]) -> list[Sample]:
        """Samples of every second that ended before now, once; empty seconds included."""
        with self._lock:
            taken = self._take_locked(int(now_mono - self.mono_start), ops)
        return [self._sample(second, op, bucket) for second, op, bucket in taken]

    def _take_locked(self, closed_until: int, ops: tuple[str, ...]) -> list:
        taken = []
        for second in range(self._flushed_until, closed_until):
            for op in ops:
                taken.append((second, op, self._buckets.pop((second, op), None) or Bucket()))
        self._flushed_until = max(self._flushed_until, closed_until)
        return taken

    def take_all(self, now_mono: float, ops: tuple[str, ...]) -> list[Sample]:
        """At the end: every second, including the current partial one."""
        return self.take_closed(now_mono + 1.0, ops)

    def take_final(self, end_second: int, ops: tuple[str, ...]) -> list[Sample]:
        """At the end: every second before end_second. Operations that completed later (the
        drain after the last start) are folded into the last second, so no partial second
        at the end looks like a drop in throughput."""
        with self._lock:  # one lock for merge and take: a late completion lands in neither
            last = end_second - 1
            for (second, op) in [k for k in self._buckets if k[0] > last]:
                _merge(self._buckets.setdefault((last, op), Bucket()),
                       self._buckets.pop((second, op)))
            taken = self._take_locked(end_second, ops)
        return [self._sample(second, op, bucket) for second, op, bucket in taken]

    def _sample(self, second: int, op: str, b: Bucket) -> Sample:
        has = b.ops > 0
        h = b.histogram() if has else None
        return Sample(
            second=second, ts=self.wall_start + second, op=op, ops=b.ops, bytes=b.bytes,
            errors=dict(b.errors), missed=b.missed,
            p50_ms=b.percentile_us(h, 50) / 1000 if has else None,
            p99_ms=b.percentile_us(h, 99) / 1000 if has else None,
            max_ms=h.get_max_value() / 1000 if has else None,
            histogram=h.encode().decode() if has else "",
        )


def _merge(into: Bucket, other: Bucket) -> None:
    into.ops += other.ops
    into.bytes += other.bytes
    into.errors.update(other.errors)
    into.missed += other.missed
    for value, count in other.latencies.items():
        into.latencies[value] = into.latencies.get(value, 0) + count


def merge_histograms(encoded: list[str]) -> HdrHistogram:
    """Exact merge of encoded per-second (or per-worker) histograms."""
    total = new_histogram()
    for blob in encoded:
        if blob:
            total.add(HdrHistogram.decode(blob))
    return total
