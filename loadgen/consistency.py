"""What an object store showed a load, classified as Jepsen's set and register checkers do.

A history holds what the load did (each write of an object's version, each delete, with
its outcome: acknowledged "ok", "failed", or "unknown" when it timed out) and what it saw
(reads: the version served, or None for not there; complete listings of a container). Every
operation has its start and its end on the load's monotonic clock; a version is unique to
one write of one object, so a read names the write it came from.

Only real-time order counts: an operation precedes another when it ended before the other
started. Two that overlap may take effect in either order, so nothing is charged to the
store that a legal order of overlapping operations explains. An operation whose outcome is
not known may take effect at any time after it began, even after its timeout, so it
overlaps everything that follows it. The classes:

- lost: acknowledged, and not there at the final read;
- stale: a version served after a newer write of the object was acknowledged;
- resurrected: served after the object's delete was acknowledged, or listed by a listing
  that started at least `listing_delay_s` after it (a listing lags by design: Swift's
  container updates are asynchronous);
- listing gap: acknowledged, not deleted, and missing from a listing that started at least
  `listing_delay_s` after the acknowledgement;
- recovered: a write whose outcome was unknown, found later (not a fault of the store:
  what the client could not know);
- unexpected: a version no write of the object carried, or whose write the store refused
  (answered as failed: it promised the version would not exist); or, when the listings
  hold only the load's own names, a listed object the load never wrote.

Each finding keeps the time since the acknowledgement it contradicts (None where there is
none), so a report can say how long a store took to converge.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

OK, FAILED, UNKNOWN = "ok", "failed", "unknown"
# a write the history could not record (its bound was reached, or it never completed):
# of unknown effect, as UNKNOWN, but not "recovered" when found (nobody timed out)
UNRECORDED = "unrecorded"
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


def check(history: History, listing_delay_s: float = 0.0,
          listed_are_ours: bool = False) -> list[Finding]:
    """Every finding of the history, in the order of the observations that show them.
    `listed_are_ours`: the listings hold only names the load may have written (its own
    prefix), so a listed name no operation of the history concerns is "unexpected"."""
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
    live = {container: _LiveKeys(keys, writes, deletes)
            for container, keys in _by_container((*writes, *deletes)).items()}
    unexpected: set[Key] = set()
    for listing in sorted(history.listings, key=lambda listing: listing.start):
        if listing.container in live:
            candidates = live[listing.container].at(listing)
            findings.extend(_listing_findings(listing, candidates, writes, deletes,
                                              listing_delay_s))
        if listed_are_ours:
            for name in sorted(listing.names):
                key = (listing.container, name)
                if key not in writes and key not in deletes and key not in unexpected:
                    unexpected.add(key)  # once per object: it was never written
                    findings.append(Finding("unexpected", key, None,
                                            "listed, and never written"))
    return findings


def _by_container(keys) -> dict[str, list[Key]]:
    out: dict[str, list[Key]] = defaultdict(list)
    for key in dict.fromkeys(keys):
        out[key[0]].append(key)
    return out


class _LiveKeys:
    """The keys of one container a listing can say something of, swept in the listings'
    order of start, so that each listing costs what it lists and what was live, not every
    key the container ever held: a listed one (resurrected?), or one acknowledged as
    written before the listing began and with no delete that did not fail begun before it
    (a gap?). Any other key, unlisted, gets no finding from the checks that follow."""

    def __init__(self, keys: list[Key], writes: dict[Key, list[Write]],
                 deletes: dict[Key, list[Delete]]):
        self._keys = set(keys)
        self._born = sorted(  # (first acknowledged write's end, key)
            (min(w.end for w in writes[k] if w.outcome == OK), k)
            for k in keys if any(w.outcome == OK for w in writes.get(k, ())))
        self._dying = sorted(  # (first delete's start, key), for deletes that did not fail
            (min(d.start for d in deletes[k] if d.outcome != FAILED), k)
            for k in keys if any(d.outcome != FAILED for d in deletes.get(k, ())))
        self._next_born = self._next_dying = 0
        self._live: set[Key] = set()
        self._dead: set[Key] = set()

    def at(self, listing: Listing) -> set[Key]:
        while (self._next_born < len(self._born)
               and self._born[self._next_born][0] < listing.start):
            key = self._born[self._next_born][1]
            if key not in self._dead:
                self._live.add(key)
            self._next_born += 1
        while (self._next_dying < len(self._dying)
               and self._dying[self._next_dying][0] < listing.start):
            key = self._dying[self._next_dying][1]
            self._dead.add(key)
            self._live.discard(key)
            self._next_dying += 1
        container = next(iter(self._keys))[0]
        listed = {(container, name) for name in listing.names} & self._keys
        return self._live | listed


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
    if served.outcome == FAILED:
        return [Finding("unexpected", read.key, read.start - served.end,
                        f"version {read.version} served, though its write was refused")]
    if served.outcome != OK:
        return []  # it may have taken effect after anything acknowledged since
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
    if any(d.outcome != FAILED and (d.end > last.start or d.outcome != OK) for d in deletes):
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
            if write.outcome == UNKNOWN and at is not None:  # found during it: 0 s after
                found.append(Finding("recovered", key, max(0.0, at - write.end),
                                     f"version {write.version}, of unknown outcome, found"))
    return found


def _listing_findings(listing: Listing, keys: set[Key], writes: dict[Key, list[Write]],
                      deletes: dict[Key, list[Delete]], delay_s: float) -> list[Finding]:
    found = []
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
                  if op is not last and op.outcome != FAILED
                  and (op.end > last.start or op.outcome != OK) and op.start < listing.end]
        if racing:
            continue
        since = listing.start - last.end
        if since < delay_s:
            continue
        if isinstance(last, Delete) and listed:
            found.append(Finding("resurrected", key, since,
                                 f"listed {since:.3f} s after its delete was acknowledged"))
        elif isinstance(last, Write) and not listed:
            found.append(Finding("listing_gap", key, since,
                                 f"not listed {since:.3f} s after it was acknowledged"))
    return found
