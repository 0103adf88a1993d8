"""Where one Swift lab lives and how it is configured: paths, names, ports, config files.

Layout: the proxy (tempauth, s3api, healthcheck, memcache) and memcached in the root
namespace on 127.0.0.1; four storage nodes flswift1..4 at 10.78.0.11-14 on
their own bridge, each with one loop-mounted XFS device `dK`, account,
container and object servers (pipeline healthcheck + recon + server), their
replicators, auditors and updaters, and an rsync daemon for replication.
Zones (lab/zones.py): node1-2 are zone 1, node3 zone 2, node4 zone 3; rings keep 3
replicas, one per zone, and node3's and node4's devices are twice the size (and weight).

Swift 2.30 reads /etc/swift/swift.conf from a hard-wired path. The lab does not
own /etc/swift: every Swift process gets PYTHONPATH with a `sitecustomize.py`
that points Swift at the lab's own swift.conf (clusters/swift/conf_shim.py).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from clusters.access.private_files import write_private
from clusters.paths import state_dir
from clusters.swift.conf_shim import write_shim

from . import netns, zones
from .lab_home import LabHome

CLUSTER_NAME = "lab-swift"
NETWORK = netns.SWIFT_NETWORK
NODE_COUNT = 4
# each node's memory cgroup limit (lab/memcg.py): its 12 servers and daemons use
# 680-730 MiB (RSS 58-69 MiB each, measured idle): 2x headroom; its sshd stays outside
NODE_MEMORY_MIB = 1536
PROXY_ADDRESS = "127.0.0.1"
PROXY_PORT = 8280
MEMCACHE_PORT = 6250
MEMCACHE_MAX_CONNECTIONS = 64
RSYNC_PORT = 873  # each node has its own address: the standard port
SERVER_PORTS = {"object": 6200, "container": 6201, "account": 6202}
SERVER_TYPES = ("object", "container", "account")
PART_POWER = 8  # objects
DB_PART_POWER = 6  # accounts and containers: the container updater forks per partition
REPLICAS = 3
DISK_UNIT_BYTES = 512 * 1024**2  # times zones.capacity_units of the node
AUTH_USER = "test:tester"
AUTH_KEY = "testing"  # tempauth needs it in the proxy config; lab only
S3_REGION = "us-east-1"  # s3api's default location, which Signature V4 signs
# background daemons of each server type (the reaper only matters for deleted accounts)
DAEMONS = {
    "object": ("object-replicator", "object-updater", "object-auditor"),
    "container": ("container-replicator", "container-updater", "container-auditor"),
    "account": ("account-replicator", "account-auditor"),
}
# short enough that catch-up after a fault is seen within minutes
OBJECT_REPLICATOR_INTERVAL_S = 10
OBJECT_REPLICATOR_CONCURRENCY = 4
DB_REPLICATOR_INTERVAL_S = 30
OBJECT_UPDATER_INTERVAL_S = 30
CONTAINER_UPDATER_INTERVAL_S = 300
AUDITOR_INTERVAL_S = 300
HEALTH_TIMEOUT = 120.0


def zone_of(node: netns.LabNode) -> int:
    return zones.zone_number(node.index)


def disk_bytes(node: netns.LabNode) -> int:
    return DISK_UNIT_BYTES * zones.capacity_units(node.index)


def programs_of_node() -> list[str]:
    """Every program one storage node runs (servers first), without the rsync daemon."""
    servers = [f"{t}-server" for t in SERVER_TYPES]
    return servers + [d for t in SERVER_TYPES for d in DAEMONS[t]]


@dataclass(frozen=True)
class SwiftLab(LabHome):
    """Where everything of one Swift lab lives, and how its parts are named."""

    @property
    def nodes(self) -> list[netns.LabNode]:
        return NETWORK.nodes(NODE_COUNT)

    def node(self, name: str) -> netns.LabNode:
        return next(n for n in self.nodes if n.name == name)

    @property
    def etc(self) -> Path:
        return self.home / "etc"

    @property
    def swift_conf(self) -> Path:
        return self.etc / "swift.conf"

    @property
    def shim_dir(self) -> Path:
        return self.home / "shim"

    @property
    def key_file(self) -> Path:
        return self.etc / "tester.key"

    @property
    def s3_access_key_file(self) -> Path:
        return self.etc / "tester.s3_access_key"

    @property
    def s3_secret_key_file(self) -> Path:
        return self.etc / "tester.s3_secret_key"

    def device(self, node: netns.LabNode) -> str:
        return f"d{node.index}"

    def devices_dir(self, node: netns.LabNode) -> Path:
        return self.home / "srv" / node.name

    def mount_point(self, node: netns.LabNode) -> Path:
        return self.devices_dir(node) / self.device(node)

    def image(self, node: netns.LabNode) -> Path:
        return self.home / "disks" / f"{self.device(node)}.img"

    def recon_cache(self, node: netns.LabNode) -> Path:
        return self.home / "cache" / node.name

    def server_conf(self, server_type: str, node: netns.LabNode) -> Path:
        return self.etc / f"{server_type}-server" / f"{node.name}.conf"

    def rsyncd_conf(self, node: netns.LabNode) -> Path:
        return self.etc / f"rsyncd-{node.name}.conf"

    @property
    def proxy_conf(self) -> Path:
        return self.etc / "proxy-server.conf"

    def pid_file(self, service: str) -> Path:
        """`service` as named in the inventory: e.g. object-server.node1, proxy-server."""
        return self.run_dir / f"{service}.pid"

    def log_file(self, service: str) -> Path:
        return self.log_dir / f"{service}.log"

    @property
    def auth_url(self) -> str:
        return f"http://{PROXY_ADDRESS}:{PROXY_PORT}/auth/v1.0"

    def _swift_env(self) -> str:
        return (f"SWIFT_CONF_FILE={shlex.quote(str(self.swift_conf))} "
                f"PYTHONPATH={shlex.quote(str(self.shim_dir))} PYTHONDONTWRITEBYTECODE=1")

    def start_command(self, program: str, conf: Path, service: str) -> str:
        """Shell command that starts a Swift program in the background and writes its pid file.

        Swift 2.30 programs stay in the foreground (swift-init did the rest), so the
        command detaches it itself: own session (setsid), no tty, no ssh channel kept
        open, core dumps off. `$!` is the program's PID: a non-interactive sh runs
        background jobs in its own process group, so setsid does not fork.
        """
        inner = (f"ulimit -c 0; cd /; {self._swift_env()} setsid swift-{program} "
                 f"{shlex.quote(str(conf))} -v </dev/null "
                 f">>{shlex.quote(str(self.log_file(service)))} 2>&1 & "
                 f"echo $! >{shlex.quote(str(self.pid_file(service)))}")
        return f"sh -c {shlex.quote(inner)}"

    def rsync_start_command(self, node: netns.LabNode) -> str:
        """rsync --daemon forks and writes its own pid file (named in its config)."""
        return f"rsync --daemon --config={shlex.quote(str(self.rsyncd_conf(node)))}"


def default_home() -> Path:
    return state_dir() / "lab" / "swift"


def lab_at(home: Path | None) -> SwiftLab:
    return SwiftLab((home or default_home()).absolute())


# -- config files ------------------------------------------------------------------------



def swift_conf_text() -> str:
    return """\
# Written by lab/swift_layout.py at every `up`; edits are lost.
[swift-hash]
swift_hash_path_prefix = faultline-lab-prefix
swift_hash_path_suffix = faultline-lab-suffix

[storage-policy:0]
name = gold
default = yes

[swift-constraints]
"""


def _common(swift_dir: Path | str, user: str) -> str:
    return (f"user = {user}\nswift_dir = {swift_dir}\nlog_level = INFO\n"
            "eventlet_debug = false\n")


PROXY_PIPELINE = " ".join([
    "catch_errors", "gatekeeper", "healthcheck", "proxy-logging", "cache", "listing_formats",
    "s3api", "tempauth", "copy", "slo", "dlo", "proxy-logging", "proxy-server"])


def proxy_conf_text(swift_dir: Path | str, user: str = "root", bind_ip: str = PROXY_ADDRESS,
                    bind_port: int = PROXY_PORT,
                    memcache: str = f"{PROXY_ADDRESS}:{MEMCACHE_PORT}") -> str:
    """The proxy's configuration; by default the Pacific lab's (lab/swift_current.py runs
    its proxy elsewhere, as the swift user)."""
    return f"""\
# Written by lab/swift_layout.py at every `up`; edits are lost.
[DEFAULT]
bind_ip = {bind_ip}
bind_port = {bind_port}
# one process, no forked workers: a SIGKILL of its PID is a dead proxy
workers = 0
log_name = proxy-server
{_common(swift_dir, user)}
[pipeline:main]
pipeline = {PROXY_PIPELINE}

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
allow_account_management = true
conn_timeout = 0.5
node_timeout = 10

# S3 on the same proxy, path-style; its access key is tempauth's account:user and its
# secret that user's key. Placed after cache and before tempauth, as s3api requires
[filter:s3api]
use = egg:swift#s3api
location = {S3_REGION}

[filter:tempauth]
use = egg:swift#tempauth
user_admin_admin = admin .admin .reseller_admin
user_test_tester = {AUTH_KEY} .admin

[filter:healthcheck]
use = egg:swift#healthcheck

[filter:cache]
use = egg:swift#memcache
memcache_servers = {memcache}
# Every request reads its token from memcached. With the default two pooled
# connections, a busy proxy waits over pool_timeout, the only memcached gets
# error-limited and every request is refused for 60 s: an outage of the lab's
# own making, seen after restores on a loaded machine. One connection per
# load worker (loadgen.drivers.SWIFT_MAX_WORKERS) means nobody queues.
memcache_max_connections = {MEMCACHE_MAX_CONNECTIONS}

[filter:catch_errors]
use = egg:swift#catch_errors

[filter:gatekeeper]
use = egg:swift#gatekeeper

[filter:proxy-logging]
use = egg:swift#proxy_logging

[filter:listing_formats]
use = egg:swift#listing_formats

[filter:copy]
use = egg:swift#copy

[filter:slo]
use = egg:swift#slo

[filter:dlo]
use = egg:swift#dlo
"""


def server_conf_text(server_type: str, node: netns.LabNode, devices: Path | str,
                     recon_cache: Path | str, swift_dir: Path | str, user: str = "root") -> str:
    replicator_interval = (OBJECT_REPLICATOR_INTERVAL_S if server_type == "object"
                           else DB_REPLICATOR_INTERVAL_S)
    # the object replicator syncs one partition at a time by default: handoffs written
    # during a 15 s fault under load took 80 s to go home on the 2-core lab
    replicator_concurrency = (f"concurrency = {OBJECT_REPLICATOR_CONCURRENCY}\n"
                              if server_type == "object" else "")
    text = f"""\
# Written by lab/swift_layout.py at every `up`; edits are lost.
[DEFAULT]
devices = {devices}
# an unmounted device answers 507 instead of filling the root fs
mount_check = true
bind_ip = {node.address}
bind_port = {SERVER_PORTS[server_type]}
workers = 0
recon_cache_path = {recon_cache}
log_name = {server_type}-server.{node.name}
{_common(swift_dir, user)}
[pipeline:main]
pipeline = healthcheck recon {server_type}-server

[app:{server_type}-server]
use = egg:swift#{server_type}

[filter:healthcheck]
use = egg:swift#healthcheck

[filter:recon]
use = egg:swift#recon

[{server_type}-replicator]
rsync_module = rsync://{{replication_ip}}:{RSYNC_PORT}/{server_type}
interval = {replicator_interval}
{replicator_concurrency}
[{server_type}-auditor]
interval = {AUDITOR_INTERVAL_S}
"""
    if server_type == "object":
        text += f"\n[object-updater]\ninterval = {OBJECT_UPDATER_INTERVAL_S}\n"
    elif server_type == "container":
        text += f"\n[container-updater]\ninterval = {CONTAINER_UPDATER_INTERVAL_S}\n"
    return text


def rsyncd_conf_text(node: netns.LabNode, devices: Path | str, lock_dir: Path | str,
                     user: str = "root", pid_file: Path | None = None,
                     log_file: Path | None = None) -> str:
    """The rsync daemon's modules; without a log file it logs to syslog (the journal)."""
    lines = ["# Written by lab/swift_layout.py at every `up`; edits are lost.",
             f"uid = {user}", f"gid = {user}", "use chroot = no", f"address = {node.address}",
             f"port = {RSYNC_PORT}",
             *([f"pid file = {pid_file}"] if pid_file else []),
             *([f"log file = {log_file}"] if log_file else []), ""]
    for server_type in SERVER_TYPES:
        lines += [f"[{server_type}]", "max connections = 25",
                  f"path = {devices}/", "read only = false",
                  f"lock file = {lock_dir}/rsync-{server_type}-{node.name}.lock", ""]
    return "\n".join(lines)


def write_configs(lab: SwiftLab) -> None:
    for directory in (lab.etc, lab.shim_dir, lab.run_dir, lab.log_dir,
                      *(lab.etc / f"{t}-server" for t in SERVER_TYPES),
                      *(lab.recon_cache(n) for n in lab.nodes),
                      *(lab.devices_dir(n) for n in lab.nodes)):
        directory.mkdir(parents=True, exist_ok=True)
    write_shim(lab.shim_dir)
    lab.swift_conf.write_text(swift_conf_text())
    lab.proxy_conf.write_text(proxy_conf_text(lab.etc))
    for node in lab.nodes:
        for server_type in SERVER_TYPES:
            lab.server_conf(server_type, node).write_text(server_conf_text(
                server_type, node, lab.devices_dir(node), lab.recon_cache(node), lab.etc))
        lab.rsyncd_conf(node).write_text(rsyncd_conf_text(
            node, lab.devices_dir(node), lab.run_dir,
            pid_file=lab.pid_file(f"rsyncd.{node.name}"),
            log_file=lab.log_file(f"rsyncd.{node.name}")))
    write_credentials(lab)


def write_credentials(lab: SwiftLab) -> None:
    """The tester's tempauth key and S3 keys, where the inventory says (0600)."""
    write_private(lab.key_file, AUTH_KEY + "\n")
    write_private(lab.s3_access_key_file, AUTH_USER + "\n")
    write_private(lab.s3_secret_key_file, AUTH_KEY + "\n")
