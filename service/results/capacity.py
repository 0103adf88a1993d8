"""A calibration's figures: one stage's throughput and latency from its samples, when the
sweep stops, and the knee (the cluster's capacity for the workload's shape).

A stage is a closed loop with a fixed number of requests in flight (COSBench's workers);
the sweep doubles that number until the throughput stops rising or the latency passes a
bound. The knee is the highest throughput whose p99 is still within `p99_factor` of the
first stage's: past it, more load only buys queueing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from loadgen.samples import Sample, merge_histograms

RISE = 0.05  # a stage that adds less than this to the throughput ends the sweep
PERCENTILES = {"p50_ms": 50.0, "p90_ms": 90.0, "p99_ms": 99.0, "p999_ms": 99.9}


@dataclass(frozen=True)
class Limits:
    p99_factor: float = 5.0  # the knee's p99 is at most this times the first stage's
    p99_bound_ms: float = 2000.0  # a stage past this ends the sweep


@dataclass(frozen=True)
class Stage:
    """One closed-loop stage, over its measured seconds (the warm-up left out)."""

    in_flight: int
    seconds: int
    ops: int
    ops_s: float
    mb_s: float
    errors: int
    errors_by_class: dict[str, int] = field(default_factory=dict)
    p50_ms: float | None = None
    p90_ms: float | None = None
    p99_ms: float | None = None
    p999_ms: float | None = None
    histogram: str = ""  # every op's latencies merged, HDR base64: the stage's CDF

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def stage_of(in_flight: int, samples: list[Sample]) -> Stage:
    """A stage's figures from its per-second, per-op samples."""
    seconds = len({s.second for s in samples})
    ops = sum(s.ops for s in samples)
    errors: dict[str, int] = {}
    for s in samples:
        for error_class, n in s.errors.items():
            errors[error_class] = errors.get(error_class, 0) + n
    merged = merge_histograms([s.histogram for s in samples])
    latencies = ({name: round(merged.get_value_at_percentile(p) / 1000, 3)
                  for name, p in PERCENTILES.items()} if ops else {})
    span = max(seconds, 1)
    return Stage(in_flight=in_flight, seconds=seconds, ops=ops, ops_s=round(ops / span, 2),
                 mb_s=round(sum(s.bytes for s in samples) / span / 1e6, 3),
                 errors=sum(errors.values()), errors_by_class=errors,
                 histogram=merged.encode().decode() if ops else "", **latencies)


def stop_reason(stages: list[Stage], limits: Limits = Limits()) -> str | None:
    """Why the sweep ends after its last stage, or None to go on with twice the load."""
    last = stages[-1]
    if last.ops == 0:
        return f"no operation completed with {last.in_flight} in flight"
    if last.p99_ms is not None and last.p99_ms > limits.p99_bound_ms:
        return (f"p99 {last.p99_ms:.0f} ms with {last.in_flight} in flight is past the "
                f"bound of {limits.p99_bound_ms:.0f} ms")
    if len(stages) >= 2:
        before = stages[-2]
        if last.ops_s < before.ops_s * (1 + RISE):
            return (f"throughput rose less than {RISE:.0%} from {before.in_flight} to "
                    f"{last.in_flight} in flight ({before.ops_s:.1f} -> {last.ops_s:.1f} "
                    "ops/s)")
    return None


def knee(stages: list[Stage], limits: Limits = Limits()) -> Stage | None:
    """The stage of highest throughput whose p99 is within p99_factor of the first stage's
    and which had no error; None if no stage qualifies (the first one failed)."""
    first = next((s for s in stages if s.p99_ms is not None), None)
    if first is None:
        return None
    bound = first.p99_ms * limits.p99_factor
    fit = [s for s in stages if s.errors == 0 and s.p99_ms is not None and s.p99_ms <= bound]
    return max(fit, key=lambda s: s.ops_s, default=None)
