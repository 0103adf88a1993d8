"""How busy the load generator's own operation path is: the time its threads spend inside a
driver's completion callbacks and submissions, over a wall-clock window.

A closed loop issues its next operation from the completion callback (closedloop), so a
callback's time, from its entry to its return, is the time between a completion and the
next submit: the client's own work per operation (checking and recording the result,
choosing and preparing the next operation, handing it to the driver) and whatever that
work waited for (the GIL, a CPU). A submission made outside a callback (a loop's first
ones) counts from its call to its return; calls nested in a counted one count once.

The sum of those times over a window, divided by the window, is the mean number of the
loop's slots held by the client rather than by the cluster: how far the in-flight count
fell below its target because of the client. librados runs every completion callback on
one finisher thread, so there it is also that thread's busy share; at 1.0 every completion
waits behind the client's own work (service.results.generator judges it). What a driver
does for the client outside these calls (python-rados' own wrapper, an HTTP worker parsing
an answer) is not counted: it shows as latency.

The meter wraps any AsyncDriver; it costs a closure and two clock reads per operation
(about 4 us on the 2-core lab machine), and only calibrations use it (loadgen.stages). A
driver method that submits operations must be metered here too, or its work goes unseen.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from .closedloop import ring_of
from .openloop import AsyncDriver, Done


class BusyMeter:
    """Busy seconds per thread, summed on demand; each thread adds to its own list only."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._local = threading.local()
        self._threads: list[list[float]] = []  # per thread: busy seconds, depth, entered at
        self._lock = threading.Lock()

    def enter(self) -> list[float]:
        state = getattr(self._local, "state", None)
        if state is None:
            state = self._local.state = [0.0, 0, 0.0]
            with self._lock:
                self._threads.append(state)
        if state[1] == 0:
            state[2] = self.clock()
        state[1] += 1
        return state

    @staticmethod
    def leave(state: list[float], clock: Callable[[], float]) -> None:
        state[1] -= 1
        if state[1] == 0:
            state[0] += clock() - state[2]

    def busy_s(self) -> float:
        """Every thread's busy seconds so far (a call still running counts when it ends)."""
        with self._lock:
            return sum(state[0] for state in self._threads)


class MeteredDriver:
    """`driver`, with the time spent in its callbacks and submissions on `meter`."""

    def __init__(self, driver: AsyncDriver, meter: BusyMeter):
        self.driver = driver
        self.meter = meter

    def __getattr__(self, name: str):
        return getattr(self.driver, name)  # connect, close, check_access: not metered

    def ring(self):
        """The driver's librados ring, if it has one: its loop measures the client's own
        queueing itself (RingClosedLoop.client_held_s)."""
        return ring_of(self.driver)

    def write(self, container: str, name: str, data: bytes, done: Done) -> None:
        self._submit(self.driver.write, (container, name, data), done)

    def read(self, container: str, name: str, size: int, done: Done) -> None:
        self._submit(self.driver.read, (container, name, size), done)

    def delete(self, container: str, name: str, done: Done) -> None:
        self._submit(self.driver.delete, (container, name), done)

    def head(self, container: str, name: str, done: Done) -> None:
        self._submit(self.driver.head, (container, name), done)

    def list(self, container: str, done: Done) -> None:
        self._submit(self.driver.list, (container,), done)

    def _submit(self, call, args: tuple, done: Done) -> None:
        meter, clock = self.meter, self.meter.clock

        def metered(ok: bool, nbytes: int, error: str | None, data: bytes | None) -> None:
            state = meter.enter()
            try:
                done(ok, nbytes, error, data)
            finally:
                meter.leave(state, clock)

        state = meter.enter()
        try:
            call(*args, metered)
        finally:
            meter.leave(state, clock)
