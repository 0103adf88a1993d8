"""The watch a run keeps on its alerts: when one matches an abort condition, the run is
interrupted the way a cancel interrupts it (SIGUSR1 to its own process, which Chaos
Toolkit turns into a graceful stop: the method ends, the rollbacks run).

It reads the `alerts` table (filled by the service's webhook, from any machine) once a
second, so an abort takes at most about a second after the alert reached the service,
whatever process or host runs the experiment.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from service.experiments.abort_conditions import AbortCondition, first_match
from service.store.models import Alert

logger = logging.getLogger(__name__)


class AbortWatch:
    def __init__(self, sessions: sessionmaker[Session], run_id: int,
                 conditions: list[AbortCondition], fault_ts: Callable[[], float | None],
                 on_abort: Callable[[str, dict], None], every_s: float = 1.0):
        self.sessions = sessions
        self.run_id = run_id
        self.conditions = conditions
        self.fault_ts = fault_ts
        self.on_abort = on_abort
        self.every_s = every_s
        self.reason: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="faultline-abort-watch",
                                        daemon=True)

    def start(self) -> None:
        if self.conditions:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                found = first_match(self.conditions, self._firing(), self.fault_ts())
            except Exception as exc:  # the database may blink: keep watching
                logger.warning(f"abort watch of run {self.run_id}: {exc}")
                continue
            if found is not None:
                self._abort(*found)
                return

    def _firing(self) -> list[dict]:
        with self.sessions() as session:
            rows = session.execute(select(Alert).where(Alert.run_id == self.run_id,
                                                       Alert.status == "firing")).scalars()
            return [{"alertname": a.alertname, "labels": a.labels,
                     "starts_ts": a.starts_at.timestamp(),
                     "received_ts": a.received_at.timestamp()} for a in rows]

    def _abort(self, condition: AbortCondition, alert: dict) -> None:
        now = time.time()
        self.reason = (f"aborted: alert {alert['alertname']} matched the abort condition "
                       f"{condition.describe()}")
        logger.critical(f"Run {self.run_id} {self.reason}; rolling back")
        self.on_abort(self.reason, {"alert": alert["alertname"], "labels": alert["labels"],
                                    "condition": condition.describe(),
                                    "alert_received_ts": alert["received_ts"],
                                    "latency_s": round(now - alert["received_ts"], 3)})
        os.kill(os.getpid(), signal.SIGUSR1)
