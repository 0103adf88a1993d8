"""Undo the faults still in the fault ledger: `faultline heal`, and, before a run or a suite
starts, the faults a run that died left behind ("orphans").

A fault is undone by replaying the restore its action wrote down, with the cluster (and
inventory) it was injected into; only functions under `actions.` are ever called, since
the ledger may be edited by hand or come from another machine's database. The replayed
arguments say only which fault; the restore reads what to undo from the entry's record and
checks it against the inventory (an entry of before the record is read with it moved out of
its arguments: clusters.safety.fault_ledger.FaultEntry.read).

`heal` works on the ledger this process has installed (clusters.safety.fault_ledger);
`heal_everywhere`, what the CLI uses, on the database's ledger and then on this machine's
ledger file, where faults injected outside the service are written down.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from clusters.safety import fault_ledger
from clusters.safety.fault_ledger import FaultEntry, FileLedger
from service.store.fault_ledger import PgFaultLedger, database_ledger

from .exceptions import HealError


def heal(cluster: str | None = None, inventory: str | None = None,
         only_orphaned: bool = False) -> list[dict[str, Any]]:
    """Restore every outstanding fault (of `cluster`, or of all clusters), newest first, as
    undoing goes in the reverse order of doing; with `only_orphaned`, only the faults whose
    injecting process died on this host (and that no live process broke again since). Each
    restored fault is struck off; a restore that fails is reported, not raised, and its
    fault stays in the ledger.

    Returns one result per fault: id, cluster, key, description, run_id, restored (bool),
    error (str or None) and output (what the restore returned).
    """
    entries = fault_ledger.outstanding(cluster)
    if only_orphaned:
        # A restore undoes the thing, not the entry: leave alone what a live process (or one
        # on another host) also broke and still holds, even if an earlier owner died.
        dead = {e.id: e.owner_alive() is False for e in entries}
        held = {(e.cluster, e.key) for e in entries if not dead[e.id]}
        entries = [e for e in entries if dead[e.id] and (e.cluster, e.key) not in held]
    return heal_entries(entries, inventory)


def heal_entries(entries: list[FaultEntry], inventory: str | None) -> list[dict[str, Any]]:
    """Restore these entries of the ledger this process has installed, newest first (they
    are given oldest first, as `outstanding` lists them); results as `heal` returns them."""
    results = []
    restored: dict[tuple[str, str], str] = {}  # (cluster, key) -> id of the entry restored
    for entry in reversed(entries):
        newer = restored.get((entry.cluster, entry.key))
        if newer is not None:  # the same thing broken twice: the newer restore struck both
            results.append(_result(entry, True, output={"restored_with": newer}))
            continue
        result = _restore(entry, inventory)
        if result["restored"]:
            restored[(entry.cluster, entry.key)] = entry.id
        results.append(result)
    return results


def heal_orphans(cluster: str | None, inventory: str | None) -> list[dict[str, Any]]:
    """Restore the faults that runs which died on this host left in `cluster`."""
    return heal(cluster, inventory, only_orphaned=True)


def heal_everywhere(sessions: sessionmaker[Session], cluster: str | None = None,
                    inventory: str | None = None,
                    only_orphaned: bool = False) -> list[dict[str, Any]]:
    """`heal` on the database's ledger, then on this machine's ledger file (faults injected
    outside the service); each result says which in `ledger`."""
    with database_ledger(sessions):
        results = [{**r, "ledger": "database"} for r in heal(cluster, inventory, only_orphaned)]
    # database_ledger put the default back: the file
    return results + [{**r, "ledger": "file"} for r in heal(cluster, inventory, only_orphaned)]


def outstanding_everywhere(sessions: sessionmaker[Session],
                           cluster: str | None = None) -> list[tuple[str, FaultEntry]]:
    """(ledger, entry) for every outstanding fault, the database's first, oldest first."""
    return ([("database", e) for e in PgFaultLedger(sessions).outstanding(cluster)]
            + [("file", e) for e in FileLedger().outstanding(cluster)])


def outstanding_rows(sessions: sessionmaker[Session], cluster: str | None = None,
                     now: float | None = None) -> list[dict[str, Any]]:
    """The outstanding faults as `faultline faults --json` and the API show them: each
    entry's fields, its ledger, its age and whether the process that injected it still
    runs (None: it ran on another host)."""
    now = time.time() if now is None else now
    return [{**entry.as_dict(), "ledger": ledger, "age_s": round(now - entry.injected_at, 1),
             "owner_alive": entry.owner_alive()}
            for ledger, entry in outstanding_everywhere(sessions, cluster)]


def restore_function(path: str) -> Callable[..., Any]:
    """The restore function named by a dotted path; HealError unless it is under actions."""
    if not path.startswith("actions."):
        raise HealError(f"refused to call {path!r}: a restore must be a function under actions.")
    module, _, name = path.rpartition(".")
    func = getattr(importlib.import_module(module), name, None)
    if not callable(func):
        raise HealError(f"{path} is not a function")
    return func


def format_result(result: dict[str, Any]) -> str:
    """One line for a terminal: "restored: ..." or "FAILED: ...: why"."""
    run = f" (run {result['run_id']})" if result.get("run_id") is not None else ""
    if result["restored"]:
        return f"restored: {result['description']}{run}"
    return f"FAILED: {result['description']}{run}: {result['error']}"


def _restore(entry: FaultEntry, inventory: str | None) -> dict[str, Any]:
    # An empty inventory makes clusters.access.config fall back to the default one.
    configuration = {"faultline_cluster": entry.cluster, "faultline_inventory": inventory or ""}
    try:
        func = restore_function(entry.restore)
        output = func(**entry.arguments, configuration=configuration)
        fault_ledger.strike(entry.cluster, entry.key)
    except Exception as exc:  # any failure is reported and leaves the fault in the ledger
        return _result(entry, False, error=str(exc) or type(exc).__name__)
    return _result(entry, True, output=output)


def _result(entry: FaultEntry, restored: bool, error: str | None = None,
            output: Any = None) -> dict[str, Any]:
    return {"id": entry.id, "cluster": entry.cluster, "key": entry.key,
            "description": entry.description, "run_id": entry.run_id, "restored": restored,
            "error": error, "output": output}
