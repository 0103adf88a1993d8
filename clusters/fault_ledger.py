"""The fault ledger: every injected fault, written down before injection, struck off after
its restore succeeded, so whatever a crashed run left broken can be undone (`faultline heal`).

An action calls `record(...)` just before it breaks something and `strike(cluster, key)`
once the matching restore succeeded. Each entry names its restore by dotted path (always
under `actions.`) with JSON-able keyword arguments, so another process can replay it.
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

from . import paths
from .exceptions import FaultLedgerError
from .processes import ProcessOwner

_RESTORE_PATH = re.compile(r"actions(\.[A-Za-z_]\w*)+")


@dataclass(frozen=True)
class FaultEntry:
    """One fault that was (about to be) injected and is not restored yet."""

    id: str  # uuid4 hex
    cluster: str
    key: str  # what is broken: "daemon:osd.1", "disk:node2", "power:node3", ...
    description: str  # one line for humans
    restore: str  # dotted path of the restore function, under actions.
    arguments: dict  # its keyword arguments, without `configuration`
    injected_at: float  # epoch seconds
    owner_pid: int
    owner_host: str
    run_id: int | None = None

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
            return [FaultEntry(**item) for item in json.loads(text)["faults"]]
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


def record(cluster: str, key: str, description: str, restore: str,
           arguments: dict) -> FaultEntry:
    """Write a fault down before injecting it; return its entry. ValueError if invalid."""
    stored = _checked(cluster, key, restore, arguments)
    ledger = backend()
    entry = FaultEntry(id=uuid.uuid4().hex, cluster=cluster, key=key, description=description,
                       restore=restore, arguments=stored, injected_at=time.time(),
                       owner_pid=os.getpid(), owner_host=socket.gethostname(),
                       run_id=getattr(ledger, "run_id", None))
    ledger.add(entry)
    return entry


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
    try:
        return json.loads(json.dumps(arguments, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"arguments of {restore} must be JSON-able: {exc}") from None
