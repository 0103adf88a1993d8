"""What this machine can hold: its memory, from /proc/meminfo (read, never cached, so a
test or a smaller container sees its own)."""

from __future__ import annotations

from pathlib import Path

MEMINFO = Path("/proc/meminfo")


def memory_bytes(meminfo: Path = MEMINFO) -> int | None:
    """MemTotal in bytes; None where there is no /proc/meminfo to read."""
    try:
        for line in meminfo.read_text().splitlines():
            name, _, value = line.partition(":")
            if name == "MemTotal":
                return int(value.split()[0]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        return None
    return None
