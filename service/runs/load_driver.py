"""One load driver of a run that loads its cluster from several hosts: the body of a `load`
queue job, run by `faultline worker --queue load` on a driver host.

The run (service.runs.distributed_load, in the run's own process) and its drivers meet in the
`run_drivers` table: each driver connects to the cluster with its host's inventory,
prefills its share of the objects and says `ready`; the run then writes one start time for
all, a few seconds ahead, and each driver starts its share of the load at that instant, its
schedule shifted by a fraction of an interval so that the drivers interleave. Each writes
its own per-second samples (they line up, being counted from the same instant, and the
figures merge them exactly); when the run writes a stop time, each stops, then writes its
ledger of acknowledged writes. When the run asks (once the fault's daemons are back), each
verifies its own share with its own history, so the consistency checker sees every
operation on its objects, and writes the result for the run to merge.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import time
import uuid

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from clusters.access.inventory import load_cluster
from clusters.paths import default_inventory
from clusters.polling import poll_until
from loadgen.drivers import driver_for
from loadgen.session import LoadSession
from loadgen.workload import parse_workload
from service.store.models import Run, RunDriver
from service.store.recording import RunRecorder

from .exceptions import DriverGone

logger = logging.getLogger(__name__)

POLL_S = 0.1
WAIT_FOR_START_S = 600.0  # the other drivers may take long to prefill


def drive(sessions: sessionmaker[Session], run_id: int, index: int) -> int:
    """Run this driver's share of the run's load; return the operations it completed."""
    state = _DriverState(sessions, run_id, index)
    try:
        return _drive(sessions, state)
    except DriverGone as exc:
        logger.info(f"load driver {index} of run {run_id}: {exc}")
        state.set(state="stopped", error=str(exc))
        return 0
    except Exception as exc:
        state.set(state="failed", error=f"{type(exc).__name__}: {exc}"[:2000])
        raise


def _drive(sessions: sessionmaker[Session], state: _DriverState) -> int:
    with sessions() as session:
        run = session.get(Run, state.run_id)
        if run is None or run.status != "running":
            raise DriverGone("the run is not running")
        cluster_name, workload_spec, api = run.cluster, run.workload, run.load_api
    state.set(state="connecting", host=socket.getfqdn(), pid=os.getpid())
    workload = parse_workload(workload_spec)
    share = workload.share()
    cluster = load_cluster(default_inventory(), cluster_name)  # this host's own inventory
    driver = driver_for(cluster, share, api)
    driver.connect()
    recorder = RunRecorder(sessions, state.run_id, one_of_several=True)
    load = LoadSession(driver, share, recorder.load_samples,
                       tag=f"r{state.run_id}-d{state.index}-{uuid.uuid4().hex[:6]}",
                       stream=state.index,
                       phase_s=state.index / (workload.drivers * share.rate))
    try:
        prefilled = load.prefill() if share.prefill else 0
        state.set(state="ready", prefilled=prefilled)
        start_at = state.wait_for("start_at", WAIT_FOR_START_S)
        load.start(at=start_at)
        state.set(state="running")
        stop_at = state.wait_for("stop_at", None)
        time.sleep(max(0.0, stop_at - time.time()))
        load.stop()
        entries = load.acknowledged()
        recorder.ledger(entries)
        ops = load.loop.submitted if load.loop else 0
        failure = load.failure
        state.set(state="failed" if failure else "stopped", ops=ops, error=failure)
        if not failure:
            state.wait_for("verify_at", None)
            state.set(state="verified", verify=load.verify().as_dict())
        return ops
    finally:
        load.stop()
        driver.close()


class _DriverState:
    """This driver's row of run_drivers."""

    def __init__(self, sessions: sessionmaker[Session], run_id: int, index: int):
        self.sessions = sessions
        self.run_id = run_id
        self.index = index

    def set(self, **values) -> None:
        with self.sessions.begin() as session:
            session.execute(update(RunDriver).where(RunDriver.run_id == self.run_id,
                                                    RunDriver.index == self.index)
                            .values(**values))

    def wait_for(self, column: str, timeout_s: float | None) -> float:
        """Wait until the run writes this time; DriverGone if the run ends first."""
        def written() -> float | None:  # a Unix time: never 0
            with self.sessions() as session:
                value, status = session.execute(
                    select(getattr(RunDriver, column), Run.status).join(Run)
                    .where(RunDriver.run_id == self.run_id, RunDriver.index == self.index)
                ).one()
            if value is None and status != "running":
                raise DriverGone(f"the run ended ({status}) before its {column}")
            return value
        return poll_until(f"the run's {column}", written,
                          math.inf if timeout_s is None else timeout_s, POLL_S,
                          error=DriverGone,
                          message=lambda _: f"no {column} after {timeout_s:.0f} s")
