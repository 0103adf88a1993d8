"""A Swift admin client: recon, dispersion, handoff partitions and ring facts.

Everything comes from JSON that Swift itself produces:
- recon middleware on each storage server (`/recon/unmounted`, `/recon/replication/object`,
  `/recon/async`, `/recon/diskusage`) and `/healthcheck` for whether a server answers;
- `swift-dispersion-report --dump-json` (and `swift-dispersion-populate`, once) for the
  copies found of a sample of objects and containers;
- the rings (clusters/swift/ring.py) plus a listing of each device's `objects/`,
  `containers/` and `accounts/` directories over SSH for handoff partitions:
  partitions on a device that the ring does not place there;
- the proxy's `/healthcheck` (at the auth URL's host and port).

Swift's tools read /etc/swift/swift.conf from a hard-wired path. For a cluster whose
swift.conf lives elsewhere (the inventory's `client.swift_conf`), they run with
`SWIFT_CONF_FILE` set and a `sitecustomize.py` shim on PYTHONPATH that honours it
(clusters/swift/conf_shim.py).
"""

from __future__ import annotations

import http.client
import json
import os
import shlex
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from clusters.access.credentials import swift_credentials
from clusters.access.inventory import Cluster, Node
from clusters.access.ssh import NodeShell
from clusters.exceptions import AdminCommandFailed, ClusterError, NodeUnreachable
from clusters.swift.conf_shim import write_shim
from clusters.swift.ring import RingFacts, read_ring_facts
from clusters.swift.ring_files import RingFileRefused, check_ring_file
from clusters.swift.state import Dispersion, NodeRecon, SwiftState, parse_dispersion

SERVER_TYPES = ("object", "container", "account")
DEFAULT_PORTS = {"object": 6200, "container": 6201, "account": 6202}
DISPERSION_COVERAGE = 25  # percent of partitions; 100% took over a minute to populate here



POLL_DUTY = 1 / 3  # the share of the time polling may keep the cluster's machines busy
# and the longest pause: a wait sees what came true at most this late. On a loaded 2-core
# lab a dispersion report took over 60 s, and a pause of twice that held a replication wait
# 4 minutes past the moment the cluster had caught up (CI at 22127d1)
POLL_MAX_PAUSE_S = 10.0
# a dispersion report killed at 30 s, then 60 s, on a loaded 2-core lab was retried and
# killed again for minutes: no report for 253 s in one CI run, and a replication wait that
# failed with "dispersion unknown" though no handoff was left (make examples, 2026-12-01)
DISPERSION_TIMEOUT_S = 90.0


def poll_pause(took_s: float, floor_s: float = 1.0,
               ceiling_s: float = POLL_MAX_PAUSE_S) -> float:
    """The wait after a poll that took `took_s` (an SSH listing, a dispersion report), so
    that polling keeps the cluster's machines busy at most POLL_DUTY of the time: twice the
    poll's length, within [floor_s, ceiling_s]."""
    return min(ceiling_s, max(floor_s, took_s * (1 / POLL_DUTY - 1)))


def _get_json(address: str, port: int, path: str, timeout: float) -> Any:
    conn = http.client.HTTPConnection(address, port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise AdminCommandFailed(f"GET {address}:{port}{path} answered {response.status}")
        return json.loads(body) if path.startswith("/recon") else body.decode()
    finally:
        conn.close()


def answers_healthcheck(address: str, port: int, timeout: float = 2.0) -> bool:
    """A Swift server (or proxy) at address:port answers GET /healthcheck with OK."""
    try:
        return _get_json(address, port, "/healthcheck", timeout) == "OK"
    except (OSError, http.client.HTTPException, AdminCommandFailed):
        return False


def proxy_address(cluster: Cluster) -> tuple[str, int] | None:
    """The proxy's host and port: those of the auth URL (tempauth runs in the proxy)."""
    url = urlsplit(cluster.client.get("auth_url") or "")
    return (url.hostname, url.port or 80) if url.hostname else None


class SwiftAdmin:
    """Recon, dispersion and handoffs of one Swift cluster. Use as a context manager."""

    def __init__(self, cluster: Cluster, timeout: float = 2.0):
        if cluster.kind != "swift":
            raise ClusterError(f"{cluster.name} is a {cluster.kind} cluster, not Swift")
        self.cluster = cluster
        self.timeout = timeout
        self.swift_dir = cluster.client.get("swift_dir")
        if not self.swift_dir:
            raise ClusterError(f"{cluster.name}: client.swift_dir (where its rings are) "
                               "is not in the inventory")
        self.ports = {**DEFAULT_PORTS, **(cluster.client.get("ports") or {})}
        self._facts: RingFacts | None = None
        self._facts_stamp: tuple = ()
        self._shells: dict[str, NodeShell] = {}
        # one lock per node: an unreachable node must not hold up the others' listings
        self._shell_locks = {n.name: threading.Lock() for n in cluster.nodes}
        self._children: set[subprocess.Popen] = set()
        self._children_lock = threading.Lock()
        self._cancelled = False
        self._pool = ThreadPoolExecutor(max_workers=max(4, 3 * len(cluster.nodes)),
                                        thread_name_prefix="faultline-recon")

    def __enter__(self) -> SwiftAdmin:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.cancel()
        self._pool.shutdown(wait=True)
        for shell in self._shells.values():
            shell.close()
        self._shells.clear()

    # -- rings --------------------------------------------------------------------------

    def ring_facts(self) -> RingFacts:
        """The rings' facts, read again when a ring file changed (a ring pushed while a
        sampler runs, clusters/swift/scale_steps.py: handoffs are counted against the new one)."""
        stamp = self.ring_stamp()
        if self._facts is None or stamp != self._facts_stamp:
            self._facts = read_ring_facts(self.swift_dir)
            self._facts_stamp = stamp
        return self._facts

    def ring_stamp(self) -> tuple:
        """What changes when a ring file is replaced (time, size, inode of each)."""
        stamp = []
        for ring in SERVER_TYPES:
            try:
                info = os.stat(os.path.join(self.swift_dir, f"{ring}.ring.gz"))
                stamp.append((info.st_mtime_ns, info.st_size, info.st_ino))
            except OSError:
                stamp.append(None)
        return tuple(stamp)

    def storage_nodes(self) -> list[Node]:
        """The inventory's nodes that hold a device of the object ring."""
        ips = {d.ip for d in self.ring_facts().devices["object"]}
        return [n for n in self.cluster.nodes if n.address in ips]

    # -- recon --------------------------------------------------------------------------

    def _healthy(self, node: Node, server_type: str) -> bool:
        return answers_healthcheck(node.address, self.ports[server_type], self.timeout)

    def _recon(self, node: Node, servers_up: dict[str, bool], path: str) -> Any:
        """Ask any answering server of the node: they share the node's recon cache."""
        for server_type in SERVER_TYPES:
            if servers_up.get(server_type):
                try:
                    return _get_json(node.address, self.ports[server_type], f"/recon/{path}",
                                     self.timeout)
                except (OSError, http.client.HTTPException, AdminCommandFailed,
                        json.JSONDecodeError):
                    continue
        return None

    def node_recon(self, node: Node) -> NodeRecon:
        up = dict(zip(SERVER_TYPES, self._pool.map(lambda t: self._healthy(node, t),
                                                    SERVER_TYPES), strict=True))
        unmounted = self._recon(node, up, "unmounted") or []
        replication = self._recon(node, up, "replication/object") or {}
        pending = self._recon(node, up, "async") or {}
        usage = self._recon(node, up, "diskusage") or []
        seconds = replication.get("object_replication_time")
        # recon names every directory of the devices directory that is not mounted; only a
        # device of the rings matters (a scale device's mount point is unmounted just after
        # it left them, clusters/swift/scale_steps.py)
        in_rings = {d.device for devs in self.ring_facts().devices.values() for d in devs
                    if d.ip == node.address}
        return NodeRecon(
            node=node.name, servers_up=up,
            unmounted=tuple(sorted(d.get("device", "?") for d in unmounted
                                   if d.get("device", "?") in in_rings or "device" not in d)),
            replication_last=replication.get("object_replication_last"),
            replication_seconds=None if seconds is None else float(seconds) * 60,  # minutes
            async_pending=pending.get("async_pending"),
            disk_usage={d["device"]: round(d["used"] / d["size"], 4) for d in usage
                        if d.get("mounted") and d.get("size")})

    def version(self) -> str | None:
        """The Swift release the first answering storage node runs ("2.30.0")."""
        for node in self.storage_nodes():
            answer = self._recon(node, dict.fromkeys(SERVER_TYPES, True), "version")
            if isinstance(answer, dict) and answer.get("version"):
                return f"swift {answer['version']}"
        return None

    def recon(self) -> list[NodeRecon]:
        return list(self._pool.map(self.node_recon, self.storage_nodes()))

    # -- handoffs -----------------------------------------------------------------------

    def _shell(self, node: Node) -> NodeShell:
        with self._shell_locks[node.name]:
            shell = self._shells.get(node.name)
            if shell is None:
                shell = NodeShell(node, connect_timeout=self.timeout * 2)
                shell.connect()
                self._shells[node.name] = shell
            return shell

    def node_handoffs(self, node: Node) -> int:
        """Partitions (objects, containers, accounts) on the node's devices that the rings
        place elsewhere."""
        facts = self.ring_facts()
        listing = " ; ".join(f"echo @{ring}@{shlex.quote(device)}; "
                             f"ls -1 {shlex.quote(mount + '/' + ring + 's')} 2>/dev/null"
                             for device, mount in self.node_devices(node)
                             for ring in SERVER_TYPES)
        try:
            out = self._shell(node).run(listing, timeout=self.timeout * 5, check=False).stdout
        except (NodeUnreachable, TimeoutError, OSError):
            self._drop_shell(node)
            raise
        count, ring, device_id = 0, "object", None
        for line in out.split():
            if line.startswith("@"):
                ring, device = line[1:].split("@", 1)
                device_id = facts.device_id(node.address, device, ring)
            elif line.isdigit() and device_id is not None and \
                    not facts.is_primary(int(line), device_id, ring):
                count += 1
        return count

    def node_devices(self, node: Node) -> list[tuple[str, str]]:
        """(device, mount point) of the node's devices: the inventory's, and those the rings
        place on the node beside them in the same devices directory (added by scale_out,
        clusters/swift/new_device.py, which the inventory does not list)."""
        disks = [(d.swift_device, d.mount) for d in self.cluster.disks
                 if d.node == node.name and d.swift_device]
        if not disks:
            raise ClusterError(f"{self.cluster.name}: no disk with a swift_device on "
                               f"{node.name} in the inventory")
        devices_dir = os.path.dirname(disks[0][1])
        known = {device for device, _ in disks}
        more = sorted({d.device for devs in self.ring_facts().devices.values() for d in devs
                       if d.ip == node.address and d.device not in known})
        return disks + [(device, os.path.join(devices_dir, device)) for device in more]

    def _drop_shell(self, node: Node) -> None:
        with self._shell_locks[node.name]:
            shell = self._shells.pop(node.name, None)
        if shell is not None:
            shell.close()

    def handoffs(self) -> dict[str, int] | None:
        """Handoff partitions per node; None if some node could not be listed."""
        def one(node: Node) -> int | None:
            try:
                return self.node_handoffs(node)
            except (ClusterError, TimeoutError, OSError):
                return None
        counts = dict(zip([n.name for n in self.storage_nodes()],
                          self._pool.map(one, self.storage_nodes()), strict=True))
        return None if None in counts.values() else counts

    # -- dispersion ---------------------------------------------------------------------

    def _tool(self, program: str, timeout_s: float) -> str:
        credentials = swift_credentials(self.cluster)
        for ring_type in ("object", "container"):  # the tool would unpickle an old ring
            ring = Path(self.swift_dir) / f"{ring_type}.ring.gz"
            if ring.exists():
                try:
                    check_ring_file(str(ring))
                except RingFileRefused as exc:
                    raise AdminCommandFailed(str(exc)) from None
        with tempfile.TemporaryDirectory(prefix="faultline-dispersion-") as tmp:
            conf = Path(tmp) / "dispersion.conf"
            conf.write_text(
                "[dispersion]\n"
                f"auth_url = {credentials.auth_url}\nauth_user = {credentials.user}\n"
                f"auth_key = {credentials.key}\nswift_dir = {self.swift_dir}\n"
                f"dispersion_coverage = {DISPERSION_COVERAGE}\n"
                # the default 5 retries back off for ~100 s per dead node
                "retries = 1\nconcurrency = 25\n")
            conf.chmod(0o600)
            env = dict(os.environ)
            swift_conf = self.cluster.client.get("swift_conf")
            if swift_conf:
                write_shim(Path(tmp))
                env.update(SWIFT_CONF_FILE=swift_conf, PYTHONPATH=tmp)
            argv = [program, *(["-j"] if program.endswith("report") else []), str(conf)]
            out, err, code = self._child(argv, env, timeout_s)
        if code != 0:
            last = (err.strip().splitlines() or ["no output"])[-1]
            raise AdminCommandFailed(f"{program} exited {code}: {last}")
        return out

    def _child(self, argv: list[str], env: dict, timeout_s: float) -> tuple[str, str, int]:
        """Run a Swift tool; cancel() ends it at once (a sampler that stops must not wait)."""
        with self._children_lock:
            if self._cancelled:
                raise AdminCommandFailed(f"{argv[0]}: cancelled")
            child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env)
            self._children.add(child)
        try:
            out, err = child.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            raise AdminCommandFailed(f"{argv[0]} still running after {timeout_s:.0f} s") \
                from None
        finally:
            with self._children_lock:
                self._children.discard(child)
        return out, err, child.returncode

    def cancel(self) -> None:
        """End the Swift tools running now, and refuse new ones."""
        with self._children_lock:
            self._cancelled = True
            for child in self._children:
                child.kill()

    def populate_dispersion(self, timeout_s: float = 300.0) -> None:
        """Create the dispersion containers and objects (once per cluster)."""
        self._tool("swift-dispersion-populate", timeout_s)

    def dispersion(self, timeout_s: float = DISPERSION_TIMEOUT_S) -> Dispersion:
        started = time.time()
        out = self._tool("swift-dispersion-report", timeout_s)
        start = out.find("{")  # the tool may print a policy line before the JSON
        try:
            raw = json.loads(out[start:]) if start >= 0 else {}
        except json.JSONDecodeError:
            raw = {}
        if not raw.get("object"):
            raise AdminCommandFailed("swift-dispersion-report gave no object report "
                                     "(was swift-dispersion-populate run?)")
        return parse_dispersion(raw, ts=(started + time.time()) / 2)

    # -- all together -------------------------------------------------------------------

    def state(self, dispersion: Dispersion | None | bool = True,
              handoffs: dict[str, int] | None | bool = True) -> SwiftState:
        """Recon now; dispersion and handoffs now (True), or the ones given (a slower
        loop's: both cost far more than recon)."""
        if dispersion is True:
            try:
                dispersion = self.dispersion()
            except ClusterError:
                dispersion = None
        nodes = tuple(self.recon())
        # a node that answers nothing (off, partitioned) cannot be listed either: its
        # handoffs are unknown, and waiting out an SSH timeout would stall the sample
        if not all(n.reachable for n in nodes):
            handoffs = None
        elif handoffs is True:
            handoffs = self.handoffs()
        return SwiftState(nodes=nodes, handoffs=handoffs, dispersion=dispersion or None,
                          proxy_up=self.proxy_up())

    def proxy_up(self) -> bool:
        """The proxy (at the auth URL's host and port) answers its healthcheck."""
        proxy = proxy_address(self.cluster)
        return proxy is None or answers_healthcheck(*proxy, self.timeout)
