"""What the labs of container nodes (lab/ceph_reef.py, lab/swift_current.py) do alike with
their nodes: stop them all at once, start and stop their BMCs, say each unit's state and
what of them is left on the machine."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from . import bmc, netns, nspawn, procs, teardown
from .lab_home import LabHome


def stop_nodes(lab: LabHome, nodes: list[netns.LabNode]) -> dict[str, str]:
    """SIGTERM every node's nspawn at once; free their cgroups and overlays."""
    with ThreadPoolExecutor(max_workers=len(nodes)) as pool:
        outcomes = pool.map(lambda n: nspawn.stop(lab.container(n)), nodes)
        return {f"nspawn.{n.name}": o for n, o in zip(nodes, outcomes, strict=True)}


def start_bmcs(lab: LabHome, nodes: list[netns.LabNode], hook: list[str]) -> None:
    password = bmc.ensure_password(lab.bmc_password_file)
    for node in nodes:
        bmc.start(lab.bmc_of(node), password, hook)


def stop_bmcs(lab: LabHome, nodes: list[netns.LabNode]) -> dict[str, str]:
    return {f"bmc.{n.name}": bmc.stop(lab.bmc_of(n)) for n in nodes}


def leftovers(lab: LabHome, nodes: list[netns.LabNode],
              network: netns.LabNetwork) -> dict[str, list]:
    """What of the lab is still on the machine: all lists are empty after a clean `down`."""
    containers = [lab.container(n) for n in nodes]
    left = teardown.leftovers(lab.home, network, [c.pid_file for c in containers]
                              + [lab.bmc_of(n).pid_file for n in nodes])
    left["cgroups"] = [p for c in containers for p in nspawn.leftover_cgroups(c)]
    return left


def unit_states(container: nspawn.NodeContainer, units: list[str],
                prefix: str = "") -> dict[str, Any]:
    """{prefix + unit: alive, pid, restarts} as the node's systemd says."""
    out = nspawn.run(container, ["systemctl", "show", "-p",
                                 "Id,ActiveState,MainPID,NRestarts", *units], timeout=20).stdout
    states: dict[str, Any] = {}
    for block in out.strip().split("\n\n"):
        props = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
        states[prefix + props.get("Id", "?")] = {
            "alive": props.get("ActiveState") == "active",
            "pid": int(props.get("MainPID", "0")) or None,
            "restarts": int(props.get("NRestarts", "0")), "rss_bytes": None}
    return states


def node_states(lab: LabHome, node: netns.LabNode, units: list[str],
                prefix: str = "") -> dict[str, Any]:
    """The node's nspawn and BMC, and its units' states when it is booted."""
    container = lab.container(node)
    pid = nspawn.nspawn_pid(container)
    bmc_pid = procs.alive_pid(lab.bmc_of(node).pid_file, bmc.PROGRAM)
    states = {f"nspawn.{node.name}": {"pid": pid, "alive": pid is not None, "rss_bytes": None},
              f"bmc.{node.name}": {"pid": bmc_pid, "alive": bmc_pid is not None,
                                   "rss_bytes": None}}
    if pid is not None and nspawn.init_pid(container) is not None:
        states.update(unit_states(container, units, prefix))
    return states


def set_power(lab: LabHome, node: netns.LabNode, on: bool, lower: Path, start) -> None:
    """A node's power as its BMC switches it (lab/bmc_hook.py); idempotent. On: its cable
    back and its container started (`start(lab, lower, node)`), not waited for (a BMC
    answers at once; the OS boots after, and its systemd starts its enabled units). Off:
    its cable pulled, then its whole container killed at once, so peers see silence, as
    after a real power cut."""
    if on:
        netns.link_up(node)
        if nspawn.nspawn_pid(lab.container(node)) is None:
            start(lab, lower, node)
    else:
        netns.link_down(node)
        nspawn.power_cut(lab.container(node))
