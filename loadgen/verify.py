"""The verify phase: read every acknowledged object back and compare its content."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from .ledger import Entry
from .openloop import AsyncDriver
from .payload import PayloadSource


@dataclass
class VerifyResult:
    checked: int = 0
    missing: list[str] = field(default_factory=list)
    corrupt: list[str] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)  # name -> error class

    @property
    def ok(self) -> bool:
        return not (self.missing or self.corrupt or self.unreadable)

    def as_dict(self) -> dict:
        return {"checked": self.checked, "lost_objects": len(self.missing),
                "corrupt_objects": len(self.corrupt), "unreadable_objects": len(self.unreadable),
                "missing": self.missing[:100], "corrupt": self.corrupt[:100],
                "unreadable": dict(list(self.unreadable.items())[:100])}


def verify(driver: AsyncDriver, entries: list[Entry], payloads: PayloadSource,
           concurrency: int = 32, timeout_s: float = 600.0) -> VerifyResult:
    """Read each entry back; ENOENT is missing, other content is corrupt."""
    result = VerifyResult()
    slots = threading.Semaphore(concurrency)
    lock = threading.Lock()
    finished = threading.Event()
    pending = [len(entries)]
    if not entries:
        return result

    def reader(entry: Entry):
        def done(ok: bool, nbytes: int, error: str | None, data: bytes | None) -> None:
            with lock:
                result.checked += 1
                where = f"{entry.container}/{entry.name}"
                if ok and data == payloads.content(entry.name, entry.size):
                    pass
                elif ok:
                    result.corrupt.append(where)
                elif error in ("ENOENT", "404"):
                    result.missing.append(where)
                else:
                    result.unreadable[where] = error or "unknown"
                pending[0] -= 1
                if pending[0] == 0:
                    finished.set()
            slots.release()
        return done

    deadline = time.monotonic() + timeout_s
    for entry in entries:
        if not slots.acquire(timeout=max(0.0, deadline - time.monotonic())):
            break
        driver.read(entry.container, entry.name, entry.size, reader(entry))
    if not finished.wait(max(0.0, deadline - time.monotonic())):
        raise TimeoutError(f"verify: {pending[0]} reads still pending after {timeout_s:.0f} s")
    return result
