"""Check that a cluster can be reached before anything is started or changed."""

from __future__ import annotations

from clusters.access.inventory import Cluster
from clusters.access.ssh import NodeShell
from clusters.exceptions import NodeUnreachable


def check_nodes_reachable(cluster: Cluster, timeout_s: float = 5.0) -> None:
    """Open an SSH session to every node that runs a service; raise on the first failure."""
    wanted = {s.node for s in cluster.services if s.node is not None}
    problems = []
    for node in cluster.nodes:
        if node.name not in wanted:
            continue
        try:
            with NodeShell(node, connect_timeout=timeout_s) as shell:
                shell.run("true", timeout=timeout_s)
        except NodeUnreachable as exc:
            problems.append(str(exc))
    if problems:
        raise NodeUnreachable("; ".join(problems))
