"""The settings that decide how fast a cluster notices a fault and rebuilds, as one record.

A run reads them before its fault (clusters/ceph/recovery_settings.py,
clusters/swift/recovery_settings.py) and stores them, so that "redundant again 38 s after the
kill" can be set beside an operator's cluster or another release: a lab shortens the very
timers that set recovery times.

Each setting has the value the cluster runs with, where it was read (a daemon, a node's
configuration file), the release's default when it is known, and whether it is a timer
(seconds: lower is faster recovery). A value that differs across daemons or nodes keeps the
first one read and lists the others in `differs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Setting:
    name: str
    value: str | None  # None: not set and no default known
    default: str | None
    where: str  # "osd.0", "node1:/etc/swift/object-server.conf", "pool faultline"
    source: str = ""  # "default", "file", "mon" (Ceph's own word), "conf", "ring"
    timer: bool = False
    differs: list[str] = field(default_factory=list)  # "osd.3: 2"

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "default": self.default,
                "where": self.where, "source": self.source, "timer": self.timer,
                "differs": list(self.differs)}


def merge(settings: list[Setting]) -> list[Setting]:
    """One Setting per name: the first read, with the other places whose value differs."""
    by_name: dict[str, Setting] = {}
    for setting in settings:
        first = by_name.get(setting.name)
        if first is None:
            by_name[setting.name] = setting
        elif setting.value != first.value:
            first.differs.append(f"{setting.where}: {setting.value}")
    return list(by_name.values())
