"""Object content derived from the object's name and the run's seed.

Nothing large is stored: the ledger keeps (name, size, version) and the content is
recomputed at verify time. Each name and version (each overwrite of an object writes the
next version) gets its own window into one random buffer made from the seed, so
generating a payload is a slice, not a hash loop, and a read tells which version it got.
"""

from __future__ import annotations

import random
import zlib

_BUFFER_SIZE = 16 * 1024 * 1024


class PayloadSource:
    def __init__(self, seed: int, min_size: int, max_size: int):
        self.seed = seed
        self.min_size = min_size
        self.max_size = max_size
        size = max(_BUFFER_SIZE, max_size * 2)
        self.buffer = random.Random(seed).randbytes(size)  # every content is a window of it

    def _key(self, name: str, version: int = 0) -> int:
        # version 0 keeps the key (and so the content) a name had before versions existed
        return (zlib.crc32(name.encode()) ^ (self.seed * 2654435761 & 0xFFFFFFFF)
                ^ (version * 0x9E3779B1 & 0xFFFFFFFF))

    def size_of(self, name: str, version: int = 0) -> int:
        if self.max_size == self.min_size:
            return self.min_size
        return self.min_size + self._key(name, version) % (self.max_size - self.min_size + 1)

    def offset(self, name: str, size: int, version: int = 0) -> int:
        """Where the content of `name` at `size` (its `version`) starts in `buffer`."""
        return self._key(name, version) % (len(self.buffer) - size)

    def content(self, name: str, size: int | None = None, version: int = 0) -> bytes:
        size = self.size_of(name, version) if size is None else size
        offset = self.offset(name, size, version)
        return self.buffer[offset:offset + size]

    def matches(self, name: str, size: int, data: bytes | None, version: int = 0) -> bool:
        """Whether `data` is the content of `name` at `size` (its `version`); compared in
        place (a read's check, once per operation, copies nothing)."""
        if data is None or len(data) != size:
            return False
        return self.buffer.startswith(data, self.offset(name, size, version))
