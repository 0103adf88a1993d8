"""The integrity ledger: every acknowledged write, so a verify can read it back.

Objects picked for a delete leave the ledger when the delete is issued: a
delete that times out may or may not have happened, and is not a loss.
Random picks are O(1) (a list plus an index, swap-remove on delete).
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


class Ledger:
    def __init__(self, seed: int = 1):
        self._entries: list[Entry] = []
        self._index: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        self._random = random.Random(seed)

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, container: str, name: str, size: int) -> None:
        key = (container, name)
        with self._lock:
            if key in self._index:
                self._entries[self._index[key]] = Entry(container, name, size)
                return
            self._index[key] = len(self._entries)
            self._entries.append(Entry(container, name, size))

    def pick(self) -> Entry | None:
        with self._lock:
            if not self._entries:
                return None
            return self._entries[self._random.randrange(len(self._entries))]

    def take(self) -> Entry | None:
        """Pick an entry and remove it (for a delete)."""
        with self._lock:
            if not self._entries:
                return None
            i = self._random.randrange(len(self._entries))
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
