"""A run's load from several driver hosts (a workload with `drivers` > 1), seen from the run:
the same calls as a LoadSession (prefill, start, stop, failure, acknowledged, verify),
carried out by the drivers' jobs on the `load` queue (service.runs.load_driver) through the
run_drivers table. The drivers store their ledgers of acknowledged writes themselves, and
verify their own shares when asked (each with its own history: the consistency checker's
classes come from them); the run merges their verifies. The run's own driver connection
verifies everything itself, without a history, only when a driver could not.
"""

from __future__ import annotations

import logging
import time

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from clusters.polling import poll_until
from loadgen.exceptions import LoadError
from loadgen.ledger import Entry
from loadgen.payload import PayloadSource
from loadgen.verify import VerifyResult, merged, verify
from loadgen.workload import Workload
from service.jobs.app import make_app
from service.jobs.names import LOAD_QUEUE, LOAD_TASK
from service.store.models import RunDriver
from service.store.recording import load_ledger

logger = logging.getLogger(__name__)

READY_TIMEOUT_S = 120.0  # every driver connected and prefilled
START_LEAD_S = 3.0  # the agreed start is this far ahead: every driver sees it in time
STOP_TIMEOUT_S = 60.0  # a driver drains its operations (bounded by the op timeout)
VERIFY_TIMEOUT_S = 1800.0  # a driver's verify: its reads, extra reads and listings


class MergedVerify:
    """The drivers' verifies as one (loadgen.verify.merged), as a VerifyResult is used."""

    def __init__(self, record: dict):
        self.record = record

    def as_dict(self) -> dict:
        return self.record


class DistributedLoad:
    def __init__(self, sessions: sessionmaker[Session], run_id: int, workload: Workload,
                 driver, defer_driver):
        """`defer_driver(run_id, index)` puts one driver's job on the load queue."""
        self.sessions = sessions
        self.run_id = run_id
        self.workload = workload
        self.driver = driver  # the run's own connection, for the verify
        self.defer_driver = defer_driver
        self.started_at: float | None = None
        self._stopped = False
        self.failure: str | None = None  # as LoadSession.failure: why the load died
        lo, hi = workload.size_range()
        self.payloads = PayloadSource(workload.seed, lo, hi)

    def prefill(self) -> int:
        """Queue the drivers and wait until each has connected and prefilled its share."""
        with self.sessions.begin() as session:
            session.add_all([RunDriver(run_id=self.run_id, index=i, state="queued")
                             for i in range(self.workload.drivers)])
        for index in range(self.workload.drivers):
            self.defer_driver(self.run_id, index)
        drivers = self._wait(lambda d: d.state == "ready", READY_TIMEOUT_S, "ready")
        return sum(d.prefilled for d in drivers)

    def start(self) -> None:
        at = time.time() + START_LEAD_S
        self._set(start_at=at)
        time.sleep(max(0.0, at - time.time()))
        self.started_at = at

    def stop(self) -> None:
        """Every driver stops at the same instant, half a second into a second of the load,
        so all end with the same whole second."""
        if self.started_at is None or self._stopped:
            return
        self._stopped = True
        now = time.time()
        at = self.started_at + int(now - self.started_at) + 1.5
        self._set(stop_at=at)
        try:
            self._wait(lambda d: d.state in ("stopped", "verified", "failed"),
                       at - now + STOP_TIMEOUT_S, "stopped")
        except LoadError as exc:
            self.failure = str(exc)
        failed = [d for d in self._drivers() if d.state == "failed"]
        if failed:
            self.failure = "; ".join(f"load driver {d.index} on {d.host} failed: "
                                          f"{d.error}" for d in failed)

    def acknowledged(self) -> list[Entry]:
        with self.sessions() as session:
            return load_ledger(session, self.run_id)

    def verify(self) -> VerifyResult | MergedVerify:
        self._set(verify_at=time.time())
        try:
            drivers = self._wait(lambda d: d.state == "verified", VERIFY_TIMEOUT_S, "verified")
        except LoadError as exc:
            logger.warning(f"{exc}: the run verifies every acknowledged object itself, "
                           "without the drivers' histories (no consistency classes)")
            return verify(self.driver, self.acknowledged(), self.payloads)
        return MergedVerify(merged([d.verify for d in drivers]))

    def _drivers(self) -> list[RunDriver]:
        with self.sessions() as session:
            return list(session.execute(select(RunDriver).where(RunDriver.run_id == self.run_id)
                                        .order_by(RunDriver.index)).scalars())

    def _set(self, **values) -> None:
        with self.sessions.begin() as session:
            session.execute(update(RunDriver).where(RunDriver.run_id == self.run_id)
                            .values(**values))

    def _wait(self, done, timeout_s: float, what: str) -> list[RunDriver]:
        drivers: list[RunDriver] = []

        def all_done() -> bool:
            drivers[:] = self._drivers()
            failed = [d for d in drivers if d.state == "failed"]
            if failed:
                raise LoadError("; ".join(f"load driver {d.index} on {d.host} failed: "
                                          f"{d.error}" for d in failed))
            return all(done(d) for d in drivers)

        def late(_) -> str:
            behind = [d.index for d in drivers if not done(d)]
            return (f"{len(behind)} of {len(drivers)} load drivers not {what} after "
                    f"{timeout_s:.0f} s (drivers {behind}): is a `faultline worker --queue "
                    f"load` running on {len(drivers)} hosts that reach the cluster and the "
                    "database?")
        poll_until(f"load drivers {what}", all_done, timeout_s, 0.2, error=LoadError,
                   message=late)
        return list(drivers)


def defer_driver_job(database_url: str):
    """`defer_driver` for a run: each driver's job on the load queue of the run's database."""
    def defer(run_id: int, index: int) -> None:
        app = make_app(database_url)
        with app.open():
            app.configure_task(LOAD_TASK, queue=LOAD_QUEUE).defer(
                run_id=run_id, index=index)
    return defer
