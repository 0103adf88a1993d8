"""The baseline gate of a run: measure the baseline window before anything is injected and
judge it (service.results.baseline). A window that is not steady is measured on, a window
of the same length sliding on, up to the stated limit (`baseline.extension_s`); the verdict
says how long the baseline really was and why it was extended. What a verdict that did not
hold does to the run is the control's (service.runs.control)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from loadgen.cpu import CpuMark
from loadgen.lag import LagCounts
from loadgen.session import LoadSession
from loadgen.workload import Workload
from service.results import baseline, figures
from service.store.recording import RunRecorder

from .distributed_load import DistributedLoad
from .sampler import ClusterSampler

logger = logging.getLogger("chaostoolkit")


@dataclass
class BaselineGate:
    sessions: Any
    run_id: int
    workload: Workload
    load: LoadSession | DistributedLoad
    sampler: ClusterSampler
    recorder: RunRecorder
    cpu_mark: CpuMark | None  # the generator's CPU from the load's (or the fill's) end
    knee_bound_ms: float | None = None  # of the calibration a relative rate came from

    def judge(self, start: float, end: float) -> tuple[dict[str, Any], baseline.BaselineWindow]:
        """The verdict of the baseline that began at `start` and was planned to end at `end`
        (with `baseline_s`, `measured_s` and its `extensions`), and its last window."""
        planned = end - start
        extensions: list[dict[str, Any]] = []
        while True:
            window = baseline.window_of(
                self._recorded_seconds(end), end - planned, end,
                None if self.workload.workers else self.workload.rate,
                self._lags(end - planned, end), self._generator_cpu(),
                self._cluster_problems(end - planned, end), knee_bound_ms=self.knee_bound_ms)
            verdict = baseline.judge(window)
            more = baseline.extension_s(verdict, planned, end - start)
            if more is None:
                break
            extensions.append({"after_s": round(end - start, 1), "reasons": verdict["reasons"]})
            self.recorder.event("baseline_extended", after_s=round(end - start, 1),
                                more_s=more, reasons=verdict["reasons"])
            logger.info(f"The baseline is not steady yet ({baseline.summary(verdict)}); "
                        f"measuring {more:.0f} s more")
            end += more
            time.sleep(max(0.0, end - time.time()))
        return ({**verdict, "baseline_s": planned, "measured_s": round(end - start, 1),
                 "extensions": extensions}, window)

    def _recorded_seconds(self, end: float, wait_s: float = 6.0) -> list:
        """The run's seconds of load, once the window's last second is stored (the load
        stores what it measured every 2 s; drivers on other hosts as often)."""
        deadline = time.monotonic() + wait_s
        while True:
            with self.sessions() as session:
                seconds = figures.seconds_of(session, self.run_id)
            if any(s.ts >= end - 1.5 for s in seconds) or time.monotonic() > deadline:
                return seconds
            time.sleep(0.5)

    def _lags(self, start: float, end: float) -> LagCounts | None:
        """The schedule lags of every operation the open loop meant to start in the window
        (its schedule starts with the load)."""
        lags = getattr(getattr(self.load, "loop", None), "lags", None)
        if lags is None or self.workload.workers or self.load.started_at is None:
            return None  # a closed loop, or drivers on other hosts
        return lags.window(start - self.load.started_at, end - self.load.started_at)

    def _generator_cpu(self) -> float | None:
        """Cores this process used since the load (or the baseline after a fill) started;
        None when the load runs on other hosts."""
        if self.cpu_mark is None or isinstance(self.load, DistributedLoad):
            return None
        return self.cpu_mark.cores(min_s=1)

    def _cluster_problems(self, start: float, end: float) -> list[str]:
        samples = [(h, s) for ts, h, s in list(self.sampler.recent) if start <= ts <= end]
        if not samples:
            return ["no cluster sample was taken during the baseline"]
        return [p for p in (baseline.cluster_problem(h, s) for h, s in samples) if p]
