"""Where the current-release Swift lab (lab/swift_current.py) lives and how it is
configured: its nodes and their units, paths, and the files written into each node.

The same shape as the Pacific Swift lab (lab/swift_layout.py: four storage nodes in three
zones, one device each, three replicas, the same part powers, ports, replicator timers,
tempauth user and s3api), but every node is a container of Debian 13 with Swift 2.35 and
the proxy is a fifth one:

    node1..4 (10.80.0.11-14): account, container and object servers and their
        replicators, auditors and updaters, rsync; device dK bound at /srv/node/dK
    proxy (10.80.0.15): swift-proxy (tempauth, s3api) on port 8080, memcached

Swift reads /etc/swift in a node, as packaged: each node's overlay gets its own server
files, the lab's swift.conf and the rings. The host keeps the rings and swift.conf in
<home>/etc too, for Faultline's own tools (dispersion, ring facts, placement).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clusters.paths import state_dir

from . import bmc, netns, nspawn, swift_layout
from .exceptions import LabError
from .swift_layout import SERVER_TYPES, SwiftLab

CLUSTER_NAME = "lab-swift-current"
RELEASE = "2.35"
NETWORK = netns.SWIFT_CURRENT_NETWORK
PROXY_INDEX = 5  # its address: 10.80.0.15
PROXY_PORT = 8080  # Swift's own default
MEMCACHE = "127.0.0.1:11211"  # Debian's memcached.conf, in the proxy's node
NODE_SWIFT_DIR = "/etc/swift"
NODE_DEVICES = "/srv/node"
NODE_RECON_CACHE = "/var/cache/swift"  # the units' CacheDirectory=swift
SWIFT_USER = "swift"
BMC_BASE_PORT = 16240  # node K (proxy: 5) has its BMC on 127.0.0.1:16240+K
# Debian's units of what each node runs (stock: Restart=on-failure); the account reaper,
# sharder, reconciler, container sync, reconstructor and expirer have nothing to do here
STORAGE_UNITS = {
    "object-server": "swift-object.service",
    "object-replicator": "swift-object-replicator.service",
    "object-updater": "swift-object-updater.service",
    "object-auditor": "swift-object-auditor.service",
    "container-server": "swift-container.service",
    "container-replicator": "swift-container-replicator.service",
    "container-updater": "swift-container-updater.service",
    "container-auditor": "swift-container-auditor.service",
    "account-server": "swift-account.service",
    "account-replicator": "swift-account-replicator.service",
    "account-auditor": "swift-account-auditor.service",
}
PROXY_UNITS = {"proxy-server": "swift-proxy.service"}
SUPPORT_UNITS = {"storage": ("rsync.service",), "proxy": ("memcached.service",)}


@dataclass(frozen=True)
class ProxyNode(netns.LabNode):
    """The proxy's container: a node of the lab's network named for its job."""

    @property
    def name(self) -> str:
        return "proxy"


@dataclass(frozen=True)
class SwiftCurrentLab(SwiftLab):
    """Where everything of the current-release Swift lab lives, and how its parts are
    named. Its storage nodes are `nodes` (the rings are built from them, lab/swift_rings.py);
    `all_nodes` adds the proxy's."""

    @property
    def nodes(self) -> list[netns.LabNode]:
        return NETWORK.nodes(swift_layout.NODE_COUNT)

    @property
    def proxy_node(self) -> netns.LabNode:
        return ProxyNode(PROXY_INDEX, NETWORK)

    @property
    def all_nodes(self) -> list[netns.LabNode]:
        return [*self.nodes, self.proxy_node]

    def node_named(self, name: str) -> netns.LabNode:
        for node in self.all_nodes:
            if node.name == name:
                return node
        raise LabError(f"the current Swift lab has no node {name!r}")

    def container(self, node: netns.LabNode) -> nspawn.NodeContainer:
        return nspawn.NodeContainer(name=node.name, directory=self.home / "nodes" / node.name,
                                    netns=node.netns, run_dir=self.run_dir,
                                    log_dir=self.log_dir)

    def bmc_of(self, node: netns.LabNode) -> bmc.Bmc:
        return bmc.Bmc(node=node.name, port=BMC_BASE_PORT + node.index,
                       directory=self.home / "bmc" / node.name, run_dir=self.run_dir,
                       log_dir=self.log_dir)

    @property
    def bmc_password_file(self) -> Path:
        return self.home / "bmc" / "password"

    def units_on(self, node: netns.LabNode) -> dict[str, str]:
        """{service kind: unit} of what the node runs."""
        return dict(PROXY_UNITS) if node == self.proxy_node else dict(STORAGE_UNITS)

    def support_units_on(self, node: netns.LabNode) -> tuple[str, ...]:
        return SUPPORT_UNITS["proxy" if node == self.proxy_node else "storage"]

    def node_device(self, node: netns.LabNode) -> str:
        """The device's path inside its node (what the servers and the recon see)."""
        return f"{NODE_DEVICES}/{self.device(node)}"

    @property
    def auth_url(self) -> str:
        return f"http://{self.proxy_node.address}:{PROXY_PORT}/auth/v1.0"

    @property
    def s3_endpoint(self) -> str:
        return f"http://{self.proxy_node.address}:{PROXY_PORT}"


def default_home() -> Path:
    return state_dir() / "lab" / "swift-current"


def lab_at(home: Path | None) -> SwiftCurrentLab:
    return SwiftCurrentLab((home or default_home()).absolute())


def node_files(lab: SwiftCurrentLab, node: netns.LabNode) -> dict[str, str]:
    """{path in the node: text} of the configuration it runs with."""
    if node == lab.proxy_node:
        return {f"{NODE_SWIFT_DIR}/proxy-server.conf": swift_layout.proxy_conf_text(
            NODE_SWIFT_DIR, SWIFT_USER, node.address, PROXY_PORT, MEMCACHE)}
    files = {f"{NODE_SWIFT_DIR}/{t}-server.conf": swift_layout.server_conf_text(
        t, node, NODE_DEVICES, NODE_RECON_CACHE, NODE_SWIFT_DIR, SWIFT_USER)
        for t in SERVER_TYPES}
    files["/etc/rsyncd.conf"] = swift_layout.rsyncd_conf_text(node, NODE_DEVICES,
                                                              "/run/lock", SWIFT_USER)
    return files


def shared_files(lab: SwiftCurrentLab) -> list[Path]:
    """The host's files every node gets a copy of in its /etc/swift."""
    return [lab.swift_conf, *(lab.etc / f"{t}.ring.gz" for t in SERVER_TYPES)]
