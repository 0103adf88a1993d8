"""Lab nodes as network namespaces on a private bridge.

The root namespace holds the bridge `flbr0` (10.77.0.1/24); node K is the
namespace `flcephK` whose `eth0` is one end of a veth pair, the other end
(`vflcephK`) being a port of the bridge, with address 10.77.0.(10+K)/24.
Namespaces get no default route: lab traffic never leaves the machine.

Processes are put in a node with `nsenter --net=/run/netns/NAME`, never with
`ip netns exec`: the latter also gives the process a private mount namespace
(/ is not a shared mount here), which pins copies of other nodes' XFS mounts,
so a failed disk could never really be unmounted and mounted again.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

BRIDGE = "flbr0"
BRIDGE_ADDRESS = "10.77.0.1"
PREFIX_LEN = 24
NETNS_PREFIX = "flceph"
NETNS_DIR = Path("/run/netns")


@dataclass(frozen=True)
class LabNode:
    """One lab node: a namespace, its veth pair and its address."""

    index: int  # 1-based: node1 is flceph1 at 10.77.0.11

    @property
    def name(self) -> str:
        return f"node{self.index}"

    @property
    def netns(self) -> str:
        return f"{NETNS_PREFIX}{self.index}"

    @property
    def veth(self) -> str:
        """The host-side end of the pair, a port of the bridge."""
        return f"v{self.netns}"

    @property
    def address(self) -> str:
        return f"10.77.0.{10 + self.index}"


def lab_nodes(count: int = 4) -> list[LabNode]:
    return [LabNode(i) for i in range(1, count + 1)]


def nsenter_argv(netns: str) -> list[str]:
    """Prefix that runs a command in a node's network namespace (and nothing else)."""
    return ["nsenter", f"--net={NETNS_DIR / netns}", "--"]


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


def link_exists(name: str) -> bool:
    return _ip("link", "show", "dev", name, check=False).returncode == 0


def netns_exists(netns: str) -> bool:
    return (NETNS_DIR / netns).exists()


def existing_namespaces() -> list[str]:
    """Our namespaces present on the machine (also those a bigger or killed lab left)."""
    if not NETNS_DIR.is_dir():
        return []
    return sorted(p.name for p in NETNS_DIR.iterdir() if p.name.startswith(NETNS_PREFIX))


def existing_veths() -> list[str]:
    out = _ip("-o", "link", "show", check=False).stdout
    names = [line.split(":")[1].strip().split("@")[0] for line in out.splitlines() if ":" in line]
    return sorted(n for n in names if n.startswith(f"v{NETNS_PREFIX}"))


def create_bridge() -> None:
    if not link_exists(BRIDGE):
        _ip("link", "add", BRIDGE, "type", "bridge")
    addrs = _ip("-o", "-4", "addr", "show", "dev", BRIDGE).stdout
    if f" {BRIDGE_ADDRESS}/" not in addrs:
        _ip("addr", "add", f"{BRIDGE_ADDRESS}/{PREFIX_LEN}", "dev", BRIDGE)
    _ip("link", "set", BRIDGE, "up")


def create_node(node: LabNode) -> None:
    """Create (or complete) one node's namespace and veth pair; safe to repeat."""
    if not netns_exists(node.netns):
        _ip("netns", "add", node.netns)
    has_eth0 = _ip("-n", node.netns, "link", "show", "dev", "eth0", check=False).returncode == 0
    if link_exists(node.veth) and not has_eth0:
        _ip("link", "del", node.veth)  # half of a pair whose namespace was recreated
    if not has_eth0:
        _ip("link", "add", node.veth, "type", "veth", "peer", "name", "eth0", "netns", node.netns)
    _ip("link", "set", node.veth, "master", BRIDGE)
    addrs = _ip("-n", node.netns, "-o", "-4", "addr", "show", "dev", "eth0").stdout
    if f" {node.address}/" not in addrs:
        _ip("-n", node.netns, "addr", "add", f"{node.address}/{PREFIX_LEN}", "dev", "eth0")
    _ip("-n", node.netns, "link", "set", "lo", "up")
    _ip("-n", node.netns, "link", "set", "eth0", "up")
    _ip("link", "set", node.veth, "up")


def create_network(nodes: list[LabNode]) -> None:
    create_bridge()
    for node in nodes:
        create_node(node)


def delete_network() -> None:
    """Remove every veth, namespace and the bridge of the lab, whatever their number."""
    for veth in existing_veths():
        _ip("link", "del", veth, check=False)
    for netns in existing_namespaces():
        _ip("netns", "del", netns, check=False)
    if link_exists(BRIDGE):
        _ip("link", "del", BRIDGE, check=False)
    _release_netns_dir()


def _release_netns_dir() -> None:
    """`ip netns add` bind-mounts /run/netns on itself and never undoes it: undo it if unused."""
    if NETNS_DIR.is_dir() and not any(NETNS_DIR.iterdir()):
        mounted = any(line.split()[1] == str(NETNS_DIR)
                      for line in Path("/proc/mounts").read_text().splitlines())
        if mounted:
            subprocess.run(["umount", str(NETNS_DIR)], check=False, capture_output=True)


def pids_in(netns: str) -> list[int]:
    """PIDs of processes living in a namespace (a namespace outlives its deletion while used)."""
    if not netns_exists(netns):
        return []
    out = _ip("netns", "pids", netns, check=False).stdout
    return [int(p) for p in out.split()]


def link_down(node: LabNode) -> None:
    """Pull the node's cable: peers see silence (timeouts), not connection resets."""
    _ip("link", "set", node.veth, "down")


def link_up(node: LabNode) -> None:
    _ip("link", "set", node.veth, "up")
