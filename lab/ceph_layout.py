"""Where one Ceph lab lives and how it is configured: paths, names, constants, ceph.conf."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from clusters.paths import state_dir

from . import netns, zones
from .lab_home import LabHome

CLUSTER_NAME = "lab-ceph"
POOL = "faultline"
POOL_PGS = 32
OSD_COUNT = 4
# each node's memory cgroup limit (lab/memcg.py): its OSD (osd_memory_target 1 GiB;
# 21-27 MiB fresh, 220-780 MiB under load), with headroom; its sshd stays outside
NODE_MEMORY_MIB = 1536
MON_ID = "a"
MGR_ID = "x"
NETWORK = netns.CEPH_NETWORK
MON_ADDRESS = NETWORK.bridge_address
PROMETHEUS_PORT = 9283
PROMETHEUS_URL = f"http://127.0.0.1:{PROMETHEUS_PORT}/metrics"
RGW_DAEMON = "rgw.lab"  # the inventory's service name; Ceph calls it client.rgw.lab
RGW_ADDRESS = "127.0.0.1"
RGW_PORT = 7480
RGW_URL = f"http://{RGW_ADDRESS}:{RGW_PORT}"
# the pools of RGW's default zone; with 8 PGs each, 4 OSDs hold ~67 PGs apiece
RGW_POOLS = (".rgw.root", "default.rgw.control", "default.rgw.meta", "default.rgw.log",
             "default.rgw.buckets.index", "default.rgw.buckets.data",
             "default.rgw.buckets.non-ec")
RGW_POOL_PGS = 8
RGW_TIMEOUT = 120.0
# BlueStore's default block file is 100 GiB; the image is 6 GiB. Small, so a fill to 75% is
# ~3 GiB of writes; zone2's and zone3's single OSDs get twice zone1's (lab/zones.py)
BLOCK_UNIT_BYTES = 2 * 1024**3
CRUSH_RULE = "faultline-zone"  # replicated, one copy per zone
HEALTH_TIMEOUT = 600.0
CLEAN_POLLS = 5  # after an OSD boots every PG looks clean for ~3 s before peering starts


# [global] settings of every Ceph lab (both releases): small pools, fast reactions
GLOBAL_TUNING = """\
osd_pool_default_size = 3
osd_pool_default_min_size = 2
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
mon_allow_pool_delete = true
mon_max_pg_per_osd = 500
# react within seconds, not the production 10 minutes, so faults fit in a test
mon_osd_down_out_interval = 30
mon_osd_adjust_down_out_interval = false
mon_osd_adjust_heartbeat_grace = false
osd_heartbeat_interval = 1
osd_heartbeat_grace = 6
# the slow-ping warning is 5% of the grace unless set: 300 ms with the lab's 6 s, which a
# busy 2-core host reaches between two healthy OSDs (it spoiled a CI baseline); production's
# 20 s grace puts it at 1 s, so the lab keeps that
mon_warn_on_slow_ping_time = 1000
# a lab root fs may well be 70% full: the 30% default warning would spoil HEALTH_OK
mon_data_avail_warn = 5
mon_data_avail_crit = 2
# librados blocks forever on a dead cluster otherwise
rados_osd_op_timeout = 30
rados_mon_op_timeout = 30
# PG states reach the mgr (and so `status`) once per stats period: 5 s by default,
# long enough to miss a whole re-peering; Faultline samples once a second
mgr_stats_period = 1
"""


# [osd] settings of every Ceph lab
OSD_TUNING = f"""\
osd_objectstore = bluestore
bluestore_block_create = true
osd_memory_target = {1024**3}
osd_recovery_sleep_hdd = 0
osd_recovery_sleep_ssd = 0
osd_recovery_sleep_hybrid = 0
# Ceph's default. The backfillfull check is made once per PG, when its backfill is
# reserved: with 4 at once, the zone1 OSD left when its neighbour died at 50% fill took
# four ~94 MiB PGs together, went full and blocked writes (519 client timeouts); with 1
# it stops at backfillfull. At 75% fill it still overruns its 2 GiB and aborts (ENOSPC).
osd_max_backfills = 1
# RocksDB's memtables (4 x 256 MiB) and WAL (1 GiB) are sized for OSDs of terabytes: on the
# lab's 2 GiB OSDs a churn of 4 KiB objects (deferred writes, as BlueStore takes a loop
# device for an HDD) grew BlueFS to 1.9 GiB and both zone1 OSDs aborted (bluefs enospc)
bluestore_rocksdb_options_annex = write_buffer_size=33554432,max_total_wal_size=134217728
"""


def osd_section(osd: int, node: netns.LabNode) -> str:
    """One OSD's section: its CRUSH place (zone, host), its block size, its node's address."""
    block_bytes = BLOCK_UNIT_BYTES * zones.capacity_units(node.index)
    return (f"\n[osd.{osd}]\ncrush_location = root=default "
            f"zone={zones.zone_name(node.index)} host={node.name}\n"
            f"bluestore_block_size = {block_bytes}\n"
            f"public_addr = {node.address}\ncluster_addr = {node.address}\n")


@dataclass(frozen=True)
class CephLab(LabHome):
    """Where everything of one Ceph lab lives, and how its parts are named."""

    @property
    def nodes(self) -> list[netns.LabNode]:
        return NETWORK.nodes(OSD_COUNT)

    def node_of(self, osd: int) -> netns.LabNode:
        return self.nodes[osd]  # osd.N lives on node(N+1)

    @property
    def conf(self) -> Path:
        return self.home / "ceph.conf"

    def pid_file(self, daemon: str) -> Path:
        return self.run_dir / f"ceph-{ceph_name(daemon)}.pid"  # = pid_file in ceph.conf

    @property
    def rgw_dir(self) -> Path:
        """RGW's data dir and the key files of the lab's RGW user (mode 0700)."""
        return self.home / "rgw"

    def osd_dir(self, osd: int) -> Path:
        return self.home / "osd" / f"ceph-{osd}"

    def image(self, osd: int) -> Path:
        return self.home / "disks" / f"osd{osd}.img"

    def added_osds(self) -> list[int]:
        """OSDs beyond the lab's own (actions.ceph_scale's, left by a run killed before its
        restore), by their pid files and disk images beside the lab's."""
        paths = [*self.run_dir.glob("ceph-osd.*.pid"), *(self.home / "disks").glob("osd*.img")]
        found = {int(m.group(1)) for path in paths
                 if (m := re.fullmatch(r"(?:ceph-osd\.|osd)(\d+)\.(?:pid|img)", path.name))}
        return sorted(osd for osd in found if osd >= OSD_COUNT)

    def start_command(self, daemon: str) -> str:
        """Shell command that starts a daemon (on its node, for an OSD); it daemonizes itself.

        Core dumps off (core_pattern is "core": GBs in the cwd); no tty or ssh channel
        kept open, so an ssh session running it returns as soon as the daemon forked.
        """
        kind, ident = daemon.split(".", 1)
        who = f"-n {ceph_name(daemon)}" if kind == "rgw" else f"-i {ident}"
        inner = (f"ulimit -c 0; exec {program_of(daemon)} -c {shlex.quote(str(self.conf))} {who}"
                 f" </dev/null >>{shlex.quote(str(self.log_dir / f'{daemon}.stdout'))} 2>&1")
        return f"sh -c {shlex.quote(inner)}"


def ceph_name(daemon: str) -> str:
    """Ceph's own name of a lab daemon: RGW instances are clients (client.rgw.lab)."""
    return f"client.{daemon}" if daemon.startswith("rgw.") else daemon


def program_of(daemon: str) -> str:
    """The executable a lab daemon runs (as /proc/PID/exe names it)."""
    kind = daemon.split(".", 1)[0]
    return "radosgw" if kind == "rgw" else f"ceph-{kind}"


def default_home() -> Path:
    return state_dir() / "lab" / "ceph"


def lab_at(home: Path | None) -> CephLab:
    return CephLab((home or default_home()).absolute())


def conf_text(lab: CephLab, fsid: str) -> str:
    home = lab.home
    daemon_common = (f"admin_socket = {home}/run/$cluster-$name.asok\n"
                     f"pid_file = {home}/run/$cluster-$name.pid\n")
    mon_addr = f"[v2:{MON_ADDRESS}:3300,v1:{MON_ADDRESS}:6789]"
    text = f"""\
# Written by lab/ceph_layout.py at every `up`; edits are lost.
[global]
fsid = {fsid}
mon_host = {mon_addr}
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
ms_bind_ipv6 = false
run_dir = {home}/run
log_file = {home}/log/$cluster-$name.log
mon_cluster_log_file = {home}/log/$cluster.log
crash_dir = {home}/crash
{GLOBAL_TUNING}
[client]
# empty: concurrent clients would otherwise fight over one socket path
admin_socket =

[mon]
{daemon_common}public_addr = {MON_ADDRESS}
mon_data = {home}/mon/$cluster-$id
mon_warn_on_pool_no_redundancy = false
# fires even with auth off, where it means nothing
mon_warn_on_insecure_global_id_reclaim_allowed = false
# enabled from the start, so enabling it later does not restart the mgr
mgr_initial_modules = iostat prometheus

[mgr]
{daemon_common}public_addr = {MON_ADDRESS}
mgr_data = {home}/mgr/$cluster-$id

[osd]
{daemon_common}osd_data = {home}/osd/$cluster-$id
{OSD_TUNING}"""
    for osd in range(OSD_COUNT):
        text += osd_section(osd, lab.node_of(osd))
    text += f"""
[{ceph_name(RGW_DAEMON)}]
{daemon_common}rgw_data = {lab.rgw_dir}
rgw_frontends = beast endpoint={RGW_ADDRESS}:{RGW_PORT}
# radosgw defaults to cephx and a secure mon connection whatever [global] says:
# with cephx off it then hangs 300 s and exits ("get_initial_auth_request returned -13")
auth_client_required = none
ms_mon_client_mode = crc
# a gateway behaves as in production: requests wait for inactive PGs instead of
# failing after the 30 s that suits Faultline's own librados clients
rados_osd_op_timeout = 0
rados_mon_op_timeout = 0
"""
    return text


def write_conf(lab: CephLab, fsid: str) -> None:
    lab.conf.write_text(conf_text(lab, fsid))
