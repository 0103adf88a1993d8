"""The workload model: what COSBench calls a work.

A workload is built once from a plain dict (an experiment's control arguments,
a CLI flag, an API body) and validated as a whole: every problem is reported in
one message, and nothing is started for an invalid workload.

Every field has a maximum (LIMITS) that one load generator can hold, and the objects'
buffers must fit in memory: the payload source keeps a buffer of twice the largest object
and each operation in flight holds up to two copies of one (what it writes, or what it read
and what it expects), so object_size(_max) x (2 + 2 x in flight) must stay within half of
this machine's memory (MemTotal); in flight is `workers` for a closed loop, else
`max_in_flight`. The check runs where the workload is parsed: in the web process when a run
is queued, and again in the run's own process when it starts.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from . import machine
from .exceptions import WorkloadError

OPS = ("read", "write", "delete")  # every run's samples hold these, every second
# an overwrite writes an existing object's next version (the consistency checker then sees
# a stale read); a list reads a container's whole listing (the checker sees a listing gap or
# a listed delete); a head asks whether an object is there. Their samples are recorded when
# the mix has them (COSBench's and warp's vocabulary)
MORE_OPS = ("overwrite", "list", "head")
ON_OBJECTS = ("read", "delete", "overwrite", "head")  # each works on an existing object
ALL_OPS = OPS + MORE_OPS
MAX_DRIVERS = 64
GIB = 1024 ** 3
MAX_OBJECT_SIZE = 5 * GIB  # Swift's largest single object
MIB = 1024 ** 2
# S3 multipart: every part but the last is at least 5 MiB (RGW's and s3api's minimum)
MIN_PART_SIZE = 5 * MIB
# the largest value of each field: far past what a test of one cluster needs, small enough
# that the generator, its ledger and the database hold it
LIMITS: dict[str, int | float] = {
    "containers": 10_000, "objects_per_container": 1_000_000,
    "object_size": MAX_OBJECT_SIZE, "object_size_max": MAX_OBJECT_SIZE,
    "rate": 100_000, "workers": 4096, "max_in_flight": 4096,
    "ramp_s": 3600, "baseline_s": 3600, "duration_s": 7 * 86400,
    "seed": 2 ** 32 - 1, "drivers": MAX_DRIVERS,
    "multipart_above": MAX_OBJECT_SIZE, "part_size": MAX_OBJECT_SIZE,
}
MEMORY_SHARE = 0.5  # of this machine's memory, the most the objects' buffers may take


@dataclass(frozen=True)
class Workload:
    containers: int = 1
    objects_per_container: int = 200
    object_size: int = 4096  # bytes; with object_size_max, a range
    object_size_max: int | None = None
    mix: dict[str, int] = field(default_factory=lambda: {"read": 80, "write": 15, "delete": 5})
    # ops/s, open loop; or "50%": that share of the cluster's calibrated capacity for this
    # shape, resolved to ops/s before the load starts (service.runs.calibration)
    rate: float | str = 100.0
    workers: int | None = None  # closed loop when set: this many always in flight (capacity)
    prefill: bool = True
    ramp_s: float = 5.0  # excluded from the baseline
    baseline_s: float = 20.0  # steady window before the fault
    duration_s: float | None = None  # None: as long as the experiment runs
    max_in_flight: int = 1024  # beyond this an intended start is counted as missed
    seed: int = 1
    drivers: int = 1  # load drivers on as many hosts (`faultline worker --queue load`)
    # S3 only: an object larger than this many bytes is written as a multipart upload of
    # part_size parts (None: every object in one PUT)
    multipart_above: int | None = None
    part_size: int = 8 * MIB

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def ops(self) -> tuple[str, ...]:
        """The operations whose per-second samples a run of this workload records."""
        return OPS + tuple(op for op in MORE_OPS if self.mix.get(op, 0) > 0)

    def size_range(self) -> tuple[int, int]:
        return self.object_size, self.object_size_max or self.object_size

    @property
    def capacity_share(self) -> float | None:
        """The fraction of the calibrated capacity a relative rate asks for ("50%": 0.5);
        None for a rate in ops/s."""
        return relative_rate(self.rate) if isinstance(self.rate, str) else None

    def share(self) -> Workload:
        """What one of `drivers` drivers runs: its part of the rate, of the closed loop's
        workers and of the prefilled objects. Their sum is the whole workload."""
        n = self.drivers
        return replace(self, drivers=1, rate=self.rate / n,
                       workers=max(1, self.workers // n) if self.workers else None,
                       objects_per_container=math.ceil(self.objects_per_container / n))


# past the knee is an overload study; far past it, a mistake. Twice the knee can still be
# within a noisy calibration's spread (its best stage, bench P8), hence 5 times
MAX_CAPACITY_SHARE = 5.0


def relative_rate(text: str) -> float | None:
    """"50%" -> 0.5; None if `text` is not a percentage."""
    number, percent, rest = text.strip().partition("%")
    try:
        return float(number) / 100 if percent and not rest else None
    except ValueError:
        return None


def parse_workload(raw: dict[str, Any] | None, memory: int | None = None) -> Workload:
    """Build a Workload from a dict, rejecting unknown keys and senseless values; its
    buffers must fit in `memory` bytes' share (default: this machine's MemTotal)."""
    if raw is not None and not isinstance(raw, dict):
        raise WorkloadError(f"invalid workload: it must be a mapping of fields such as "
                            f"{{\"rate\": 50}}, not {_short(raw)}")
    raw = dict(raw or {})
    known = set(Workload.__dataclass_fields__)
    problems = [f"unknown key {k!r}" for k in sorted(set(raw) - known)]
    values = {k: v for k, v in raw.items() if k in known}
    try:
        workload = Workload(**values)
    except TypeError as exc:  # pragma: no cover - keys are filtered above
        raise WorkloadError(f"invalid workload: {exc}") from None
    problems += _check(workload)
    if not problems:
        problems += _memory_problems(workload, machine.memory_bytes() if memory is None
                                     else memory)
    if problems:
        raise WorkloadError("invalid workload: " + "; ".join(problems))
    return workload


def _check(w: Workload) -> list[str]:
    problems = []

    def number(name: str, value: Any, minimum: float, strict: bool,
               integer: bool = False) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            problems.append(f"{name} must be a number, not {value!r}")
        elif not math.isfinite(value):  # json.loads reads NaN and Infinity
            problems.append(f"{name} must be a finite number, not {value!r}")
        elif integer and not isinstance(value, int):
            problems.append(f"{name} must be a whole number, not {value!r}")
        elif value < minimum or (strict and value == minimum):
            problems.append(f"{name} must be {'>' if strict else '>='} {minimum}, not {value}")
        elif name in LIMITS and value > LIMITS[name]:
            problems.append(f"{name} must be <= {LIMITS[name]:,}, not {value:,}")

    def whole(name: str, value: Any, minimum: float, strict: bool = False) -> None:
        number(name, value, minimum, strict, integer=True)

    whole("containers", w.containers, 1)
    whole("objects_per_container", w.objects_per_container, 0)
    size_problems = len(problems)
    whole("object_size", w.object_size, 0, True)
    if w.object_size_max is not None:
        # compared with object_size only when that is valid (it may not even be a number)
        if len(problems) == size_problems:
            whole("object_size_max", w.object_size_max, w.object_size)
        else:
            whole("object_size_max", w.object_size_max, 0, True)
    if isinstance(w.rate, str):
        share = relative_rate(w.rate)
        if share is None or not 0 < share <= MAX_CAPACITY_SHARE:
            problems.append(f"rate must be ops/s or a share of the calibrated capacity from "
                            f"0% to {MAX_CAPACITY_SHARE:.0%} (e.g. \"50%\"), not {w.rate!r}")
    else:
        number("rate", w.rate, 0, True)
    if w.workers is not None:
        whole("workers", w.workers, 1)
        if isinstance(w.workers, int) and isinstance(w.max_in_flight, int) \
                and w.workers > w.max_in_flight:
            problems.append(f"workers ({w.workers}) cannot exceed max_in_flight "
                            f"({w.max_in_flight})")
    number("ramp_s", w.ramp_s, 0, False)
    number("baseline_s", w.baseline_s, 0, True)
    if w.duration_s is not None:
        number("duration_s", w.duration_s, 0, True)
    whole("max_in_flight", w.max_in_flight, 1)
    _check_multipart(w, whole)
    whole("drivers", w.drivers, 1)
    whole("seed", w.seed, 0)
    if not isinstance(w.prefill, bool):
        problems.append(f"prefill must be true or false, not {w.prefill!r}")
    if not isinstance(w.mix, dict):
        problems.append(f"mix must be a mapping of {', '.join(ALL_OPS)} to percentages")
        return problems
    unknown = sorted(set(w.mix) - set(ALL_OPS))
    if unknown:
        problems.append(f"mix has unknown operations {', '.join(unknown)} "
                        f"(known: {', '.join(ALL_OPS)})")
    shares = list(w.mix.values())
    if any(isinstance(v, bool) or not isinstance(v, int | float) or v < 0 for v in shares):
        problems.append("mix percentages must be numbers >= 0")
    elif abs(sum(shares) - 100) > 1e-9:
        problems.append(f"mix must sum to 100, not {sum(shares)}")
    elif sum(w.mix.get(op, 0) for op in ON_OBJECTS) > 0 \
            and w.mix.get("write", 0) == 0 and w.objects_per_container == 0:
        problems.append("a mix that reads, overwrites, deletes or heads objects needs "
                        "objects: set objects_per_container or a write share")
    return problems


def _check_multipart(w: Workload, whole) -> None:
    # S3 allows 10,000 parts: MAX_OBJECT_SIZE in MIN_PART_SIZE parts is 1,024 at most
    whole("part_size", w.part_size, MIN_PART_SIZE)
    if w.multipart_above is not None:
        whole("multipart_above", w.multipart_above, 1)


def _memory_problems(w: Workload, memory: int | None) -> list[str]:
    """The objects' buffers against this machine's memory (a valid workload's)."""
    if not memory:
        return []
    in_flight = w.workers or w.max_in_flight
    largest = w.object_size_max or w.object_size
    needed = largest * (2 + 2 * in_flight)
    budget = int(memory * MEMORY_SHARE)
    if needed <= budget:
        return []
    return [f"objects of {_size(largest)} with {in_flight} in flight need {_size(needed)} "
            f"of buffers, more than half of this machine's memory ({_size(budget)} of "
            f"{_size(memory)}): make the objects smaller or lower "
            f"{'workers' if w.workers else 'max_in_flight'}"]


def _size(n: int) -> str:
    for unit, factor in (("GiB", GIB), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if n >= factor:
            return f"{n / factor:,.1f} {unit}"
    return f"{n} B"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
