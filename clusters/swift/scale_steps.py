"""The steps of scaling a Swift cluster out and in (clusters/swift/new_device.py says what is
added and where): change the rings, push them to every node, wait for replication to move
the data, and make or delete the device on its node.
"""

from __future__ import annotations

import os
import time
from typing import Any

from clusters.access.inventory import Cluster
from clusters.access.ssh import NodeShell, run_on_node
from clusters.exceptions import AdminCommandFailed, ClusterError, InvalidScale
from clusters.polling import poll_until
from clusters.swift.admin import DEFAULT_PORTS, SwiftAdmin, poll_pause
from clusters.swift.new_device import (
    RING_RELOAD_S,
    RINGS,
    ScaleDevice,
    create_command,
    delete_command,
    digest,
    parse_partitions,
    partitions_command,
    present_command,
    push_commands,
)
from clusters.swift.ring_edit import SCALE_META, edit_rings
from clusters.swift.state import SwiftState


def rings_dir(cluster: Cluster) -> str:
    swift_dir = cluster.client.get("swift_dir")
    if not swift_dir:
        raise InvalidScale(f"{cluster.name}: client.swift_dir (where its rings and builders "
                           "are) is not in the inventory")
    return swift_dir


def last_push(cluster: Cluster) -> float:
    """When the rings were last changed: the newest ring file's modification time."""
    times = [os.path.getmtime(path) for ring in RINGS
             if os.path.exists(path := os.path.join(rings_dir(cluster), f"{ring}.ring.gz"))]
    if not times:
        raise InvalidScale(f"no ring file in {rings_dir(cluster)}")
    return max(times)


def device_in_rings(cluster: Cluster, dev: ScaleDevice) -> dict[str, Any]:
    """Where the device stands in each ring (present, weight, meta, parts)."""
    return edit_rings(rings_dir(cluster), {"op": "show", "rings": list(RINGS),
                                           "ip": dev.address, "device": dev.device})


def check_ours(dev: ScaleDevice, standing: dict[str, Any]) -> None:
    """Refuse a device in the rings that scale did not add."""
    for ring, seen in standing.items():
        if seen["present"] and seen["meta"] != SCALE_META:
            raise InvalidScale(f"{dev.device} on {dev.node} is in the {ring} ring but was not "
                               "added by scale: refusing to remove it")


def push_rings(cluster: Cluster, rings: tuple[str, ...]) -> dict[str, Any]:
    """Push each ring's staged copy to every storage node, check it landed whole there, then
    make it the admin's copy. Returns when it was pushed and to which nodes."""
    source = rings_dir(cluster)
    ring_dir = cluster.client.get("node_swift_dir") or source
    pushed = {}
    for ring in rings:
        staged = os.path.join(source, f"{ring}.ring.gz.staged")
        if not os.path.exists(staged):
            continue
        with open(staged, "rb") as staged_file:
            content = staged_file.read()
        with SwiftAdmin(cluster) as admin:
            nodes = admin.storage_nodes()
        for node in nodes:
            with NodeShell(node) as shell:
                for command in push_commands(ring_dir, ring, content):
                    landed = shell.run(command, timeout=60).stdout.strip()
            if landed != digest(content):
                raise AdminCommandFailed(f"the {ring} ring pushed to {node.name} reads back "
                                         f"as {landed[:12] or 'nothing'}, not "
                                         f"{digest(content)[:12]}")
        os.replace(staged, os.path.join(source, f"{ring}.ring.gz"))
        pushed[ring] = sorted(n.name for n in nodes)
    return {"pushed_at": time.time(), "pushed_to": pushed}


def finish_push(cluster: Cluster) -> float | None:
    """Push the rings whose builder is ahead of the admin's copy (a run killed while it
    changed or pushed them: some nodes new, some old). When it pushed, else None."""
    staged = edit_rings(rings_dir(cluster), {"op": "stage", "rings": list(RINGS)})
    behind = tuple(ring for ring, ahead in staged.items() if ahead)
    return push_rings(cluster, behind)["pushed_at"] if behind else None


def change_rings(cluster: Cluster, dev: ScaleDevice, op: str, weight: float = 0.0
                 ) -> dict[str, Any]:
    """Add the device, set its weight, or remove it; rebalance; push. Returns each ring's
    standing and the push."""
    change = {"op": op, "rings": list(dev.rings), "ip": dev.address, "device": dev.device,
              "zone": dev.zone, "weight": weight, "ports": ports(cluster)}
    standing = edit_rings(rings_dir(cluster), change)
    return {"rings": standing, **push_rings(cluster, dev.rings)}


def ports(cluster: Cluster) -> dict[str, int]:
    return {**DEFAULT_PORTS, **(cluster.client.get("ports") or {})}


def make_device(cluster: Cluster, dev: ScaleDevice) -> None:
    run_on_node(cluster.node(dev.node), create_command(dev), timeout=120)


def delete_device(cluster: Cluster, dev: ScaleDevice) -> list[str]:
    """Unmount and delete the device on its node; what was there ("mounted", "image")."""
    out = run_on_node(cluster.node(dev.node), delete_command(dev.mount, dev.image),
                      timeout=120).stdout
    return out.split()


def present_on_node(cluster: Cluster, dev: ScaleDevice) -> list[str]:
    out = run_on_node(cluster.node(dev.node), present_command(dev.mount, dev.image),
                      timeout=30).stdout
    return out.split()


def partitions_on(cluster: Cluster, dev: ScaleDevice) -> dict[str, int]:
    """Partition directories on the device, per ring."""
    out = run_on_node(cluster.node(dev.node), partitions_command(dev.mount, RINGS),
                      timeout=30).stdout
    return parse_partitions(out)


def moved(state: SwiftState) -> bool:
    """Replication has put every partition where the rings say: nothing on a handoff (the
    scale device included), every server answers, the dispersion report finds 100%."""
    return state.handoff_partitions == 0 and state.fully_redundant


def wait_until_moved(cluster: Cluster, since: float, timeout_s: float,
                     drained: ScaleDevice | None = None) -> dict[str, Any]:
    """Wait until replication has moved the data after a push at `since` (and, for a drain,
    the device holds no partition any more); at least RING_RELOAD_S after the push, so
    that every server reads the pushed rings. Returns the seconds since the push and the
    state; AdminCommandFailed with the last state seen after timeout_s."""
    last: SwiftState | None = None
    left: dict[str, int] = {}

    def not_moved(_) -> str:
        seen = last.summary() if last else "nothing yet"
        still = f"; still on {drained.device}: {left}" if left else ""
        return (f"replication did not move the data within {timeout_s:.0f} s of the ring "
                f"push (last seen: {seen}{still})")

    with SwiftAdmin(cluster) as admin:
        def moved_now() -> dict[str, Any] | None:
            nonlocal last, left
            if time.time() < since + RING_RELOAD_S:
                return None
            last = admin.state(dispersion=False)
            if last.handoff_partitions != 0 or last.fault_seen:
                return None
            left = partitions_on(cluster, drained) if drained else {}
            if left:
                return None
            last = admin.state()
            return ({"moved_s": round(time.time() - since, 1), "state": last.summary()}
                    if moved(last) else None)

        return poll_until("replication to move the data", moved_now, timeout_s,
                          lambda took: poll_pause(took, floor_s=2.0),
                          error=AdminCommandFailed, message=not_moved)


def wait_until_settled(cluster: Cluster, timeout_s: float) -> None:
    """Before a rebalance that tells the builder min_part_hours passed: wait until the last
    ring change's data has moved (what min_part_hours stands in for)."""
    try:
        wait_until_moved(cluster, since=time.time() - RING_RELOAD_S, timeout_s=timeout_s)
    except ClusterError as exc:
        raise AdminCommandFailed(f"refusing to rebalance while data is still moving: {exc}") \
            from None
