"""Where the Reef lab (lab/ceph_reef.py) lives and how it is configured: its nodes and
their units, paths, and the ceph.conf bound into every node."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clusters.paths import state_dir

from . import bmc, netns, nspawn
from .ceph_layout import (
    GLOBAL_TUNING,
    MGR_ID,
    MON_ID,
    OSD_COUNT,
    OSD_TUNING,
    PROMETHEUS_PORT,
    osd_section,
)
from .exceptions import LabError
from .lab_home import LabHome

CLUSTER_NAME = "lab-ceph-reef"
RELEASE = "reef"
NETWORK = netns.CEPH_REEF_NETWORK
CEPH_UID = 64045  # the ceph user of Debian's packages (fixed uid, see the root's passwd)
MON_NODE = 1
OSD_MOUNT = "/var/lib/ceph/osd/ceph-{osd}"
# No crash reports are posted, as in the Pacific lab: Debian 13's ceph-mgr 18.2.7 writes one
# for some module at every start (a Python 3.13 incompatibility when it loads its modules:
# "type object ... has no attribute 'NOTIFY_TYPES'"), which ceph-crash would post, and the
# cluster would show RECENT_MGR_MODULE_CRASH for two weeks
MASKED_UNITS = ("ceph-crash.service",)
BMC_BASE_PORT = 16230  # node K (its index: 1 for node1) has its BMC on 127.0.0.1:16230+K


@dataclass(frozen=True)
class ReefLab(LabHome):
    """Where everything of the Reef lab lives, and how its parts are named."""

    @property
    def nodes(self) -> list[netns.LabNode]:
        return NETWORK.nodes(OSD_COUNT)

    def node_of(self, osd: int) -> netns.LabNode:
        return self.nodes[osd]

    @property
    def mon_node(self) -> netns.LabNode:
        return self.nodes[MON_NODE - 1]

    def container(self, node: netns.LabNode) -> nspawn.NodeContainer:
        return nspawn.NodeContainer(name=node.name, directory=self.home / "nodes" / node.name,
                                    netns=node.netns, run_dir=self.run_dir,
                                    log_dir=self.log_dir)

    def node_named(self, name: str) -> netns.LabNode:
        for node in self.nodes:
            if node.name == name:
                return node
        raise LabError(f"the Reef lab has no node {name!r}")

    def bmc_of(self, node: netns.LabNode) -> bmc.Bmc:
        return bmc.Bmc(node=node.name, port=BMC_BASE_PORT + node.index,
                       directory=self.home / "bmc" / node.name, run_dir=self.run_dir,
                       log_dir=self.log_dir)

    @property
    def bmc_password_file(self) -> Path:
        """The password of every node's BMC (0600): the inventory names this file."""
        return self.home / "bmc" / "password"

    @property
    def conf(self) -> Path:
        return self.home / "ceph.conf"

    @property
    def metrics_url(self) -> str:
        """The mgr prometheus module's, on node1's address (the host reaches it over the
        lab's bridge)."""
        return f"http://{self.mon_node.address}:{PROMETHEUS_PORT}/metrics"

    def image(self, osd: int) -> Path:
        return self.home / "disks" / f"osd{osd}.img"

    def osd_dir(self, osd: int) -> Path:
        """The OSD's disk, mounted on the host and bound into its node."""
        return self.home / "osd" / f"ceph-{osd}"

    def osds_on(self, node: netns.LabNode) -> list[int]:
        return [osd for osd in range(OSD_COUNT) if self.node_of(osd) == node]

    def units_on(self, node: netns.LabNode) -> list[str]:
        units = [f"ceph-osd@{osd}.service" for osd in self.osds_on(node)]
        if node == self.mon_node:
            units = [f"ceph-mon@{MON_ID}.service", f"ceph-mgr@{MGR_ID}.service", *units]
        return units


def default_home() -> Path:
    return state_dir() / "lab" / "ceph-reef"


def lab_at(home: Path | None) -> ReefLab:
    return ReefLab((home or default_home()).absolute())


def conf_text(lab: ReefLab, fsid: str) -> str:
    mon = lab.mon_node.address
    text = f"""\
# Written by lab/ceph_reef_layout.py at every `up`; edits are lost. Bound read-only at
# /etc/ceph/ceph.conf in every node; Faultline's clients on the host read it here.
[global]
fsid = {fsid}
mon_host = [v2:{mon}:3300,v1:{mon}:6789]
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
ms_bind_ipv6 = false
{GLOBAL_TUNING}
[client]
admin_socket =
log_file =

[mon]
mon_warn_on_pool_no_redundancy = false
mon_warn_on_insecure_global_id_reclaim_allowed = false
mgr_initial_modules = iostat prometheus

[mgr]
# Ceph's own test fixture; on Debian 13's Python 3.13 it crashes when loaded, and the crash
# report that ceph-crash posts at the next boot is a RECENT_MGR_MODULE_CRASH warning
mgr_disabled_modules = test_orchestrator

[osd]
{OSD_TUNING}# Reef's mClock scheduler benchmarks the disk at every OSD start (1.7 s here), and a
# loop file's figure is out of its range anyway ("OSD bench result ... not within")
osd_mclock_skip_benchmark = true
"""
    for osd in range(OSD_COUNT):
        text += osd_section(osd, lab.node_of(osd))
    return text
