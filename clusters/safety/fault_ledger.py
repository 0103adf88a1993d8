"""The fault ledger: every injected fault, written down before injection, struck off after
its restore succeeded, so whatever a crashed run left broken can be undone (`faultline heal`).

An action calls `record(...)` just before it breaks something and `strike(cluster, key)`
once the matching restore succeeded. Each entry names its restore by dotted path (always
under `actions.`) with JSON-able keyword arguments, so another process can replay it.

The arguments say only WHICH fault to undo (an OSD id, a node, a daemon's name): they are
what an experiment's rollback may pass too. WHAT the fault did (a unit it masked, a disk
image it made, a cgroup it moved a daemon from) is the entry's `record`, written by the
injection and read by the restore (`recorded`); no restore takes it from its caller, so an
experiment cannot tell a restore what to start, unmount or delete. Entries written before
the record existed kept it among their arguments (`fault`, `added`, ...): they are read with
those moved into the record, so their heal still works.
Entries go to a JSON file in this machine's state directory (`FileLedger`) unless the
service installed its PostgreSQL ledger with `set_backend`.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import re
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from clusters import paths
from clusters.exceptions import FaultLedgerError
from clusters.processes import ProcessOwner

_RESTORE_PATH = re.compile(r"actions(\.[A-Za-z_]\w*)+")
# what older entries kept among their arguments, and is now their record
RECORD_NAMES = ("fault", "added", "corruption", "back_to", "before", "image_dir")


@dataclass(frozen=True)
class FaultEntry:
    """One fault that was (about to be) injected and is not restored yet."""

    id: str  # uuid4 hex
    cluster: str
    key: str  # what is broken: "daemon:osd.1", "disk:node2", "power:node3", ...
    description: str  # one line for humans
    restore: str  # dotted path of the restore function, under actions.
    arguments: dict  # its keyword arguments (which fault), without `configuration`
    injected_at: float  # epoch seconds
    owner_pid: int
    owner_host: str
    run_id: int | None = None
    record: dict = dataclasses.field(default_factory=dict)  # what the injection did

    @classmethod
    def read(cls, **fields: Any) -> FaultEntry:
        """An entry as a ledger stores it; one of before the record moves its record out of
        its arguments."""
        arguments = dict(fields.pop("arguments", None) or {})
        record = dict(fields.pop("record", None) or {})
        for name in RECORD_NAMES:
            if name in arguments:
                record.setdefault(name, arguments.pop(name))
        return cls(arguments=arguments, record=record, **fields)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def owner_alive(self) -> bool | None:
        """Whether the injecting process still runs; None when it ran on another host.

        A zombie counts as dead. A PID reused since then counts as alive: the safe
        mistake, since only entries of dead owners are healed without being asked.
        """
        return ProcessOwner(self.owner_pid, self.owner_host).alive()


class FaultLedgerBackend(Protocol):
    def add(self, entry: FaultEntry) -> None: ...

    def strike(self, cluster: str, key: str) -> int: ...

    def outstanding(self, cluster: str | None = None) -> list[FaultEntry]: ...


class FileLedger:
    """The ledger as a JSON file (default: <state dir>/faults.json).

    Every change reads, edits and atomically replaces the file under an exclusive flock
    on a sibling `.lock` file, so concurrent processes never lose each other's entries.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else paths.state_dir() / "faults.json"
        self.lock_path = self.path.with_name(self.path.name + ".lock")

    def add(self, entry: FaultEntry) -> None:
        with self._locked():
            self._write([*self._read(), entry])

    def strike(self, cluster: str, key: str) -> int:
        with self._locked():
            entries = self._read()
            kept = [e for e in entries if (e.cluster, e.key) != (cluster, key)]
            if len(kept) < len(entries):
                self._write(kept)
        return len(entries) - len(kept)

    def outstanding(self, cluster: str | None = None) -> list[FaultEntry]:
        # No lock needed: the file is only ever replaced whole, so a reader sees one version.
        entries = [e for e in self._read() if cluster is None or e.cluster == cluster]
        return sorted(entries, key=lambda e: e.injected_at)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.lock_path, "a") as lock:  # closing it releases the lock
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def _read(self) -> list[FaultEntry]:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return []
        try:
            return [FaultEntry.read(**item) for item in json.loads(text)["faults"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise FaultLedgerError(f"the fault ledger {self.path} is unreadable ({exc}); "
                                   "check by hand what it lists before removing it") from None

    def _write(self, entries: list[FaultEntry]) -> None:
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(tmp, "w") as out:
            json.dump({"faults": [e.as_dict() for e in entries]}, out, indent=1)
            out.flush()
            os.fsync(out.fileno())  # on disk before the fault is injected, not just cached
        os.replace(tmp, self.path)
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)  # and the rename too
        finally:
            os.close(directory)


# The one piece of process state: which ledger this process writes to. Actions cannot be
# handed a ledger (Chaos Toolkit calls them with their arguments only) and `clusters` may not
# import `service`, so the service installs its PostgreSQL ledger here; None is the file.
_installed: FaultLedgerBackend | None = None


def set_backend(backend: FaultLedgerBackend | None) -> None:
    """Install the ledger this process records into; None goes back to the FileLedger."""
    global _installed
    _installed = backend


def backend() -> FaultLedgerBackend:
    return _installed if _installed is not None else FileLedger()


def record(cluster: str, key: str, description: str, restore: str, arguments: dict,
           record: dict | None = None) -> FaultEntry:
    """Write a fault down before injecting it: the restore's `arguments` (which fault) and
    the `record` of what the injection does; return its entry. ValueError if invalid."""
    stored = _checked(cluster, key, restore, arguments)
    if any(name in stored for name in RECORD_NAMES):
        raise ValueError(f"arguments of {restore} say which fault to undo, not what was done: "
                         f"{', '.join(n for n in RECORD_NAMES if n in stored)} belong in the "
                         "record")
    done = _json(restore, "record", {} if record is None else record)
    ledger = backend()
    entry = FaultEntry(id=uuid.uuid4().hex, cluster=cluster, key=key, description=description,
                       restore=restore, arguments=stored, injected_at=time.time(),
                       owner_pid=os.getpid(), owner_host=socket.gethostname(),
                       run_id=getattr(ledger, "run_id", None), record=done)
    ledger.add(entry)
    return entry


def recorded(cluster: str, key: str) -> dict | None:
    """The record of the newest outstanding fault of that cluster and key; None when the
    ledger holds none (the restore then has nothing recorded to undo)."""
    entries = [e for e in outstanding(cluster) if e.key == key]
    return entries[-1].record if entries else None


def strike(cluster: str, key: str) -> int:
    """Strike off every entry of that cluster and key (its restore succeeded); how many."""
    return backend().strike(cluster, key)


def outstanding(cluster: str | None = None) -> list[FaultEntry]:
    """Faults not restored yet, of one cluster or all, oldest first."""
    return backend().outstanding(cluster)


def orphaned(cluster: str | None = None) -> list[FaultEntry]:
    """Outstanding faults whose injecting process died on this host, oldest first."""
    return [e for e in outstanding(cluster) if e.owner_alive() is False]


def _checked(cluster: str, key: str, restore: str, arguments: dict) -> dict:
    """The arguments as they will be replayed (a JSON round trip), once all is valid."""
    for name, value in (("cluster", cluster), ("key", key)):
        if not (isinstance(value, str) and value.strip()):
            raise ValueError(f"{name} must be a non-empty string, not {value!r}")
    if not (isinstance(restore, str) and _RESTORE_PATH.fullmatch(restore)):
        raise ValueError("restore must be the dotted path of a function under actions., "
                         f"not {restore!r}")
    if not isinstance(arguments, dict):
        raise ValueError(f"arguments must be a dict, not {type(arguments).__name__}")
    bad_name = next((name for name in arguments if not isinstance(name, str)), None)
    if bad_name is not None:
        raise ValueError(f"argument names must be strings, not {bad_name!r}")
    if "configuration" in arguments:
        raise ValueError("arguments must not include 'configuration': the restore is given "
                         "its cluster's when it is replayed")
    return _json(restore, "arguments", arguments)


def _json(restore: str, what: str, value: dict) -> dict:
    """`value` as it will be read back (a JSON round trip); ValueError if it cannot be."""
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a dict, not {type(value).__name__}")
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} of {restore} must be JSON-able: {exc}") from None
