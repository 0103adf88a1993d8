"""A calibration's figures: one stage's throughput and latency from its samples, when the
sweep stops, and the knee (the cluster's capacity for the workload's shape).

A stage is a closed loop with a fixed number of requests in flight (COSBench's workers);
the sweep doubles that number until the throughput stops rising (two stages in a row add
less than 5%) or the latency passes a bound, or the load generator itself was the limit
(its own queueing or its CPU: service.results.generator states the rule). The
first pass's knee (`knee`) is the highest throughput whose p99 is still within `p99_factor`
of the first stage's: past it, more load only buys queueing. It only says where the knee
is: the levels around it are measured again, and service.results.knee reads the capacity
from the repeats. A knee measured with a busy generator is a lower bound of the capacity,
and is said to be (`generator_bound`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from loadgen.samples import Sample, merge_histograms

from .baseline import GENERATOR_CPU_CORES
from .exceptions import InvalidCalibration
from .generator import CLIENT_BUSY, why_bound

RISE = 0.05  # a stage that adds less than this to the throughput ends the sweep
MAX_AGE_H = 24.0 * 7  # an older calibration is made again before a relative rate uses it
PERCENTILES = {"p50_ms": 50.0, "p90_ms": 90.0, "p99_ms": 99.0, "p999_ms": 99.9}


@dataclass(frozen=True)
class Limits:
    p99_factor: float = 5.0  # the knee's p99 is at most this times the first stage's
    p99_bound_ms: float = 2000.0  # a stage past this ends the sweep
    # the generator's process past this many cores is the limit (the baseline check's bound:
    # its Python threads share one GIL, so one core is all it can use for them)
    generator_cpu_cores: float = GENERATOR_CPU_CORES
    # the client held this many slots between a completion and the next submit, on average:
    # its own queueing is the limit (service.results.generator)
    client_busy: float = CLIENT_BUSY


# the levels around the first pass's knee are measured this many more times each
# (service.results.knee): at most 3 levels, so at most 3 x repeats more stages
REPEATS = 2

# each setting's words, lowest, highest, and whether it is whole: a sweep of 11 stages (1 to
# 1024 in flight) and 15 repeats of at most 10 minutes each is under four and a half hours
BOUNDS: dict[str, tuple[str, float, float, bool]] = {
    "stage_s": ("stage length", 3, 600, True),
    "warmup_s": ("warm-up", 0, 300, True),
    "max_in_flight": ("max in flight", 1, 1024, True),
    "repeats": ("repeats", 0, 5, True),
    "p99_factor": ("the p99 factor", 1, 1000, False),
    "p99_bound_ms": ("the p99 bound", 1, 600_000, False),
}
MAX_AGE_LIMIT_H = 24.0 * 365  # max_age_h: a calibration older than a year is no capacity


def _range(key: str, low: float, high: float) -> str:
    if key == "p99_factor":
        return f"above {low:g} and at most {high:,g}"
    unit = {"stage_s": " s", "warmup_s": " s", "p99_bound_ms": " ms"}.get(key, "")
    return f"{low:g} to {high:,g}{unit}"


@dataclass(frozen=True)
class Settings:
    stage_s: int = 10  # measured seconds per stage
    warmup_s: int = 2  # before them, left out
    max_in_flight: int = 64
    limits: Limits = Limits()
    repeats: int = REPEATS  # more stages of each level around the knee (0: none)

    def check(self) -> None:
        """InvalidCalibration naming every setting out of its range (BOUNDS)."""
        problems = []
        values = {"stage_s": self.stage_s, "warmup_s": self.warmup_s,
                  "max_in_flight": self.max_in_flight, "repeats": self.repeats,
                  "p99_factor": self.limits.p99_factor, "p99_bound_ms": self.limits.p99_bound_ms}
        for key, value in values.items():
            words, low, high, whole = BOUNDS[key]
            if isinstance(value, bool) or not isinstance(value, int if whole else int | float) \
                    or not math.isfinite(value):
                problems.append(f"{words} must be {'a whole number' if whole else 'a number'}"
                                f", not {value!r}")
            elif not low <= value <= high or (key == "p99_factor" and value == low):
                problems.append(f"{words} must be {_range(key, low, high)}, not {value}")
        if problems:
            raise InvalidCalibration("invalid calibration: " + "; ".join(problems))

    def as_dict(self) -> dict:
        return {"stage_s": self.stage_s, "warmup_s": self.warmup_s,
                "max_in_flight": self.max_in_flight, "p99_factor": self.limits.p99_factor,
                "p99_bound_ms": self.limits.p99_bound_ms, "rise": RISE,
                "repeats": self.repeats}


def run_settings(raw: Any) -> tuple[Settings, float]:
    """An experiment's `calibration` argument: how a calibration it needs is made, and the
    age in hours past which one is made again; InvalidCalibration says what is wrong."""
    raw = {} if raw is None else raw
    known = {"stage_s", "warmup_s", "max_in_flight", "repeats", "p99_factor", "p99_bound_ms",
             "max_age_h"}
    if not isinstance(raw, dict) or set(raw) - known:
        raise InvalidCalibration(f"invalid calibration: expected an object with "
                                 f"{', '.join(sorted(known))}, not {raw!r}")
    limits = {k: raw[k] for k in ("p99_factor", "p99_bound_ms") if k in raw}
    settings = Settings(**{k: raw[k] for k in ("stage_s", "warmup_s", "max_in_flight",
                                               "repeats") if k in raw},
                        limits=Limits(**limits))
    settings.check()
    max_age_h = raw.get("max_age_h", MAX_AGE_H)
    if isinstance(max_age_h, bool) or not isinstance(max_age_h, int | float) \
            or not 0 < max_age_h <= MAX_AGE_LIMIT_H:
        raise InvalidCalibration(f"invalid calibration: max_age_h must be hours > 0 and <= "
                                 f"{MAX_AGE_LIMIT_H:g}, not {max_age_h!r}")
    return settings, float(max_age_h)


@dataclass(frozen=True)
class CapacityPlan:
    """A scale run's capacity before and after (service.runs.capacity_runs)."""

    after: str  # the method activity after which the second calibration is made
    settings: Settings


def capacity_plan(raw: Any, experiment: dict) -> CapacityPlan | None:
    """The control's `capacity` argument, checked against the experiment (its `after` must
    name an activity of the method); None when the run measures no capacity."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("after"), str):
        raise InvalidCalibration(f"invalid capacity: expected an object with 'after' (the "
                                 f"name of a method activity) and calibration settings, not "
                                 f"{raw!r}")
    names = [a.get("name") for a in experiment.get("method") or [] if isinstance(a, dict)]
    if raw["after"] not in names:
        raise InvalidCalibration(f"invalid capacity: after {raw['after']!r} is not an "
                                 f"activity of the method ({', '.join(map(str, names))})")
    settings, _ = run_settings({k: v for k, v in raw.items() if k != "after"})
    return CapacityPlan(after=raw["after"], settings=settings)


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
    generator_cpu_cores: float | None = None  # the load generator's process over the stage
    repeat: int = 0  # 0: the first pass; 1, 2, ...: measured again around the knee
    # the slots the client held between a completion and the next submit (loadgen.busy);
    # kept with the knee's figures (service.results.generator), the stage row has no column
    client_busy: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """The fields of its CalibrationStage row."""
        fields = asdict(self)
        del fields["client_busy"]
        return fields


def stage_of(in_flight: int, samples: list[Sample],
             generator_cpu_cores: float | None = None, repeat: int = 0,
             client_busy: float | None = None) -> Stage:
    """A stage's figures from its per-second, per-op samples (and its generator's CPU and
    busy share)."""
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
                 histogram=merged.encode().decode() if ops else "",
                 generator_cpu_cores=generator_cpu_cores, repeat=repeat,
                 client_busy=client_busy, **latencies)


def stop_reason(stages: list[Stage], limits: Limits = Limits()) -> str | None:
    """Why the sweep ends after its last stage, or None to go on with twice the load.

    The throughput has stopped rising when two stages in a row each added less than RISE
    over the best stage before them: on a shared machine one stage can be disturbed (a
    scrub, a replicator pass), and one low stage must not end the sweep before the knee."""
    last = stages[-1]
    if last.ops == 0:
        return f"no operation completed with {last.in_flight} in flight"
    if last.p99_ms is not None and last.p99_ms > limits.p99_bound_ms:
        return (f"p99 {last.p99_ms:.0f} ms with {last.in_flight} in flight is past the "
                f"bound of {limits.p99_bound_ms:.0f} ms")
    why = why_bound(last, limits)
    if why:
        return f"{why}: past this it, not the cluster, would set the throughput"
    if len(stages) >= 3 and not _rose(stages[:-1]) and not _rose(stages):
        best = max(s.ops_s for s in stages[:-2])
        return (f"throughput rose less than {RISE:.0%} over {best:.1f} ops/s at "
                f"{stages[-2].in_flight} and at {last.in_flight} in flight "
                f"({stages[-2].ops_s:.1f} and {last.ops_s:.1f} ops/s)")
    return None


def generator_bound(stage: Stage, limits: Limits = Limits()) -> bool:
    """The stage's load generator was the limit (service.results.generator): its
    throughput is the generator's as much as the cluster's."""
    return why_bound(stage, limits) is not None


def _rose(stages: list[Stage]) -> bool:
    """The last stage added at least RISE over the best stage before it."""
    return stages[-1].ops_s >= max(s.ops_s for s in stages[:-1]) * (1 + RISE)


def knee(stages: list[Stage], limits: Limits = Limits()) -> Stage | None:
    """The stage of highest throughput whose p99 is within p99_factor of the first stage's
    and which had no error; None if no stage qualifies (the first one failed)."""
    first = next((s for s in stages if s.p99_ms is not None), None)
    if first is None:
        return None
    bound = first.p99_ms * limits.p99_factor
    fit = [s for s in stages if s.errors == 0 and s.p99_ms is not None and s.p99_ms <= bound]
    return max(fit, key=lambda s: s.ops_s, default=None)
