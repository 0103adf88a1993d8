"""Give the lab's daemons and the load client CPUs of their own, as separate hosts would.

On this machine the cluster and its client share two cores, so a client that spends more
CPU per operation takes it from the OSDs, and a ratio of two clients' ops/s measures their
CPU cost as much as their ability to load the cluster. `separate_cpus` pins every thread
of the lab's daemons to the first CPU and this process (and what it starts after: its
librados threads, a `rados bench` child) to the last, and puts every affinity back after.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .load import lab_pids


def threads_of(pid: int) -> list[int]:
    try:
        return [int(t.name) for t in Path(f"/proc/{pid}/task").iterdir()]
    except OSError:
        return []


@contextmanager
def separate_cpus(kind: str) -> Iterator[tuple[int, int]]:
    """(the daemons' CPU, the client's CPU) while inside; ValueError with fewer than 2 CPUs."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise ValueError(f"only {len(cpus)} CPU usable here: the cluster and its client "
                         "cannot have CPUs of their own")
    servers, client = cpus[0], cpus[-1]
    daemons: dict[int, set[int]] = {}  # pid: its mask before
    own = os.sched_getaffinity(0)
    # a SIGTERM (`timeout`, a kill) would end the process without the `finally` below and
    # leave every daemon of the lab on one CPU: seen, Swift's 45 then served 2-5 ops/s
    on_term = (signal.signal(signal.SIGTERM, _exit_on_term)
               if threading.current_thread() is threading.main_thread() else None)
    try:
        for pid in lab_pids(kind):
            try:
                daemons[pid] = os.sched_getaffinity(pid)
            except ProcessLookupError:
                continue
            _set_threads(pid, {servers})
        os.sched_setaffinity(0, {client})
        yield servers, client
    finally:
        # every thread the daemon has now: those it started meanwhile inherited the pin
        for pid, mask in daemons.items():
            _set_threads(pid, mask)
        os.sched_setaffinity(0, own)
        if on_term is not None:
            signal.signal(signal.SIGTERM, on_term)


def _exit_on_term(signum, frame) -> None:
    raise SystemExit(128 + signum)


def _set_threads(pid: int, mask: set[int]) -> None:
    for tid in threads_of(pid):
        try:
            os.sched_setaffinity(tid, mask)
        except ProcessLookupError:  # a thread that ended meanwhile
            pass
