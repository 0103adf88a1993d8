"""How busy the load generator's own process is: its CPU time over a wall-clock window, in
cores (1.0: one core busy all along). A generator past about one core is GIL-bound and may
be what limits the load (the baseline check and a calibration's stages both judge it)."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class CpuMark:
    cpu: float  # this process's CPU seconds (user + sys) at the mark
    wall: float  # wall-clock time the window starts at

    @classmethod
    def now(cls, wall: float | None = None) -> CpuMark:
        """A mark now; `wall` starts the window earlier (the CPU is counted from now)."""
        return cls(time.process_time(), time.time() if wall is None else wall)

    def cores(self, min_s: float = 1e-3) -> float | None:
        """Cores used since the mark, or None for a window shorter than `min_s`."""
        elapsed = time.time() - self.wall
        if elapsed < min_s:
            return None
        return round((time.process_time() - self.cpu) / elapsed, 3)
