"""Object content derived from the object's name and the run's seed.

Nothing large is stored: the ledger keeps (name, size) and the content is
recomputed at verify time. Each name gets its own window into one random
buffer made from the seed, so generating a payload is a slice, not a hash loop.
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

    def _key(self, name: str) -> int:
        return zlib.crc32(name.encode()) ^ (self.seed * 2654435761 & 0xFFFFFFFF)

    def size_of(self, name: str) -> int:
        if self.max_size == self.min_size:
            return self.min_size
        return self.min_size + self._key(name) % (self.max_size - self.min_size + 1)

    def offset(self, name: str, size: int) -> int:
        """Where the content of `name` at `size` starts in `buffer`."""
        return self._key(name) % (len(self.buffer) - size)

    def content(self, name: str, size: int | None = None) -> bytes:
        size = self.size_of(name) if size is None else size
        offset = self.offset(name, size)
        return self.buffer[offset:offset + size]

    def matches(self, name: str, size: int, data: bytes | None) -> bool:
        """Whether `data` is the content of `name` at `size`; compared in place (a read's
        check, once per operation, copies nothing)."""
        if data is None or len(data) != size:
            return False
        return self.buffer.startswith(data, self.offset(name, size))
