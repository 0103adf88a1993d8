"""The remove pass: delete the objects a run acknowledged, once nobody needs them read back."""

from __future__ import annotations

from dataclasses import dataclass, field

from .batch import each
from .ledger import Entry
from .openloop import AsyncDriver
from .verify import GONE


@dataclass
class RemoveResult:
    deleted: int = 0
    already_gone: int = 0  # lost in the run, or removed before
    failed: dict[str, str] = field(default_factory=dict)  # name -> error class

    @property
    def ok(self) -> bool:
        return not self.failed

    def as_dict(self) -> dict:
        return {"deleted": self.deleted, "already_gone": self.already_gone,
                "failed": len(self.failed), "failures": dict(list(self.failed.items())[:100])}


def remove(driver: AsyncDriver, entries: list[Entry], concurrency: int = 32,
           timeout_s: float = 600.0) -> RemoveResult:
    """Delete each entry; an object already gone counts as such, not as a failure."""
    result = RemoveResult()

    def settle(entry: Entry, ok: bool, error: str | None, data: bytes | None) -> None:
        if ok:
            result.deleted += 1
        elif error in GONE:
            result.already_gone += 1
        else:
            result.failed[f"{entry.container}/{entry.name}"] = error or "unknown"

    each(entries, lambda e, done: driver.delete(e.container, e.name, done), settle,
         "remove", "deletes", concurrency, timeout_s)
    return result
