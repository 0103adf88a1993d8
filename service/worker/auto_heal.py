"""A worker's auto-heal: as it starts, and then every PERIOD_S, it closes the runs whose process
died (service.runs.reaper) and restores the faults they left (service.runs.orphan_heal), so an
OSD a killed run left down comes back without a `faultline heal`.

- Each pass looks first, in the worker (the reaper, then the ledgers and /proc: a few reads);
  only a cluster with an orphan gets a heal, in a process of its own
  (`python -m service.runs.orphan_heal`), one cluster after the other, each under the
  cluster's lock, so a heal never races a run.
- A loop in a thread of the worker, not a procrastinate periodic task: a periodic job runs on
  whichever worker takes it, once a minute, but only a worker on the host where a run died
  can see from /proc that its process is gone, and the first pass must not wait for a tick.
- PERIOD_S is 2 minutes: a run that dies while a worker runs has its fault restored within
  2 minutes, well before Ceph's mon_osd_down_out_interval (10 min by default) would have it
  move the OSD's data elsewhere, while a pass that finds nothing costs a few reads.
- The worker runs with it unless `faultline worker --no-auto-heal`; a load driver's worker
  (`--queue load` alone) runs no experiment and may not reach the clusters, so it never heals.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from typing import Any

from service.runs import heal, orphan_heal, reaper
from service.store import db

logger = logging.getLogger(__name__)

PERIOD_S = 120.0


class AutoHeal:
    """The loop, in a daemon thread: `start()` makes the first pass at once."""

    def __init__(self, url: str, worker: str, period_s: float = PERIOD_S) -> None:
        self.url, self.worker, self.period_s = url, worker, period_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> AutoHeal:
        self._thread = threading.Thread(target=self._loop, name="auto-heal", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """No new pass; a heal in progress goes on in its own process to its end."""
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.heal_once()
            self._stop.wait(self.period_s)

    def heal_once(self) -> list[dict[str, Any]]:
        """One pass; the results of every heal it made (a failure is logged, never raised:
        the next pass tries again)."""
        try:
            sessions = db.session_factory(self.url)
            reaper.interrupt_dead_runs(sessions, orphan_heal.AUTO_HEAL)
            clusters = orphan_heal.pending(sessions)
        except Exception:
            logger.exception("auto-heal: could not look for orphaned faults")
            return []
        results = []
        for cluster in clusters:
            if self._stop.is_set():
                break
            results += self._heal(cluster)
        return results

    def _heal(self, cluster: str) -> list[dict[str, Any]]:
        logger.info(f"auto-heal: {cluster} has faults of runs that died; healing them")
        # its own session: a Ctrl-C meant for the worker must not cut a restore short
        done = subprocess.run(
            [sys.executable, "-m", "service.runs.orphan_heal", cluster, self.worker],
            env={**os.environ, "DATABASE_URL": self.url}, capture_output=True, text=True,
            start_new_session=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            logger.error(f"auto-heal of {cluster} exited {done.returncode}: {last}")
            return []
        outcome = json.loads(done.stdout)
        if outcome["busy"]:
            logger.info(f"auto-heal: left {cluster} for the next pass: {outcome['busy']}")
        for result in outcome["results"]:
            line = f"auto-heal: {heal.format_result(result)}"
            (logger.warning if result["restored"] else logger.error)(line)
        return outcome["results"]
