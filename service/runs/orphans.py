"""Which outstanding faults a worker may heal without being asked ("orphans"): the choice
that service.runs.orphan_heal acts on, kept apart so that it can be read and tested alone.

A fault is an orphan when nothing alive can still be holding it:
- its injecting process died on this host (clusters.safety.fault_ledger.orphaned), or
- its run is closed (interrupted, failed, ...: no status of a live run), which is how a
  process on another host is known dead: the reaper closes its run once its heartbeat is
  STALE_AFTER_S old (service.runs.reaper).

Never an orphan:
- a fault whose injecting process still runs on this host, whatever its run says;
- a fault of a run still queued or running (a live run's fault, its own restore will come);
- a fault from another host with no run to judge it by;
- a fault on the same thing (cluster and key) as a fault that is not an orphan: a restore
  undoes the thing, not the entry, so it would undo the live one too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from clusters.safety.fault_ledger import FaultEntry

LIVE_STATUSES = ("queued", "running")


def is_orphan(entry: FaultEntry, owner_alive: bool | None, run_status: str | None) -> bool:
    """Whether one entry, alone, may be healed: `owner_alive` as FaultEntry.owner_alive says
    (None: another host), `run_status` its run's (None: no run, or the run is gone)."""
    if owner_alive is True or run_status in LIVE_STATUSES:
        return False
    if owner_alive is False:
        return True
    return run_status is not None  # another host: only once its run is closed


def orphans(entries: Iterable[FaultEntry], owner_alive: Mapping[str, bool | None],
            run_status: Mapping[int, str]) -> list[FaultEntry]:
    """The entries to heal, in the order given; `owner_alive` by entry id, `run_status` by
    run id (a run missing from it counts as gone)."""
    entries = list(entries)
    chosen = {e.id for e in entries
              if is_orphan(e, owner_alive.get(e.id),
                           run_status.get(e.run_id) if e.run_id is not None else None)}
    held = {(e.cluster, e.key) for e in entries if e.id not in chosen}
    return [e for e in entries if e.id in chosen and (e.cluster, e.key) not in held]
