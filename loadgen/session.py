"""One steady load from start to verify: prefill, open loop, samples, verify.

The session hands closed per-second samples to a sink (the recorder in the
service writes them in batches); it never touches a database itself.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import uuid
from collections.abc import Callable

from .closedloop import closed_loop
from .history_log import HistoryLog
from .ledger import Entry, Ledger
from .openloop import AsyncDriver, OpenLoop, container_names
from .payload import PayloadSource
from .samples import Sample, SampleRecorder
from .verify import VerifyResult, verify
from .workload import Workload

log = logging.getLogger(__name__)

SampleSink = Callable[[list[Sample]], None]


class LoadSession:
    def __init__(self, driver: AsyncDriver, workload: Workload, sink: SampleSink,
                 flush_every_s: float = 2.0, tag: str | None = None, stream: int = 0,
                 phase_s: float = 0.0):
        """`stream` and `phase_s`: see OpenLoop (one driver of several). The payloads depend
        on the seed only, so any driver (or the run's control) can verify any object."""
        self.driver = driver
        self.workload = workload
        self.sink = sink
        self.flush_every_s = flush_every_s
        self.tag = tag or uuid.uuid4().hex[:8]
        lo, hi = workload.size_range()
        self.payloads = PayloadSource(workload.seed, lo, hi)
        self.ledger = Ledger(workload.seed + 7919 * stream)
        # what the consistency checker classifies; every name this session writes begins
        # with its tag (prefill and load alike)
        self.history = HistoryLog(self.payloads, prefix=f"{self.tag}-")
        self.stream = stream
        self.phase_s = phase_s
        self.recorder: SampleRecorder | None = None
        self.loop: OpenLoop | None = None
        self.started_at: float | None = None
        self._flusher: threading.Thread | None = None
        self._stop = threading.Event()
        self._leftover: list[Sample] = []

    def prefill(self, concurrency: int = 32, timeout_s: float = 300.0) -> int:
        """Write objects_per_container objects to every container; return how many."""
        slots = threading.Semaphore(concurrency)
        failures: list[str] = []
        names = [(c, f"{self.tag}-pre-{i}") for c in container_names(self.workload)
                 for i in range(self.workload.objects_per_container)]

        def writer(container: str, name: str, size: int):
            begun = time.monotonic()

            def done(ok: bool, nbytes: int, error: str | None, data: bytes | None) -> None:
                self.history.wrote((container, name), 0, begun, time.monotonic(), ok, error)
                if ok:
                    self.ledger.add(container, name, size)
                else:
                    failures.append(error or "unknown")
                slots.release()
            return done

        for container, name in names:
            slots.acquire()
            data = self.payloads.content(name)
            self.history.issued_write((container, name), 0, len(data))
            self.driver.write(container, name, data, writer(container, name, len(data)))
        deadline = time.monotonic() + timeout_s
        for _ in range(concurrency):  # every slot back means every write finished
            if not slots.acquire(timeout=max(0.0, deadline - time.monotonic())):
                raise TimeoutError(f"prefill still running after {timeout_s:.0f} s")
        if failures:
            raise RuntimeError(f"prefill: {len(failures)} of {len(names)} writes failed "
                               f"(first: {failures[0]})")
        return len(names)

    def start(self, at: float | None = None) -> None:
        """Start now, or at the wall-clock time `at`: the drivers of a run all start at one
        agreed time, so their seconds line up and merge."""
        if at is not None:
            time.sleep(max(0.0, at - time.time()))
        wall, mono = time.time(), time.monotonic()
        if at is not None:  # count seconds from the agreed time, not from a late wake-up
            wall, mono = at, mono - (wall - at)
        self.started_at = wall
        self.recorder = SampleRecorder(wall, mono)
        engine = closed_loop if self.workload.workers else OpenLoop
        self.loop = engine(self.driver, self.workload, self.recorder, self.ledger,
                           self.payloads, name_prefix=self.tag, stream=self.stream,
                           phase_s=self.phase_s, history=self.history)
        self.loop.start()
        self._flusher = threading.Thread(target=self._flush_loop, name="faultline-samples",
                                         daemon=True)
        self._flusher.start()

    def _flush_loop(self) -> None:
        pending: list[Sample] = []
        while not self._stop.wait(self.flush_every_s):
            self.loop.settle()
            pending += self.recorder.take_closed(time.monotonic(), self.workload.ops())
            pending = self._deliver(pending)
        self._leftover = pending

    def _deliver(self, samples: list[Sample]) -> list[Sample]:
        """Hand samples to the sink; keep them for the next try if it fails."""
        try:
            self.sink(samples)
            return []
        except Exception:
            log.exception(f"could not store {len(samples)} load samples; will retry")
            return samples

    def stop(self) -> None:
        """Stop at the next whole second of the load, so every sample is a full second."""
        if self.loop is None or self._stop.is_set():
            return
        self._stop.set()  # first: the flusher must not close the last second
        self._flusher.join()
        elapsed = time.monotonic() - self.recorder.mono_start
        end_second = math.floor(elapsed) + 1  # the flusher closed only seconds before it
        time.sleep(max(0.0, end_second - elapsed))
        self.loop.stop()
        if self.loop.in_flight:
            log.warning(f"{self.loop.in_flight} operations still in flight after the drain; "
                        "they are not in the samples")
        self.sink(self._leftover + self.recorder.take_final(end_second, self.workload.ops()))

    @property
    def failure(self) -> str | None:
        """Why the load generator stopped by itself, if it did."""
        return self.loop.failure if self.loop is not None else None

    def acknowledged(self) -> list[Entry]:
        return self.ledger.entries()

    def verify(self) -> VerifyResult:
        """Read back what was acknowledged; with the consistency checker's findings over
        the history, when the loop recorded one (librados' ring records none: its deletes
        would be missing, and every object it deleted a listing gap)."""
        recorded = self.loop is None or self.loop.records_history
        return verify(self.driver, self.ledger.entries(), self.payloads,
                      history=self.history if recorded else None)
