"""A discovered cluster before it is written: inventory entries, each with where it came
from and what a person must still check.

The inventory loader (clusters/access/inventory.py) reads the entries' values; the source and
the TODOs become the YAML comments beside them (clusters/discovery/render.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TODO = "TODO"  # the marker of everything discovery could not learn: `grep -n TODO`


@dataclass(frozen=True)
class Entry:
    """One inventory value (a node, a disk, a service, the ssh or client mapping)."""

    value: dict[str, Any]
    source: str = ""  # where it came from, e.g. "CRUSH host node1, osd.0's public address"
    todos: tuple[str, ...] = ()  # what could not be learned, one sentence each


@dataclass(frozen=True)
class DraftCluster:
    name: str
    kind: str
    origin: str  # what was asked, e.g. "monitors at 10.77.0.1, fsid ..."
    ssh: Entry
    nodes: tuple[Entry, ...]
    disks: tuple[Entry, ...]
    services: tuple[Entry, ...]
    client: Entry
    notes: tuple[str, ...] = ()  # cluster-wide remarks and TODOs (BMCs, proxies, ...)
    client_hints: tuple[str, ...] = ()  # commented-out client lines the user may enable

    def spec(self) -> dict[str, Any]:
        """The cluster as the inventory file holds it."""
        # a cluster found by discovery is someone's real cluster: it takes no fault until a
        # person says so (clusters/safety/protection.py)
        spec: dict[str, Any] = {"kind": self.kind, "chaos": "protected"}
        if self.ssh.value:
            spec["ssh"] = self.ssh.value
        spec["nodes"] = [e.value for e in self.nodes]
        spec["disks"] = [e.value for e in self.disks]
        spec["services"] = [e.value for e in self.services]
        spec["client"] = self.client.value
        return spec

    def todo_count(self) -> int:
        entries = (self.ssh, *self.nodes, *self.disks, *self.services, self.client)
        return (sum(len(e.todos) for e in entries)
                + sum(1 for n in (*self.notes, *self.client_hints) if n.startswith(TODO)))
