"""Each pid-file lab node's memory: a cgroup v1 memory cgroup with a limit, holding the
node's daemons.

Node K of a lab gets `/sys/fs/cgroup/memory/faultline-lab/<its netns>` (the inventory's
memory_cgroup of the node, by which clusters/faults/memory_hog.py and ceph_scale.py reach it) with
`memory.limit_in_bytes` set to the lab's NODE_MEMORY_MIB. Every daemon of the node is born
in it: the start command the inventory records for it (`born_in`) first moves its own shell
there, so a daemon (re)started later over SSH by a restore lands there too. A daemon
already running elsewhere (a warm `lab up` of a lab made before) cannot be moved with its
memory (this kernel moves no charge with a process), so `lab up` restarts it.

The node's sshd and its sessions stay outside: when the node runs out of memory the kernel
kills only daemons (seen on this machine: it may take more than it needs, the next biggest
going while the first victim's memory is still being freed, and an sshd inside would be
next), so a node out of memory stays reachable, as production sshd units with
OOMScoreAdjust=-1000 keep theirs.

`release` removes the cgroups once the node's processes are gone (`lab down`).
"""

from __future__ import annotations

import shlex
import subprocess
import time
from pathlib import Path

from clusters.access.inventory import Node
from clusters.faults.memory_hog import HOG_CGROUP, LAB_ROOT, MEMORY, stop_command

from .exceptions import LabError
from .netns import LabNode

ROOT = Path(LAB_ROOT)


def cgroup_of(node: LabNode) -> Path:
    return ROOT / node.netns


def _memory_cgroup_of(pid: int) -> str | None:
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    return next((line.split(":", 2)[2] for line in lines if ":memory:" in line), None)


def confine(node: LabNode, limit_mib: int) -> Path:
    """The node's memory cgroup with its limit (idempotent)."""
    cgroup = cgroup_of(node)
    cgroup.mkdir(parents=True, exist_ok=True)
    try:
        (cgroup / "memory.limit_in_bytes").write_text(str(limit_mib << 20))
    except OSError as exc:
        raise LabError(f"cannot limit {node.name}'s memory to {limit_mib} MiB at {cgroup}: "
                       f"{exc} (its daemons use "
                       f"{int((cgroup / 'memory.usage_in_bytes').read_text()) >> 20} MiB)"
                       ) from None
    return cgroup


def born_in(node: LabNode, command: str) -> str:
    """The start command of one of the node's daemons, run in its memory cgroup."""
    procs_file = shlex.quote(str(cgroup_of(node) / "cgroup.procs"))
    return f"echo $$ > {procs_file} && {command}"


def outside(node: LabNode, pid: int) -> bool:
    """The daemon runs, but not in its node's memory cgroup (started before it existed)."""
    where = _memory_cgroup_of(pid)
    return where is not None and where != "/" + str(cgroup_of(node).relative_to(MEMORY))


def release(nodes: list[LabNode], timeout: float = 10.0) -> None:
    """Remove the nodes' memory cgroups (and the labs' parent once empty): their processes
    are gone, though PID 1 may reap the last ones a moment late."""
    for node in nodes:
        _end_hog(node)
        cgroup = cgroup_of(node)
        deadline = time.monotonic() + timeout
        while cgroup.exists():
            try:
                if (cgroup / HOG_CGROUP).exists():  # a hog nobody restored
                    (cgroup / HOG_CGROUP).rmdir()
                cgroup.rmdir()
            except OSError as exc:
                if time.monotonic() > deadline:
                    raise LabError(f"cannot remove {node.name}'s memory cgroup {cgroup}: "
                                   f"{exc}") from None
                time.sleep(0.2)
    try:
        ROOT.rmdir()
    except OSError:  # another lab's nodes are still in it, or it is gone already
        pass


def inventory_node(node: LabNode) -> Node:
    """The lab node as the inventory has it, its memory cgroup included."""
    return Node(node.name, node.address, netns=node.netns, memory_cgroup=str(cgroup_of(node)))


def _end_hog(node: LabNode) -> None:
    """A memory hog nobody restored: ended as its restore would (clusters/faults/memory_hog.py)."""
    subprocess.run(["sh", "-c", stop_command(inventory_node(node))], check=False,
                   capture_output=True, timeout=30)


def leftovers(nodes: list[LabNode]) -> list[str]:
    return [str(cgroup_of(n)) for n in nodes if cgroup_of(n).exists()]
