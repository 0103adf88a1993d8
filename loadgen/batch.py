"""Many single-object calls at a bounded concurrency: the verify and remove passes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
# (entry, done): issue one driver call for the entry, answered through `done`
Issue = Callable[[T, Callable[[bool, int, str | None, bytes | None], None]], None]
# (entry, ok, error, data): what the answer means; called under one lock
Settle = Callable[[T, bool, str | None, bytes | None], None]


def each(entries: Sequence[T], issue: Issue, settle: Settle, what: str, calls: str,
         concurrency: int = 32, timeout_s: float = 600.0) -> None:
    """Issue a call per entry, at most `concurrency` at a time; return once every call has
    answered. TimeoutError says how many `calls` of `what` were still pending after
    `timeout_s`."""
    if not entries:
        return
    slots = threading.Semaphore(concurrency)
    lock = threading.Lock()
    finished = threading.Event()
    pending = [len(entries)]

    def answer(entry: T):
        def done(ok: bool, nbytes: int, error: str | None, data: bytes | None) -> None:
            with lock:
                settle(entry, ok, error, data)
                pending[0] -= 1
                if pending[0] == 0:
                    finished.set()
            slots.release()
        return done

    deadline = time.monotonic() + timeout_s
    for entry in entries:
        if not slots.acquire(timeout=max(0.0, deadline - time.monotonic())):
            break
        issue(entry, answer(entry))
    if not finished.wait(max(0.0, deadline - time.monotonic())):
        raise TimeoutError(f"{what}: {pending[0]} {calls} still pending after {timeout_s:.0f} s")
