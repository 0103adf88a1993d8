"""The verify phase: read every acknowledged object back and compare its content."""

from __future__ import annotations

from dataclasses import dataclass, field

from .batch import each
from .ledger import Entry
from .openloop import AsyncDriver
from .payload import PayloadSource

GONE = ("ENOENT", "404", "404 NoSuchKey")  # not there: RADOS's, Swift's and S3's words


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

    def settle(entry: Entry, ok: bool, error: str | None, data: bytes | None) -> None:
        result.checked += 1
        where = f"{entry.container}/{entry.name}"
        if ok and data == payloads.content(entry.name, entry.size):
            pass
        elif ok:
            result.corrupt.append(where)
        elif error in GONE:
            result.missing.append(where)
        else:
            result.unreadable[where] = error or "unknown"

    each(entries, lambda e, done: driver.read(e.container, e.name, e.size, done), settle,
         "verify", "reads", concurrency, timeout_s)
    return result
