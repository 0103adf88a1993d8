"""The verify phase: read every acknowledged object back and compare its content.

With the load's history (loadgen.history_log), the verify also reads what the checker
needs to close its classes: each write whose outcome was unknown (found: "recovered") and
each object whose delete was acknowledged (served: "resurrected"); every read of this phase
enters the history as final. Those extra reads count in no figure of the verify itself.
Last, it lists each container once (an object written and not listed: a "listing gap"; a
deleted one listed: "resurrected"), LISTING_DELAY_S or more after the load's last write
or delete.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from .batch import each
from .consistency import EXAMPLES
from .history_log import GONE, HistoryLog
from .ledger import Entry
from .openloop import AsyncDriver, listed_names
from .payload import PayloadSource

log = logging.getLogger(__name__)
EXTRA_READS = 10_000  # at most this many reads of unknown writes and of deleted objects
# how long after its acknowledgement a write must be listed: Swift and RGW update the
# listing within the PUT when all is well, so a second is slack, and a gap is a real one
LISTING_DELAY_S = 1.0


@dataclass
class VerifyResult:
    checked: int = 0
    missing: list[str] = field(default_factory=list)
    corrupt: list[str] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)  # name -> error class
    consistency: dict | None = None  # loadgen.history_log.HistoryLog.result

    @property
    def ok(self) -> bool:
        return not (self.missing or self.corrupt or self.unreadable)

    def as_dict(self) -> dict:
        out = {"checked": self.checked, "lost_objects": len(self.missing),
               "corrupt_objects": len(self.corrupt), "unreadable_objects": len(self.unreadable),
               "missing": self.missing[:100], "corrupt": self.corrupt[:100],
               "unreadable": dict(list(self.unreadable.items())[:100])}
        if self.consistency is not None:
            out["consistency"] = self.consistency
        return out


def verify(driver: AsyncDriver, entries: list[Entry], payloads: PayloadSource,
           concurrency: int = 32, timeout_s: float = 600.0,
           history: HistoryLog | None = None,
           listing_delay_s: float = LISTING_DELAY_S) -> VerifyResult:
    """Read each entry back; ENOENT is missing, other content is corrupt (a version of the
    object other than the entry's, which only a history can tell, is for the checker)."""
    result = VerifyResult()
    begun: dict[tuple[str, str], float] = {}

    def read(entry: Entry, done) -> None:
        key = (entry.container, entry.name)
        begun[key] = time.monotonic()
        size = history.read_size(key, entry.size) if history else entry.size
        driver.read(entry.container, entry.name, size, done)

    def final(entry: Entry, ok: bool, error: str | None, data: bytes | None) -> bool:
        """Into the history; whether the bytes are a version of the object."""
        if history is None:
            return False
        key = (entry.container, entry.name)
        return history.read(key, begun[key], time.monotonic(), ok, error, data, final=True) \
            and ok

    def settle(entry: Entry, ok: bool, error: str | None, data: bytes | None) -> None:
        result.checked += 1
        where = f"{entry.container}/{entry.name}"
        known = final(entry, ok, error, data)
        if ok and payloads.matches(entry.name, entry.size, data, entry.version):
            pass
        elif ok and not known:
            result.corrupt.append(where)
        elif not ok and error in GONE:
            result.missing.append(where)
        elif not ok:
            result.unreadable[where] = error or "unknown"

    each(entries, read, settle, "verify", "reads", concurrency, timeout_s)
    if history is not None:
        _read_the_rest(driver, entries, history, read, final, concurrency, timeout_s)
        _list_each(driver, history, listing_delay_s, concurrency, timeout_s)
        result.consistency = history.result(listing_delay_s)
    return result


def _list_each(driver: AsyncDriver, history: HistoryLog, delay_s: float,
               concurrency: int, timeout_s: float) -> None:
    """One listing of each container the history wrote to, into the history. A listing
    that fails, or does not answer in time, is logged and leaves its container unlisted
    (the checker says so)."""
    containers = history.containers()
    if not containers:
        return
    wait = history.last_change_end() + delay_s - time.monotonic()
    if wait > 0:
        time.sleep(wait)
    begun: dict[str, float] = {}

    def issue(container: str, done) -> None:
        begun[container] = time.monotonic()
        driver.list(container, done)

    def settle(container: str, ok: bool, error: str | None, data: bytes | None) -> None:
        if ok:
            history.listed(container, begun[container], time.monotonic(), listed_names(data))
        else:
            log.warning(f"verify: the listing of {container} failed: {error}")
    try:
        each(containers, issue, settle, "verify", "listings", concurrency, timeout_s)
    except TimeoutError as exc:
        log.warning(str(exc))


def _read_the_rest(driver, entries, history, read, final, concurrency, timeout_s) -> None:
    """The unknown writes and the deleted objects the ledger no longer holds."""
    held = {(e.container, e.name) for e in entries}
    extra = {key: Entry(key[0], key[1], size, version)
             for key, version, size in history.unknown_writes() if key not in held}
    for key in history.deleted_keys():
        if key not in held and key not in extra:
            extra[key] = Entry(key[0], key[1], history.payloads.max_size)
    try:  # they count in no figure of the verify: one that hangs must not void it
        each(list(extra.values())[:EXTRA_READS], read,
             lambda entry, ok, error, data: final(entry, ok, error, data), "verify",
             "reads of unknown writes and deleted objects", concurrency, timeout_s)
    except TimeoutError as exc:
        log.warning(str(exc))


def merged(results: list[dict]) -> dict:
    """The verifies of a run's drivers (VerifyResult.as_dict, each of its own share) as one:
    counts added, lists joined (the first 100), and the consistency classes added when every
    driver checked its history (each object is one driver's: its history is complete)."""
    out = {"checked": sum(r["checked"] for r in results),
           "lost_objects": sum(r["lost_objects"] for r in results),
           "corrupt_objects": sum(r["corrupt_objects"] for r in results),
           "unreadable_objects": sum(r["unreadable_objects"] for r in results),
           "missing": [n for r in results for n in r["missing"]][:100],
           "corrupt": [n for r in results for n in r["corrupt"]][:100],
           "unreadable": dict(list({k: v for r in results
                                    for k, v in r["unreadable"].items()}.items())[:100])}
    records = [r.get("consistency") for r in results]
    if records and all(records):
        out["consistency"] = _merged_consistency(records)
    return out


def _merged_consistency(records: list[dict]) -> dict:
    classes = {}
    for kind in records[0]["classes"]:
        found = [r["classes"][kind] for r in records]
        longest = [f["max_since_ack_s"] for f in found if f["max_since_ack_s"] is not None]
        classes[kind] = {"count": sum(f["count"] for f in found),
                         "objects": sum(f.get("objects", f["count"]) for f in found),
                         "max_since_ack_s": max(longest, default=None),
                         "examples": [e for f in found for e in f["examples"]][:EXAMPLES]}
    return {"classes": classes,
            **{key: sum(r.get(key, 0) for r in records)
               for key in ("operations", "listings", "left_out")},
            "listing_delay_s": records[0]["listing_delay_s"], "drivers": len(records)}
