"""Closed-loop stages for a calibration: the same workload at 1, 2, 4, ... requests in flight,
one after the other on one driver, over one set of prefilled objects.

Each stage is a fresh closed loop with its own per-second samples; its first seconds are a
warm-up (connections opening, caches filling at the new concurrency) and are left out. Two
figures of the generator itself come with them: its process's CPU over the measured
seconds, and its operation path's busy share (loadgen.busy: the mean number of slots held
by the client between a completion and the next submit). A stage whose generator was the
limit measures the generator, not the cluster (service.results.generator judges it).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, replace

from .busy import BusyMeter, MeteredDriver
from .closedloop import closed_loop
from .cpu import CpuMark
from .exceptions import DriverError
from .ledger import Ledger
from .openloop import AsyncDriver
from .payload import PayloadSource
from .samples import Sample, SampleRecorder
from .session import LoadSession
from .workload import Workload


@dataclass(frozen=True)
class StageLoad:
    samples: list[Sample]  # the measured seconds, every op
    generator_cpu_cores: float  # this process's CPU over them, in cores (1.0: one core busy)
    # the slots held by the client over them, on average (loadgen.busy; 1.0: one thread busy)
    client_busy: float | None = None


class StageRunner:
    def __init__(self, driver: AsyncDriver, workload: Workload, tag: str | None = None):
        self.meter = BusyMeter()
        self.driver = MeteredDriver(driver, self.meter)
        self.workload = replace(workload, duration_s=None)
        self.tag = tag or f"cal-{uuid.uuid4().hex[:8]}"
        self._prefill = LoadSession(self.driver, self.workload, sink=lambda samples: None,
                                    tag=self.tag)
        self.ledger: Ledger = self._prefill.ledger
        self.payloads: PayloadSource = self._prefill.payloads

    def prefill(self) -> int:
        return self._prefill.prefill() if self.workload.prefill else 0

    def run(self, in_flight: int, warmup_s: int, measure_s: int) -> StageLoad:
        """The `measure_s` whole seconds after `warmup_s`, the CPU spent over them and the
        client's busy share."""
        recorder = SampleRecorder(time.time(), time.monotonic())
        loop = closed_loop(self.driver, replace(self.workload, workers=in_flight), recorder,
                          self.ledger, self.payloads, name_prefix=f"{self.tag}-{in_flight}")
        loop.start()
        measured = recorder.mono_start + warmup_s
        end = measured + measure_s
        time.sleep(max(0.0, measured - time.monotonic()))
        mark, busy = CpuMark.now(), (self._held(loop), time.monotonic())
        time.sleep(max(0.0, end - time.monotonic()))
        cores = mark.cores() or 0.0
        client_busy = round((self._held(loop) - busy[0]) / (time.monotonic() - busy[1]), 3)
        # the seconds are taken before the loop stops: what completes in the drain would
        # add up to `in_flight` operations to the last second and flatter the stage
        loop.settle()
        samples = recorder.take_closed(max(end, time.monotonic()), self.workload.ops())
        loop.stop()
        if loop.failure:
            raise DriverError(loop.failure)
        return StageLoad([s for s in samples if warmup_s <= s.second < warmup_s + measure_s],
                         cores, client_busy)

    def _held(self, loop) -> float:
        """Slot-seconds held by the client so far: metered per call (ClosedLoop), or counted
        by the loop itself (RingClosedLoop)."""
        return self.meter.busy_s() + loop.client_held_s()
