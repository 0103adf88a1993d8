"""The closed-loop engine: a fixed number of operations always in flight (capacity runs).

Each completion issues the next operation from the completing thread (librados'
finisher, or a Swift worker), so the loop adds no thread hop per operation. A librados
driver whose C path is built runs a RingClosedLoop instead (closed_loop() picks it): the
same loop with no Python between a completion and the next submit. An
operation that fails before it is even submitted completes on the issuing thread;
issuing again from there would recurse, so that slot goes to the loop's own thread
instead. Latency is measured from the submit: a closed loop has no intended times,
which is why it measures capacity and the open loop measures degradation.
"""

from __future__ import annotations

import queue
import random
import threading
import time

from .openloop import OpenLoop, op_chooser
from .workload import MORE_OPS


class ClosedLoop(OpenLoop):
    # An operation's "intended start" is the moment it is issued: its lag would be the few
    # microseconds between two clock reads, recorded for every operation for nothing.
    records_lag = False

    def _prepare(self) -> None:
        """The operation and container draws, and the end (if the workload has a duration)."""
        self._choose = op_chooser(self.workload.mix, self.seed)
        self._rng = random.Random(self.seed + 1)
        self._end = (time.monotonic() + self.workload.duration_s
                     if self.workload.duration_s else None)

    def _ending(self) -> bool:
        return self._stop.is_set() or (self._end is not None and time.monotonic() >= self._end)

    def start(self) -> None:
        self._prepare()
        self._draw = threading.Lock()  # the choosers are not thread-safe
        self._slots: queue.SimpleQueue[bool] = queue.SimpleQueue()
        self._issuing = threading.local()
        super().start()

    def stop(self, drain_s: float = 35.0) -> None:
        self._stop.set()
        self._slots.put(False)  # wake the loop's thread
        super().stop(drain_s)

    def _schedule(self) -> None:
        for _ in range(self.workload.workers):
            self._next()
        while not self._stop.is_set():
            if self._slots.get():
                self._next()

    def _next(self) -> None:
        if self._ending():
            return
        with self._draw:
            op = self._choose()
        self._issuing.active = True
        try:
            self._issue(op, time.monotonic(), self._rng)
        finally:
            self._issuing.active = False

    def _completed(self) -> None:
        super()._completed()
        if getattr(self._issuing, "active", False):
            self._slots.put(True)  # completed while being issued: no recursion
        else:
            self._next()

    def client_held_s(self) -> float:
        """Slot-seconds the client itself held (0 here: loadgen.busy meters this loop)."""
        return 0.0


def ring_of(driver):
    """The driver's librados ring (RadosDriver.ring), connected, or None. It is looked up on
    the driver's class, so a wrapper that does not say it forwards it (a test's slowed driver)
    has none, and its loop goes through its own methods."""
    offer = getattr(type(driver), "ring", None)
    return offer(driver) if offer is not None else None


def closed_loop(driver, *args, **kwargs) -> ClosedLoop:
    """The closed loop for `driver` (ClosedLoop's arguments): RingClosedLoop on the driver's
    librados ring when it offers one (ring_of) and the mix has only reads, writes and deletes
    (the ring writes new objects only, and neither lists nor stats), else ClosedLoop."""
    workload = args[0] if args else kwargs["workload"]
    ring = ring_of(driver) if not any(workload.mix.get(op) for op in MORE_OPS) else None
    if ring is None:
        return ClosedLoop(driver, *args, **kwargs)
    from .rados_closedloop import RingClosedLoop

    return RingClosedLoop(ring, driver, *args, **kwargs)
