"""The heartbeat of a run's process: every BEAT_S seconds, from the moment its run row is
running until the control lets the run go (the verify phase included), it writes the
database's time into the row's `owner_seen_at`. Where the process cannot be looked up in
/proc (another host), its silence is how service.runs.reaper tells that it died."""

from __future__ import annotations

import logging
import threading

from service.store.recording import RunRecorder

logger = logging.getLogger(__name__)

BEAT_S = 10.0


class Heartbeat:
    def __init__(self, recorder: RunRecorder, every_s: float = BEAT_S):
        self.recorder = recorder
        self.every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="faultline-heartbeat",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _beat(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                self.recorder.beat()
            except Exception as exc:  # the database away for a moment: the next beat retries
                logger.warning(f"run {self.recorder.run_id}: heartbeat not recorded: {exc}")
