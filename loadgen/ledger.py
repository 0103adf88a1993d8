"""The integrity ledger: every acknowledged write, so a verify can read it back.

An overwrite writes the object's next version (payload.PayloadSource): the ledger hands
out version numbers, unique per object even when two overwrites of it overlap, and keeps
the newest version acknowledged.

Objects picked for a delete leave the ledger when the delete is issued: a
delete that times out may or may not have happened, and is not a loss.
Random picks are O(1) (a list plus an index, swap-remove on delete).

An object being read is not given to a delete until its read has completed: a delete
issued after the read may reach the cluster first, and the read's "not found" (Swift's
404, librados' ENOENT) would be the workload's own race, counted as the cluster's error.
On the Swift lab at 20 ops/s, with 20 objects and reads of 300-800 ms, two of eight P8
baselines failed on such 404s.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    container: str
    name: str
    size: int
    version: int = 0


class Ledger:
    def __init__(self, seed: int = 1):
        self._entries: list[Entry] = []
        self._index: dict[tuple[str, str], int] = {}
        self._reading: dict[tuple[str, str], int] = {}  # reads in flight, per object
        self._issued: dict[tuple[str, str], int] = {}  # the newest version handed out
        self._lock = threading.Lock()
        self._random = random.Random(seed)

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, container: str, name: str, size: int, version: int = 0) -> None:
        """An acknowledged write; an older version than the one held changes nothing."""
        key = (container, name)
        with self._lock:
            if key in self._index:
                i = self._index[key]
                if version >= self._entries[i].version:
                    self._entries[i] = Entry(container, name, size, version)
                return
            self._index[key] = len(self._entries)
            self._entries.append(Entry(container, name, size, version))

    def next_version(self, container: str, name: str) -> int:
        """A version of the object no write has carried yet (its first write is 0)."""
        key = (container, name)
        with self._lock:
            version = self._issued.get(key, 0) + 1
            self._issued[key] = version
            return version

    def pick(self) -> Entry | None:
        """An entry to read: held from deletes until `done_reading`."""
        with self._lock:
            if not self._entries:
                return None
            entry = self._entries[self._random.randrange(len(self._entries))]
            key = (entry.container, entry.name)
            self._reading[key] = self._reading.get(key, 0) + 1
            return entry

    def done_reading(self, container: str, name: str) -> None:
        """The read of a picked entry completed (whatever its outcome)."""
        key = (container, name)
        with self._lock:
            left = self._reading.get(key, 0) - 1
            if left > 0:
                self._reading[key] = left
            else:
                self._reading.pop(key, None)

    def take(self) -> Entry | None:
        """Pick an entry no read is in flight on, and remove it (for a delete); None when
        there is none."""
        with self._lock:
            count = len(self._entries)
            if not count:
                return None
            start = self._random.randrange(count)
            # reads in flight are at most the loop's in-flight bound: few are skipped
            i = next((j % count for j in range(start, start + count)
                      if (self._entries[j % count].container,
                          self._entries[j % count].name) not in self._reading), None)
            if i is None:
                return None
            entry = self._entries[i]
            last = self._entries.pop()
            del self._index[(entry.container, entry.name)]
            if i < len(self._entries):
                self._entries[i] = last
                self._index[(last.container, last.name)] = i
            return entry

    def entries(self) -> list[Entry]:
        with self._lock:
            return list(self._entries)
