"""Heal one cluster's orphaned faults (service.runs.orphans) while holding the cluster, and say
so on each run whose fault it touched: what a worker's auto-heal does (service.worker.auto_heal),
a cluster at a time, each in a process of its own: `python -m service.runs.orphan_heal CLUSTER
[WORKER]`, which prints the pass as JSON.

- The cluster's advisory lock (service.jobs.cluster_lock), taken without waiting: a cluster a
  run holds is left for the next pass (a run heals its cluster's orphans before it starts,
  service.runs.runner). Under the lock the choice is made again, so two workers that heal at
  once restore a fault once, and a run that started meanwhile is seen.
- Its own process, as every heal has (service.runs.heal_process): the ledger a process
  restores from is per process.
- Restores through service.runs.heal (heal_entries), each with the inventory of its run (the
  default one for a fault with no run).
- Each result gives its run an event: `healed` (what was restored, by whom, when) or
  `heal_failed` (why: the fault stays in the ledger and is tried again on the next pass; the
  same failure is said once).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from clusters.safety.fault_ledger import FaultEntry, FileLedger
from service.accounts import audit
from service.jobs.cluster_lock import ClusterLock
from service.jobs.exceptions import ClusterBusy
from service.store import db
from service.store.fault_ledger import PgFaultLedger, database_ledger
from service.store.models import Event, Run

from . import heal, orphans

AUTO_HEAL = "worker auto-heal"
HEAL_KINDS = ("healed", "heal_failed")


@dataclass(frozen=True)
class Orphans:
    """The orphans of the database's ledger and of this machine's ledger file, and the
    inventory of each run they belong to."""

    database: list[FaultEntry]
    file: list[FaultEntry]
    inventories: dict[int, str | None]


def find(sessions: sessionmaker[Session], cluster: str | None = None) -> Orphans:
    """The orphans now (of `cluster`, or of all): two reads, the runs' statuses and /proc."""
    in_database = PgFaultLedger(sessions).outstanding(cluster)
    in_file = FileLedger().outstanding(cluster)
    entries = in_database + in_file
    runs = _runs(sessions, {e.run_id for e in entries if e.run_id is not None})
    chosen = {e.id for e in orphans.orphans(entries, {e.id: e.owner_alive() for e in entries},
                                            {run_id: run[0] for run_id, run in runs.items()})}
    return Orphans([e for e in in_database if e.id in chosen],
                   [e for e in in_file if e.id in chosen],
                   {run_id: run[1] for run_id, run in runs.items()})


def pending(sessions: sessionmaker[Session]) -> list[str]:
    """The clusters that have orphans now, sorted."""
    found = find(sessions)
    return sorted({e.cluster for e in found.database + found.file})


def heal_cluster(url: str, cluster: str, worker: str | None = None) -> dict[str, Any]:
    """Take the cluster if it is free, heal its orphans, record each result on its run.
    Returns {"cluster", "busy" (why it was left, or None), "results" (as heal returns them,
    each with its `ledger`)}."""
    sessions = db.session_factory(url)
    try:
        lock = ClusterLock(url, cluster).acquire(sessions, wait_s=0)
    except ClusterBusy as exc:
        return {"cluster": cluster, "busy": str(exc), "results": []}
    try:
        found = find(sessions, cluster)
        with database_ledger(sessions):
            results = [{**r, "ledger": "database"} for r in _restore(found.database, found)]
        # database_ledger put the default back: this machine's file
        results += [{**r, "ledger": "file"} for r in _restore(found.file, found)]
        tell_runs(sessions, results, AUTO_HEAL, worker)
    finally:
        lock.release()
    return {"cluster": cluster, "busy": None, "results": results}


def tell_runs(sessions: sessionmaker[Session], results: list[dict[str, Any]], by: str,
              worker: str | None, now: float | None = None) -> None:
    """An event on the run of each result: `healed` or `heal_failed`, with the fault, who
    healed it and when; a failure already said in the run's last heal event is not said
    again (a pass every few minutes would repeat it)."""
    now = time.time() if now is None else now
    with sessions.begin() as session:
        for result in results:
            if result.get("run_id") is None:
                continue
            kind = "healed" if result["restored"] else "heal_failed"
            detail = {"name": result["description"], "key": result["key"],
                      "fault_id": result["id"], "ledger": result.get("ledger"),
                      "status": "restored" if result["restored"] else "failed",
                      "by": by, "worker": worker, "at": now, "error": result["error"],
                      "output": json.loads(json.dumps(result.get("output"), default=str))}
            if kind == "heal_failed" and _said(session, result["run_id"], result["id"],
                                               result["error"]):
                continue
            session.add(Event(run_id=result["run_id"], ts=now, kind=kind, detail=detail))
            # an unasked restore on a cluster is an action an admin must be able to trace
            audit.record(session, f"{by} ({worker})" if worker else by, "cluster.heal",
                         result.get("cluster") or f"run {result['run_id']}",
                         {"run_id": result["run_id"], "fault": result["description"],
                          "key": result["key"], "restored": result["restored"],
                          "error": result["error"]})


def _said(session: Session, run_id: int, fault_id: str, error: str | None) -> bool:
    last = session.execute(select(Event).where(Event.run_id == run_id,
                                               Event.kind.in_(HEAL_KINDS))
                           .order_by(Event.ts.desc(), Event.id.desc()).limit(1)).scalar()
    return (last is not None and last.kind == "heal_failed"
            and last.detail.get("fault_id") == fault_id and last.detail.get("error") == error)


def _restore(entries: list[FaultEntry], found: Orphans) -> list[dict[str, Any]]:
    """heal_entries for each inventory in turn (a fault with no run: the default one)."""
    groups: dict[str | None, list[FaultEntry]] = {}
    for entry in entries:
        inventory = found.inventories.get(entry.run_id) if entry.run_id is not None else None
        groups.setdefault(inventory, []).append(entry)
    return [result for inventory, group in groups.items()
            for result in heal.heal_entries(group, inventory)]


def _runs(sessions: sessionmaker[Session],
          run_ids: set[int]) -> dict[int, tuple[str, str | None]]:
    """(status, inventory) of each run that still exists."""
    if not run_ids:
        return {}
    with sessions() as session:
        rows = session.execute(select(Run.id, Run.status, Run.inventory)
                               .where(Run.id.in_(run_ids))).all()
    return {run_id: (status, inventory) for run_id, status, inventory in rows}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2):
        print("usage: python -m service.runs.orphan_heal CLUSTER [WORKER]", file=sys.stderr)
        return 2
    done = heal_cluster(db.database_url(), args[0], args[1] if len(args) == 2 else None)
    print(json.dumps(done, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
