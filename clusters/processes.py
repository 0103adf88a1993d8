"""A process of some machine, known by more than its PID: whether the process that wrote
something down (a fault in the fault ledger, a run) still runs.

A PID alone is ambiguous once its process is gone: the kernel hands it out again, and after
a reboot it names whatever started first. So an owner may also carry its `start`: this
boot's id, its PID namespace and its start time in clock ticks since boot (field 22 of
/proc/PID/stat). With it a reused PID, or a PID from before a reboot, is told from the
owner; without it (the fault ledger's entries) a reused PID counts as alive, the safe
mistake when a dead owner's work is undone without asking.

Only this host's /proc is read: a process on another host, or in another PID namespace
(a container with the same host name), cannot be judged here (`ELSEWHERE`).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

ALIVE = "alive"
GONE = "gone"  # no such PID any more, or a zombie
REUSED = "reused"  # the PID runs another process, started after the owner
REBOOTED = "rebooted"  # the host was restarted since the owner started
ELSEWHERE = "elsewhere"  # another host or PID namespace: cannot be seen from here


@dataclass(frozen=True)
class ProcessOwner:
    """The process that owns something: its PID, its host and (if known) its `start`."""

    pid: int
    host: str
    start: str | None = None  # "<boot id> <pid namespace> <start ticks>"

    @classmethod
    def current(cls) -> ProcessOwner:
        """This process."""
        return cls(os.getpid(), socket.gethostname(), start_of(os.getpid()))

    def state(self) -> str:
        """ALIVE, GONE, REUSED, REBOOTED or ELSEWHERE, as seen from this process."""
        if self.host != socket.gethostname():
            return ELSEWHERE
        if self.start is not None:
            boot, namespace, _ = (self.start.split(" ") + ["", "", ""])[:3]
            if boot != _boot_id():
                return REBOOTED
            if namespace != _pid_namespace():
                return ELSEWHERE
        fields = _stat_fields(self.pid)
        if fields is None or fields[0] in ("Z", "X"):
            return GONE
        if self.start is not None and self.start != start_of(self.pid, fields):
            return REUSED
        return ALIVE

    def alive(self) -> bool | None:
        """Whether it still runs; None when it cannot be seen from here."""
        state = self.state()
        return None if state == ELSEWHERE else state == ALIVE


def start_of(pid: int, fields: list[str] | None = None) -> str | None:
    """The `start` of a process of this host (None if it does not run)."""
    fields = _stat_fields(pid) if fields is None else fields
    if fields is None or len(fields) < 20:
        return None
    return f"{_boot_id()} {_pid_namespace()} {fields[19]}"  # field 22: starttime


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat from its field 3 (the state) on; None if no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return stat.rsplit(")", 1)[1].split()  # the name (field 2) may hold spaces or ')'


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""
