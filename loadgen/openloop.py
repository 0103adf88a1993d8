"""The open-loop engine: operations start at fixed intended times, whatever the cluster does.

Latency is measured from the intended start, not from the actual submit, so a
stalled cluster shows up as latency and as missed starts rather than as fewer
requests (no coordinated omission). Drivers are asynchronous: `submit` returns
at once and calls `done` from the driver's own completion thread.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol

from .history_log import HistoryLog
from .lag import LagLog
from .ledger import Entry, Ledger
from .payload import PayloadSource
from .samples import SampleRecorder
from .workload import ALL_OPS, Workload

log = logging.getLogger(__name__)

# ok, bytes, error class, data (a list's: the container's names, one per line)
Done = Callable[[bool, int, str | None, bytes | None], None]


class AsyncDriver(Protocol):
    def write(self, container: str, name: str, data: bytes, done: Done) -> None: ...
    def read(self, container: str, name: str, size: int, done: Done) -> None: ...
    def delete(self, container: str, name: str, done: Done) -> None: ...
    def head(self, container: str, name: str, done: Done) -> None: ...
    def list(self, container: str, done: Done) -> None: ...


def listed_names(data: bytes | None) -> frozenset[str]:
    """The names of a list's answer (Done's data: one per line)."""
    return frozenset(n for n in (data or b"").decode("utf-8", "replace").split("\n") if n)


def intended_starts(start: float, rate: float) -> Iterator[float]:
    """Intended start times at a fixed rate, computed from the index (no drift)."""
    for i in itertools.count():
        yield start + i / rate


def op_chooser(mix: dict[str, int], seed: int) -> Callable[[], str]:
    """Draw operations with the mix's proportions, reproducibly: the draws of
    `rng.choices(ops, weights)`, without rebuilding its cumulative weights every draw."""
    rng = random.Random(seed)
    ops = [op for op in ALL_OPS if mix.get(op, 0) > 0]
    if len(ops) == 1:  # nothing to draw
        only = ops[0]
        return lambda: only
    cumulative = list(itertools.accumulate(mix[op] for op in ops))
    total, last, draw = float(cumulative[-1]), len(ops) - 1, rng.random
    return lambda: ops[bisect.bisect(cumulative, draw() * total, 0, last)]


def container_names(workload: Workload) -> list[str]:
    # RGW and Swift refuse names shorter than 3 characters.
    return [f"faultline-{i:03d}" for i in range(workload.containers)]


class OpenLoop:
    records_lag = True  # submit time - intended start, per operation (a closed loop has none)
    records_history = True  # every operation, for the consistency checker

    def __init__(self, driver: AsyncDriver, workload: Workload, recorder: SampleRecorder,
                 ledger: Ledger, payloads: PayloadSource, name_prefix: str,
                 stream: int = 0, phase_s: float = 0.0, history: HistoryLog | None = None):
        """`stream` picks the random sequences (one per driver of a run, so several drivers
        do not all draw the same operations); `phase_s` delays every intended start (the
        drivers of a run interleave their schedules instead of starting in lockstep);
        `history` records every operation for the consistency checker (one is made if none
        is given)."""
        self.driver = driver
        self.seed = workload.seed + 7919 * stream
        self.phase_s = phase_s
        self.clock = time.monotonic  # a test may drive the schedule with a fake clock
        self.workload = workload
        self.recorder = recorder
        self.ledger = ledger
        self.payloads = payloads
        self.history = history if history is not None else HistoryLog(payloads)
        self.name_prefix = name_prefix
        self.containers = container_names(workload)
        self.in_flight = 0
        self.submitted = 0
        self.lag_s: list[float] = []  # submit time - intended time, a bounded sample
        self.lags = LagLog()  # every operation's lag, by second of the schedule
        self._schedule_start: float | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._names = itertools.count()
        self.failure: str | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="faultline-openloop",
                                        daemon=True)
        self._thread.start()

    def stop(self, drain_s: float = 35.0) -> None:
        """Stop issuing; wait for in-flight operations (bounded by the client op timeout)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        deadline = time.monotonic() + drain_s
        while self.in_flight > 0 and time.monotonic() < deadline:
            time.sleep(0.05)

    def _run(self) -> None:
        try:
            self._schedule()
        except Exception as exc:  # a dead load must not pass for a throughput drop
            self.failure = f"the load generator stopped: {type(exc).__name__}: {exc}"
            log.exception(self.failure)

    def _schedule(self) -> None:
        choose = op_chooser(self.workload.mix, self.seed)
        rng = random.Random(self.seed + 1)
        start = self._schedule_start = self.clock()
        end = start + self.workload.duration_s if self.workload.duration_s else None
        for intended in intended_starts(start + self.phase_s, self.workload.rate):
            if self._stop.is_set() or (end is not None and intended >= end):
                return
            delay = intended - self.clock()
            if delay > 0 and self._stop.wait(delay):
                return
            op = choose()
            if self.in_flight >= self.workload.max_in_flight:
                self.recorder.missed(op, intended)
                continue
            self._issue(op, intended, rng)

    def _entry_for(self, op: str) -> Entry | None:
        """The object a read, a head or an overwrite (held from deletes until it is done) or
        a delete (out of the ledger) works on; None for a write or a list, or when there is
        nothing to read, overwrite or delete yet."""
        if op in ("read", "overwrite", "head"):
            entry = self.ledger.pick()
        elif op == "delete":
            entry = self.ledger.take()
        else:
            return None
        if entry is not None and self.records_history:  # the prefill's, an earlier loop's
            self.history.adopt((entry.container, entry.name), entry.version, entry.size,
                               self.clock())
        return entry

    def _container(self, rng: random.Random) -> str:
        containers = self.containers  # one container: no draw (nothing else uses rng)
        return containers[rng.randrange(len(containers))] if len(containers) > 1 \
            else containers[0]

    def _new_object(self, rng: random.Random) -> tuple[str, str]:
        """The container and name of the next write."""
        return self._container(rng), f"{self.name_prefix}-{next(self._names)}"

    def _issue(self, op: str, intended: float, rng: random.Random) -> None:
        entry = self._entry_for(op)
        if entry is None and op != "list":
            op = "write"  # nothing to read or delete (yet)
        with self._lock:
            self.in_flight += 1
            self.submitted += 1
        if self.records_lag:
            lag = self.clock() - intended
            if len(self.lag_s) < 100_000:
                self.lag_s.append(lag)
            self.lags.add(intended - (self._schedule_start or intended), lag)
        if op in ("write", "overwrite"):
            if op == "write":
                (container, name), version = self._new_object(rng), 0
            else:
                container, name = entry.container, entry.name
                version = self.ledger.next_version(container, name)
            data = self.payloads.content(name, None, version)
            self.history.issued_write((container, name), version, len(data))
            self.driver.write(container, name, data, self._on_done(
                op, intended, container, name, len(data), version))
        elif op == "read":
            size = self.history.read_size((entry.container, entry.name), entry.size)
            self.driver.read(entry.container, entry.name, size,
                             self._on_done(op, intended, entry.container, entry.name, size))
            # the ledger holds the object from deletes until this read's done (_on_done)
        elif op == "head":
            self.driver.head(entry.container, entry.name,
                             self._on_done(op, intended, entry.container, entry.name, 0))
        elif op == "list":
            container = self._container(rng)
            self.driver.list(container, self._on_done(op, intended, container, "", 0))
        else:
            self.driver.delete(entry.container, entry.name,
                               self._on_done(op, intended, entry.container, entry.name, 0))

    def _on_done(self, op: str, intended: float, container: str, name: str, size: int,
                 version: int = 0) -> Done:
        issued = self.clock()  # the history orders operations by when they really began

        def done(ok: bool, nbytes: int, error_class: str | None, data: bytes | None) -> None:
            # runs in the driver's completion thread: whatever happens, the slot is freed
            try:
                now = self.clock()
                self._record(op, (container, name), version, issued, now, ok, error_class, data)
                if ok and op == "read" and not self.history.read(
                        (container, name), issued, now, ok, error_class, data):
                    ok, error_class = False, "corrupt"  # no version of the object: not stale
                if ok:
                    self.recorder.success(op, now, now - intended, nbytes)
                    if op in ("write", "overwrite"):
                        self.ledger.add(container, name, size, version)
                else:
                    self.recorder.error(op, now, error_class or "unknown")
            except Exception:
                log.exception(f"recording a completed {op} of {container}/{name} failed")
            finally:
                if op in ("read", "overwrite", "head"):
                    self.ledger.done_reading(container, name)
                self._completed()
        return done

    def _record(self, op: str, key: tuple[str, str], version: int, start: float, end: float,
                ok: bool, error: str | None, data: bytes | None) -> None:
        """Into the history (a read records itself, as its check tells its version; a head
        that found the object says nothing of its version, and is not recorded)."""
        if op in ("write", "overwrite"):
            self.history.wrote(key, version, start, end, ok, error)
        elif op == "delete":
            self.history.deleted(key, start, end, ok, error)
        elif op == "list":
            if ok:
                self.history.listed(key[0], start, end, listed_names(data))
        elif not ok:
            self.history.read(key, start, end, ok, error, data)

    def settle(self) -> None:
        """Record what has completed by now (before a second is closed); a loop that
        records each result as it comes has nothing to do."""

    def _completed(self) -> None:
        """An operation is over, whatever its outcome: its slot is free."""
        with self._lock:
            self.in_flight -= 1
