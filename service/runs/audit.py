"""After a run: read back every object its ledger says was acknowledged (verify), or delete
them from the cluster once nobody needs them read back (clean)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from clusters.access.inventory import load_cluster
from clusters.paths import default_inventory
from loadgen.drivers import driver_for
from loadgen.ledger import Entry
from loadgen.openloop import AsyncDriver, container_names
from loadgen.payload import PayloadSource
from loadgen.remove import remove
from loadgen.verify import VerifyResult, verify
from loadgen.workload import Workload, parse_workload
from service.results import figures
from service.store import db
from service.store.models import Run
from service.store.recording import load_ledger

from . import launch
from .exceptions import ForeignObjects, ObjectsRemoved, RunStillLive
from .orphans import LIVE_STATUSES


def _stored(run_id: int) -> tuple[Run, list[Entry], Workload]:
    with db.session_factory()() as session:
        run = figures.get_run(session, run_id)
        session.expunge(run)
        return run, load_ledger(session, run_id), parse_workload(run.workload)


def reverify(run_id: int, inventory: str | None = None) -> VerifyResult:
    run, entries, workload = _stored(run_id)
    if run.objects_removed:
        raise ObjectsRemoved(f"run {run_id}'s objects were deleted from {run.cluster} by "
                             f"`faultline clean` at {run.objects_removed['at']}; there is "
                             "nothing to read back")
    cluster = load_cluster(inventory or default_inventory(), run.cluster)
    with _connected(cluster, workload, run.load_api) as driver:
        lo, hi = workload.size_range()
        return verify(driver, entries, PayloadSource(workload.seed, lo, hi))


def clean(run_id: int, inventory: str | None = None) -> dict[str, Any]:
    """Delete from its cluster every object the run acknowledged; record when, and what was
    found. Refused while the run is queued or running, or while another run holds the
    cluster (the deletes would be load on it). Again on a cleaned run: what is left, if a
    delete failed, is tried again; the rest count as already gone. Objects whose write was
    never acknowledged are not in the ledger and stay."""
    run, entries, workload = _stored(run_id)
    if run.status in LIVE_STATUSES:
        raise RunStillLive(f"run {run_id} is {run.status}; clean it once it has ended")
    # a ledger row rewritten in the database must not aim the deletes at other containers
    foreign = {e.container for e in entries} - set(container_names(workload))
    if foreign:
        raise ForeignObjects(f"run {run_id}'s ledger names containers its workload never "
                             f"wrote ({', '.join(sorted(foreign)[:5])}); nothing was deleted")
    cluster = load_cluster(inventory or default_inventory(), run.cluster)
    lock = launch.lock_cluster(run.cluster)
    try:
        with _connected(cluster, workload, run.load_api) as driver:
            result = remove(driver, entries)
    finally:
        lock.release()
    record = {"at": datetime.now(UTC).isoformat(timespec="seconds"), "objects": len(entries),
              **result.as_dict()}
    with db.session_factory().begin() as session:
        session.get(Run, run_id).objects_removed = record
    return record


@contextmanager
def _connected(cluster, workload: Workload, api: str | None) -> Iterator[AsyncDriver]:
    """A driver of the API the run wrote through: on Ceph, objects written through RGW are
    not RADOS objects of those names (librados would find every one missing)."""
    driver = driver_for(cluster, workload, api)
    driver.connect()
    try:
        yield driver
    finally:
        driver.close()
