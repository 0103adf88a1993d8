"""Lab nodes as network namespaces on a private bridge, one bridge per lab.

Each lab has its own `LabNetwork`: the Ceph lab's bridge is `flbr0`
(10.77.0.1/24) with nodes `flcephK` at 10.77.0.(10+K); the Swift lab's is
`flbr1` (10.78.0.1/24) with nodes `flswiftK` at 10.78.0.(10+K); the Reef lab's (whose
nodes are containers booting systemd, lab/nspawn.py) is `flbr2` (10.79.0.1/24) with
nodes `flreefK` at 10.79.0.(10+K); the current Swift lab's (containers too) is `flbr3`
(10.80.0.1/24) with nodes `flswcK` at 10.80.0.(10+K). Node K's
namespace has an `eth0` that is one end of a veth pair; the other end
(`v<netns>`) is a port of the lab's bridge. Namespaces get no default route:
lab traffic never leaves the machine. Two labs never share a bridge, so one
can go down while the other runs.

Processes are put in a node with `nsenter --net=/run/netns/NAME`, never with
`ip netns exec`: the latter also gives the process a private mount namespace
(/ is not a shared mount here), which pins copies of other nodes' XFS mounts,
so a failed disk could never really be unmounted and mounted again.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

PREFIX_LEN = 24
NETNS_DIR = Path("/run/netns")


@dataclass(frozen=True)
class LabNetwork:
    """One lab's bridge, subnet and namespace names."""

    bridge: str
    subnet: str  # the first three octets, e.g. "10.77.0"
    netns_prefix: str

    @property
    def bridge_address(self) -> str:
        return f"{self.subnet}.1"

    def nodes(self, count: int) -> list[LabNode]:
        return [LabNode(i, self) for i in range(1, count + 1)]


CEPH_NETWORK = LabNetwork(bridge="flbr0", subnet="10.77.0", netns_prefix="flceph")
SWIFT_NETWORK = LabNetwork(bridge="flbr1", subnet="10.78.0", netns_prefix="flswift")
# the production-like Ceph lab (lab/ceph_reef.py): its nodes are containers in these
CEPH_REEF_NETWORK = LabNetwork(bridge="flbr2", subnet="10.79.0", netns_prefix="flreef")
# the current-release Swift lab (lab/swift_current.py): containers too
SWIFT_CURRENT_NETWORK = LabNetwork(bridge="flbr3", subnet="10.80.0", netns_prefix="flswc")


@dataclass(frozen=True)
class LabNode:
    """One lab node: a namespace, its veth pair and its address."""

    index: int  # 1-based: node1 is <prefix>1 at <subnet>.11
    network: LabNetwork = CEPH_NETWORK

    @property
    def name(self) -> str:
        return f"node{self.index}"

    @property
    def netns(self) -> str:
        return f"{self.network.netns_prefix}{self.index}"

    @property
    def veth(self) -> str:
        """The host-side end of the pair, a port of the bridge."""
        return f"v{self.netns}"

    @property
    def address(self) -> str:
        return f"{self.network.subnet}.{10 + self.index}"


def nsenter_argv(netns: str) -> list[str]:
    """Prefix that runs a command in a node's network namespace (and nothing else)."""
    return ["nsenter", f"--net={NETNS_DIR / netns}", "--"]


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


def link_exists(name: str) -> bool:
    return _ip("link", "show", "dev", name, check=False).returncode == 0


def netns_exists(netns: str) -> bool:
    return (NETNS_DIR / netns).exists()


def existing_namespaces(network: LabNetwork) -> list[str]:
    """The network's namespaces present on the machine (also those a killed lab left)."""
    if not NETNS_DIR.is_dir():
        return []
    return sorted(p.name for p in NETNS_DIR.iterdir()
                  if p.name.startswith(network.netns_prefix))


def existing_veths(network: LabNetwork) -> list[str]:
    out = _ip("-o", "link", "show", check=False).stdout
    names = [line.split(":")[1].strip().split("@")[0] for line in out.splitlines() if ":" in line]
    return sorted(n for n in names if n.startswith(f"v{network.netns_prefix}"))


def create_bridge(network: LabNetwork) -> None:
    bridge = network.bridge
    if not link_exists(bridge):
        _ip("link", "add", bridge, "type", "bridge")
    addrs = _ip("-o", "-4", "addr", "show", "dev", bridge).stdout
    if f" {network.bridge_address}/" not in addrs:
        _ip("addr", "add", f"{network.bridge_address}/{PREFIX_LEN}", "dev", bridge)
    _ip("link", "set", bridge, "up")


def create_node(node: LabNode) -> None:
    """Create (or complete) one node's namespace and veth pair; safe to repeat."""
    if not netns_exists(node.netns):
        _ip("netns", "add", node.netns)
    has_eth0 = _ip("-n", node.netns, "link", "show", "dev", "eth0", check=False).returncode == 0
    if link_exists(node.veth) and not has_eth0:
        _ip("link", "del", node.veth)  # half of a pair whose namespace was recreated
    if not has_eth0:
        _ip("link", "add", node.veth, "type", "veth", "peer", "name", "eth0", "netns", node.netns)
    _ip("link", "set", node.veth, "master", node.network.bridge)
    addrs = _ip("-n", node.netns, "-o", "-4", "addr", "show", "dev", "eth0").stdout
    if f" {node.address}/" not in addrs:
        _ip("-n", node.netns, "addr", "add", f"{node.address}/{PREFIX_LEN}", "dev", "eth0")
    _ip("-n", node.netns, "link", "set", "lo", "up")
    _ip("-n", node.netns, "link", "set", "eth0", "up")
    _ip("link", "set", node.veth, "up")


def delete_node(node: LabNode) -> None:
    """Remove one node's veth pair and namespace (the bridge stays)."""
    _ip("link", "del", node.veth, check=False)
    if netns_exists(node.netns):
        _ip("netns", "del", node.netns, check=False)


def create_network(network: LabNetwork, nodes: list[LabNode]) -> None:
    create_bridge(network)
    for node in nodes:
        create_node(node)


def delete_network(network: LabNetwork) -> None:
    """Remove every veth, namespace and the bridge of one lab, whatever their number."""
    for veth in existing_veths(network):
        _ip("link", "del", veth, check=False)
    for netns in existing_namespaces(network):
        _ip("netns", "del", netns, check=False)
    if link_exists(network.bridge):
        _ip("link", "del", network.bridge, check=False)
    _release_netns_dir()


def leftover_links(network: LabNetwork) -> list[str]:
    bridge = [network.bridge] if link_exists(network.bridge) else []
    return existing_veths(network) + bridge


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
