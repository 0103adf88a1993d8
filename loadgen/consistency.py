"""What an object store showed a load, classified as Jepsen's set and register checkers do.

A history holds what the load did (each write of an object's version, each delete, with
its outcome: acknowledged "ok", "failed", or "unknown" when it timed out) and what it saw
(reads: the version served, or None for not there; complete listings of a container). Every
operation has its start and its end on the load's monotonic clock; a version is unique to
one write of one object, so a read names the write it came from.

Only real-time order counts: an operation precedes another when it ended before the other
started. Two that overlap may take effect in either order, so nothing is charged to the
store that a legal order of overlapping operations explains. The classes:

- lost: acknowledged, and not there at the final read;
- stale: a version served after a newer write of the object was acknowledged;
- resurrected: served, or listed, after the object's delete was acknowledged;
- listing gap: acknowledged, not deleted, and missing from a listing that started at least
  `listing_delay_s` after the acknowledgement;
- recovered: a write whose outcome was unknown, found later (not a fault of the store:
  what the client could not know);
- unexpected: a version that no write of the object ever carried.

Each finding keeps the time since the acknowledgement it contradicts (None where there is
none), so a report can say how long a store took to converge.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

OK, FAILED, UNKNOWN = "ok", "failed", "unknown"
CLASSES = ("lost", "stale", "resurrected", "listing_gap", "recovered", "unexpected")
EXAMPLES = 5  # object names kept per class

Key = tuple[str, str]  # container, object name


@dataclass(frozen=True)
class Write:
    key: Key
    version: int
    start: float
    end: float
    outcome: str


@dataclass(frozen=True)
class Delete:
    key: Key
    start: float
    end: float
    outcome: str


@dataclass(frozen=True)
class Read:
    key: Key
    start: float
    end: float
    version: int | None  # None: the store said it is not there
    final: bool = False  # the verify phase's read, after the load


@dataclass(frozen=True)
class Listing:
    container: str
    start: float
    end: float
    names: frozenset[str]


@dataclass(frozen=True)
class Finding:
    kind: str
    key: Key
    since_ack_s: float | None
    detail: str


@dataclass
class History:
    writes: list[Write] = field(default_factory=list)
    deletes: list[Delete] = field(default_factory=list)
    reads: list[Read] = field(default_factory=list)
    listings: list[Listing] = field(default_factory=list)


def check(history: History, listing_delay_s: float = 0.0) -> list[Finding]:
    """Every finding of the history, in the order of the observations that show them."""
    writes: dict[Key, list[Write]] = defaultdict(list)
    for write in history.writes:
        writes[write.key].append(write)
    deletes: dict[Key, list[Delete]] = defaultdict(list)
    for delete in history.deletes:
        deletes[delete.key].append(delete)
    findings: list[Finding] = []
    for read in sorted(history.reads, key=lambda r: (r.final, r.start)):
        findings.extend(_read_findings(read, writes[read.key], deletes[read.key]))
    findings.extend(_recovered(history.reads, writes))
    for listing in sorted(history.listings, key=lambda listing: listing.start):
        findings.extend(_listing_findings(listing, writes, deletes, listing_delay_s))
    return findings


def summary(findings: list[Finding]) -> dict[str, dict]:
    """Per class: its count (of observations: a stale object read twice counts twice), the
    objects it concerns (one resurrected object both read and listed counts once), the
    longest time since the acknowledgement, a few examples."""
    out = {kind: {"count": 0, "objects": 0, "max_since_ack_s": None, "examples": []}
           for kind in CLASSES}
    seen: set[tuple[str, Key]] = set()
    for finding in findings:
        entry = out[finding.kind]
        entry["count"] += 1
        if (finding.kind, finding.key) not in seen:
            seen.add((finding.kind, finding.key))
            entry["objects"] += 1
        if finding.since_ack_s is not None:
            entry["max_since_ack_s"] = max(entry["max_since_ack_s"] or 0.0, finding.since_ack_s)
        name = "/".join(finding.key)
        if len(entry["examples"]) < EXAMPLES and name not in entry["examples"]:
            entry["examples"].append(name)
    return out


def _read_findings(read: Read, writes: list[Write], deletes: list[Delete]) -> list[Finding]:
    if read.version is None:
        return _absent(read, writes, deletes) if read.final else []
    served = next((w for w in writes if w.version == read.version), None)
    if served is None:
        return [Finding("unexpected", read.key, None,
                        f"version {read.version} was never written")]
    # the newest operation acknowledged before the read that surely came after the write
    # served (it started once that write had ended): the state the read should reflect
    newer = [op for op in (*writes, *deletes)
             if op.outcome == OK and op is not served and op.start > served.end
             and op.end < read.start]
    if not newer:
        return []
    last = max(newer, key=lambda op: op.end)
    since = read.start - last.end
    if isinstance(last, Delete):
        return [Finding("resurrected", read.key, since,
                        f"version {read.version} served {since:.3f} s after its delete "
                        "was acknowledged")]
    return [Finding("stale", read.key, since,
                    f"version {read.version} served {since:.3f} s after version "
                    f"{last.version} was acknowledged")]


def _absent(read: Read, writes: list[Write], deletes: list[Delete]) -> list[Finding]:
    """A final read found nothing: lost if the newest acknowledged write may not have been
    deleted since (no delete that did not fail started after it)."""
    acked = [w for w in writes if w.outcome == OK and w.end < read.start]
    if not acked:
        return []
    last = max(acked, key=lambda w: w.end)
    if any(d.outcome != FAILED and d.end > last.start for d in deletes):
        return []  # deleted, or perhaps deleted
    return [Finding("lost", read.key, read.start - last.end,
                    f"version {last.version}, acknowledged, is not there")]


def _recovered(reads: list[Read], writes: dict[Key, list[Write]]) -> list[Finding]:
    seen: dict[tuple[Key, int], float] = {}
    for read in reads:
        if read.version is not None:
            at = seen.get((read.key, read.version))
            seen[(read.key, read.version)] = read.start if at is None else min(at, read.start)
    found = []
    for key, mine in writes.items():
        for write in mine:
            at = seen.get((key, write.version))
            if write.outcome == UNKNOWN and at is not None:
                found.append(Finding("recovered", key, at - write.end,
                                     f"version {write.version}, of unknown outcome, found"))
    return found


def _listing_findings(listing: Listing, writes: dict[Key, list[Write]],
                      deletes: dict[Key, list[Delete]], delay_s: float) -> list[Finding]:
    found = []
    keys = {k for k in (*writes, *deletes) if k[0] == listing.container}
    for key in sorted(keys):
        mine, gone = writes.get(key, []), deletes.get(key, [])
        listed = key[1] in listing.names
        # what was surely in place before the listing began: the last acknowledged
        # operation, with nothing else begun before the listing ended that could change it
        done = [op for op in (*mine, *gone) if op.outcome == OK and op.end < listing.start]
        if not done:
            continue
        last = max(done, key=lambda op: op.end)
        racing = [op for op in (*mine, *gone)
                  if op is not last and op.outcome != FAILED and op.end > last.start
                  and op.start < listing.end]
        if racing:
            continue
        since = listing.start - last.end
        if isinstance(last, Delete) and listed:
            found.append(Finding("resurrected", key, since,
                                 f"listed {since:.3f} s after its delete was acknowledged"))
        elif isinstance(last, Write) and not listed and since >= delay_s:
            found.append(Finding("listing_gap", key, since,
                                 f"not listed {since:.3f} s after it was acknowledged"))
    return found
