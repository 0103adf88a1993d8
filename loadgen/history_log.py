"""The load's history, recorded as operations complete, for loadgen.consistency.

Each write carries a version of its object (payload.PayloadSource gives every name and
version its own bytes), so a read is matched to the write it came from by its content:
the object's versions are tried newest first, and the newest is what a healthy store
serves, so one comparison is the usual cost. Bytes no version of the object ever carried
are not a version: the read is corrupt (the open loop counts it so), not recorded here.

The history is bounded: past MAX_OPERATIONS it stops recording and says how many
operations it left out, so a long run's checker covers its first part, and says so. A
listing weighs one operation per name it holds (a listing of a big container is as big).
"""

from __future__ import annotations

import math
import threading

from .consistency import (
    OK,
    UNKNOWN,
    UNRECORDED,
    Delete,
    History,
    Key,
    Listing,
    Read,
    Write,
    check,
    summary,
)
from .outcomes import outcome
from .payload import PayloadSource

MAX_OPERATIONS = 1_000_000  # ~150 MB of history at most
GONE = ("ENOENT", "404", "404 NoSuchKey")  # not there: RADOS's, Swift's and S3's words


class HistoryLog:
    def __init__(self, payloads: PayloadSource, limit: int = MAX_OPERATIONS,
                 prefix: str | None = None):
        """`prefix`: what every name this load writes begins with (its session's tag). A
        listing then keeps only such names (others' objects share the containers), and one
        of them the load never wrote is "unexpected"."""
        self.payloads = payloads
        self.prefix = prefix
        self.history = History()
        self.limit = limit
        self.left_out = 0
        self._weight = 0  # operations recorded, a listing counting its names
        self._versions: dict[Key, dict[int, int]] = {}  # every version issued: its size
        self._lock = threading.Lock()

    def _room(self, weight: int = 1) -> bool:
        """Whether one more operation is recorded (the lock is held)."""
        if self._weight + weight <= self.limit:
            self._weight += weight
            return True
        self.left_out += 1
        return False

    def issued_write(self, key: Key, version: int, size: int) -> None:
        """A write of `version` is about to be sent: from now on a read may serve it."""
        with self._lock:
            self._versions.setdefault(key, {})[version] = size

    def adopt(self, key: Key, version: int, size: int, at: float) -> None:
        """An object acknowledged before this history began (another loop's, a prefill
        nobody recorded): as if written and acknowledged at `at`, if it is not known."""
        with self._lock:
            versions = self._versions.setdefault(key, {})
            if version in versions:
                return
            versions[version] = size
            if self._room():
                self.history.writes.append(Write(key, version, at, at, OK))

    def wrote(self, key: Key, version: int, start: float, end: float, ok: bool,
              error: str | None) -> None:
        with self._lock:
            if self._room():
                self.history.writes.append(Write(key, version, start, end,
                                                 outcome(ok, error)))

    def deleted(self, key: Key, start: float, end: float, ok: bool,
                error: str | None) -> None:
        # "not there" deleted nothing, yet leaves the object absent: as good as done
        done = ok or error in GONE
        with self._lock:
            if self._room():
                self.history.deletes.append(Delete(key, start, end, outcome(done, error)))

    def read(self, key: Key, start: float, end: float, ok: bool, error: str | None,
             data: bytes | None, final: bool = False) -> bool:
        """Record what a read saw; False when it served bytes no version of the object
        carried (corrupt). A read that failed otherwise saw nothing and is not recorded."""
        if not ok:
            if error in GONE:
                self._add_read(Read(key, start, end, None, final))
            return True
        version = self.version_of(key, data)
        if version is None:
            return False
        self._add_read(Read(key, start, end, version, final))
        return True

    def listed(self, container: str, start: float, end: float, names: frozenset[str]) -> None:
        if self.prefix is not None:
            names = frozenset(name for name in names if name.startswith(self.prefix))
        with self._lock:
            if self._room(max(1, len(names))):
                self.history.listings.append(Listing(container, start, end, names))

    def version_of(self, key: Key, data: bytes | None) -> int | None:
        """The version of the object whose bytes `data` are; None if none is."""
        with self._lock:
            versions = sorted(self._versions.get(key, {}).items(), reverse=True)
        name = key[1]
        for version, size in versions:
            if self.payloads.matches(name, size, data, version):
                return version
        return None

    def versions(self, key: Key) -> int:
        """How many versions of the object were issued."""
        with self._lock:
            return len(self._versions.get(key, ()))

    def read_size(self, key: Key, size: int) -> int:
        """How much a read of the object asks for: its acknowledged size, or the largest any
        object may have once it has several versions (a newer one may be larger)."""
        return size if self.versions(key) <= 1 else max(size, self.payloads.max_size)

    def unknown_writes(self) -> list[tuple[Key, int, int]]:
        """(key, version, size) of each write whose outcome is unknown: the verify reads
        them, and one found is "recovered"."""
        with self._lock:
            return [(w.key, w.version, self._versions[w.key][w.version])
                    for w in self.history.writes if w.outcome == UNKNOWN]

    def deleted_keys(self) -> list[Key]:
        """Objects whose delete was acknowledged: the verify reads them, and one served is
        "resurrected"."""
        with self._lock:
            return list(dict.fromkeys(d.key for d in self.history.deletes if d.outcome == OK))

    def containers(self) -> list[str]:
        """The containers of the writes recorded, in their first write's order."""
        with self._lock:
            return list(dict.fromkeys(w.key[0] for w in self.history.writes))

    def last_change_end(self) -> float:
        """When the last write or delete recorded ended (0.0: none)."""
        with self._lock:
            return max((op.end for op in (*self.history.writes, *self.history.deletes)),
                       default=0.0)

    def _add_read(self, read: Read) -> None:
        with self._lock:
            if self._room():
                self.history.reads.append(read)

    def result(self, listing_delay_s: float) -> dict:
        """Each class's count, longest time since the acknowledgement and examples, and
        what the history covered."""
        with self._lock:
            history = History(list(self.history.writes), list(self.history.deletes),
                              list(self.history.reads), list(self.history.listings))
            left_out = self.left_out
            issued = {(key, version) for key, versions in self._versions.items()
                      for version in versions}
            issued_keys = {key: list(versions) for key, versions in self._versions.items()
                           if versions}
        # a version read, or a name listed, whose write is not recorded (the bound, or a
        # write still in flight when the load stopped) was issued all the same: of unknown
        # effect, not unexpected
        recorded = {(w.key, w.version) for w in history.writes}
        for read in history.reads:
            seen = (read.key, read.version)
            if read.version is not None and seen not in recorded and seen in issued:
                history.writes.append(Write(read.key, read.version, -math.inf, math.inf,
                                            UNRECORDED))
                recorded.add(seen)
        known = {key for key, _ in recorded} | {d.key for d in history.deletes}
        for listing in history.listings:
            for name in listing.names:
                key = (listing.container, name)
                if key not in known and key in issued_keys:
                    history.writes.append(Write(key, max(issued_keys[key]), -math.inf,
                                                math.inf, UNRECORDED))
                    known.add(key)
        return {"classes": summary(check(history, listing_delay_s,
                                         listed_are_ours=self.prefix is not None)),
                "operations": len(history.writes) + len(history.deletes)
                + len(history.reads) + len(history.listings),
                "listings": len(history.listings),
                "left_out": left_out, "listing_delay_s": listing_delay_s}
