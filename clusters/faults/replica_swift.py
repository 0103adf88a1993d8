"""Corrupt one replica of a Swift object on disk, and watch Swift find and mend it.

- The object: a canary written through the proxy (container `faultline-canary`), or a named
  "container/object" read back first (its content is what the replicas must hold).
- Where it lives: the object ring's primaries for it (clusters/swift/locate.py, Swift's own
  Ring and hash_path); the .data file is `<device>/objects/<partition>/<suffix>/<hash>/
  <timestamp>.data` on the chosen node, the object's bytes (its metadata, the ETag among
  them, is in extended attributes, which the flip leaves alone).
- The flip: `dd` over 16 bytes of that file, after checking that it holds the good content.
- Detection: the replica is quarantined (moved to `<device>/quarantined/objects/<hash>`) by
  the object auditor, or by the object server when a GET read it whole and its MD5 did not
  match the ETag. Triggered: `swift-object-auditor <conf> once -d <device>` on that node, with
  the node's own object-server configuration and the rate limits lifted.
- Repair: replication puts a good copy back: the .data file on that node has the good MD5.
"""

from __future__ import annotations

import http.client
import shlex
import threading
import time
from urllib.parse import quote, urlsplit

from clusters.access.credentials import swift_credentials
from clusters.access.http import request
from clusters.access.inventory import Cluster, Node
from clusters.access.ssh import NodeShell, run_on_node
from clusters.exceptions import ClusterError, InvalidCorruption, RemoteCommandFailed
from clusters.faults.corruption import (
    CANARY_PREFIX,
    CANARY_SIZE,
    SWIFT_CANARY_CONTAINER,
    Corruption,
    canary_content,
    choose_node,
    daemon_invocation,
    flip_offset,
    flipped,
    md5_of,
    parse_replica_state,
    swift_object_dir,
    swift_quarantine_dir,
    swift_replica_state_command,
    write_bytes_command,
)
from clusters.swift.locate import locate

AUDITOR = "swift-object-auditor"
DEFAULT_OBJECT_CONF = "/etc/swift/object-server.conf"


class SwiftObjects:
    """Objects through the proxy, with a token of the cluster's Swift user."""

    def __init__(self, cluster: Cluster):
        creds = swift_credentials(cluster)
        try:
            status, headers, _ = request(creds.auth_url, "GET", {
                "X-Auth-User": creds.user, "X-Auth-Key": creds.key}, timeout=30)
        except OSError as exc:
            raise ClusterError(f"cannot reach {creds.auth_url}: {exc}") from None
        if status >= 300 or "x-storage-url" not in headers:
            raise ClusterError(f"{creds.auth_url} refused {creds.user} ({status})")
        self.storage_url = headers["x-storage-url"]
        self.auth = {"X-Auth-Token": headers["x-auth-token"]}
        self.account = urlsplit(self.storage_url).path.rstrip("/").rsplit("/", 1)[-1]

    def _request(self, method: str, path: str, body: bytes | None = None
                 ) -> tuple[int, dict[str, str], bytes]:
        try:
            return request(f"{self.storage_url}/{quote(path)}", method, self.auth, body,
                           timeout=30)
        except (OSError, http.client.HTTPException) as exc:
            raise ClusterError(f"{method} of {path} failed: {exc}") from None

    def put(self, path: str, data: bytes) -> None:
        container = path.split("/", 1)[0]
        status = self._request("PUT", container)[0]
        if status not in (201, 202):
            raise ClusterError(f"PUT of container {container} answered {status}")
        status = self._request("PUT", path, data)[0]
        if status != 201:
            raise ClusterError(f"PUT of {path} answered {status}")

    def get(self, path: str) -> tuple[int, bytes, str]:
        """Status, body and the ETag header the proxy passed on."""
        status, headers, body = self._request("GET", path)
        return status, body, headers.get("etag", "").strip('"')

    def head(self, path: str) -> int:
        return self._request("HEAD", path)[0]

    def delete(self, path: str) -> int:
        return self._request("DELETE", path)[0]


def _object_path(cluster: Cluster, objects: SwiftObjects, obj: str) -> str:
    """The named object's "container/object", checked with a HEAD (no body is read, so no
    copy is audited on the way); InvalidCorruption if it is not there."""
    path = obj.strip("/")
    if "/" not in path:
        raise InvalidCorruption(f"a Swift object is named container/object, not {obj!r}")
    status = objects.head(path)
    if status == 404:
        raise InvalidCorruption(f"object {path} does not exist in {cluster.name} "
                                f"(account {objects.account})")
    if status >= 300:
        raise ClusterError(f"HEAD of {path} answered {status}")
    return path


def check_exists(cluster: Cluster, name: str) -> None:
    _object_path(cluster, SwiftObjects(cluster), name)


def _node_at(cluster: Cluster, address: str) -> Node:
    for node in cluster.nodes:
        if node.address == address:
            return node
    raise ClusterError(f"the ring places a copy on {address}, which is no node of {cluster.name}")


def _mount_of(cluster: Cluster, node: str, device: str) -> str:
    for disk in cluster.disks_on(node):
        if disk.swift_device == device and disk.mount:
            return disk.mount
    raise ClusterError(f"the inventory has no mount for device {device} of {node}")


def replica_dirs(cluster: Cluster, account: str, container: str, obj: str
                 ) -> tuple[dict[str, str], int, str]:
    """Each primary node's directory of the object ({node: path}, in the ring's order), the
    ring's replica count, and the object's partition and hash as "partition/hash"."""
    swift_dir = cluster.client.get("swift_dir") or "/etc/swift"
    where = locate(swift_dir, cluster.client.get("swift_conf"), account, container, obj)
    dirs = {}
    for ip, _, device in where.primaries:
        node = _node_at(cluster, ip).name
        dirs[node] = swift_object_dir(_mount_of(cluster, node, device), where.partition,
                                      where.hash)
    return dirs, int(where.replicas), f"{where.partition}/{where.hash}"


def plan(cluster: Cluster, node: str = "", obj: str = "",
         size: int = CANARY_SIZE) -> tuple[Corruption, bytes, int]:
    """Read the named object (or make the canary's content), locate it and choose the
    replica; nothing is written yet. Returns the corruption to make, the good content and
    the number of primary copies the ring names for it."""
    objects = SwiftObjects(cluster)
    if obj:
        path, owned = _object_path(cluster, objects, obj), False
        status, content, _ = objects.get(path)
        if status != 200:
            raise ClusterError(f"GET of {path} answered {status}")
    else:
        path = f"{SWIFT_CANARY_CONTAINER}/{CANARY_PREFIX}{time.time_ns():x}"
        owned, content = True, canary_content(path, size)
    offset = flip_offset(len(content))
    container, name = path.split("/", 1)
    swift_dir = cluster.client.get("swift_dir") or "/etc/swift"
    where = locate(swift_dir, cluster.client.get("swift_conf"), objects.account, container,
                   name)
    by_node = {_node_at(cluster, ip).name: device for ip, _, device in where.primaries}
    chosen = choose_node(list(by_node), node, path)
    mount = _mount_of(cluster, chosen, by_node[chosen])
    corruption = Corruption(
        system="swift", object=path, owned=owned, size=len(content), md5=md5_of(content),
        bad_md5=md5_of(flipped(content, offset)), offset=offset,
        good=content[offset:offset + 16].hex(), replica=f"{chosen}/{by_node[chosen]}",
        copies=int(where.replicas), holders=list(by_node), node=chosen,
        path=swift_object_dir(mount, where.partition, where.hash), mount=mount,
        hash=where.hash)
    return corruption, content, len(by_node)


def write_canary(cluster: Cluster, corruption: Corruption, content: bytes) -> None:
    """Write the canary through the proxy (a named object is there already)."""
    if corruption.owned:
        SwiftObjects(cluster).put(corruption.object, content)


def flip_script(corruption: Corruption) -> str:
    """Shell text run on the replica's node: wait for the .data file (the PUT returns on a
    quorum, the third copy may land a moment later), check it holds the good content, flip
    the bytes in place, and print the file's path and its new MD5."""
    data = f"$(ls -1 {shlex.quote(corruption.path)}/*.data 2>/dev/null | tail -n 1)"
    flip = bytes(b ^ 0xFF for b in bytes.fromhex(corruption.good))
    return (f"for i in $(seq 50); do f={data}; [ -n \"$f\" ] && break; sleep 0.2; done; "
            f"[ -n \"$f\" ] || {{ echo {shlex.quote(f'no .data file in {corruption.path}')} "
            ">&2; exit 3; }; "
            f"[ \"$(md5sum < \"$f\" | cut -c1-32)\" = {shlex.quote(corruption.md5)} ] || "
            f"{{ echo \"$f does not hold the object's content\" >&2; exit 4; }}; "
            + write_bytes_command('"$f"', corruption.offset, flip)
            + "; sync \"$f\"; echo \"$f\"; md5sum < \"$f\" | cut -c1-32")


def inject(cluster: Cluster, corruption: Corruption) -> str:
    """Flip the bytes in the replica's .data file; returns the file's path."""
    out = run_on_node(cluster.node(corruption.node), flip_script(corruption),
                      timeout=60).stdout.split()
    if len(out) != 2 or out[1] != corruption.bad_md5:
        raise RemoteCommandFailed(f"the flip in {corruption.replica} did not land: {out}")
    return out[0]


def auditor_command(cluster: Cluster, corruption: Corruption) -> str:
    """`swift-object-auditor <conf dir> once -v -d <device>` on the replica's node, with the
    node's object-server configuration (from the inventory's object-auditor service) and
    files_per_second / bytes_per_second lifted and no zero-byte-file pass (it would only
    crawl at its own 50 files a second), in a configuration directory of its own.
    The device's auditor_status_ALL.json goes first: it holds the partitions the running
    auditor has still to do in its pass, and a run `once` would audit only those."""
    device = corruption.replica.split("/", 1)[1]
    try:
        start = cluster.service(f"object-auditor.{corruption.node}").start
    except ClusterError:
        start = None
    env, arguments = daemon_invocation(start, AUDITOR)
    conf = shlex.quote(arguments[0] if arguments else DEFAULT_OBJECT_CONF)
    assign = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    status = shlex.quote(f"{corruption.mount.rstrip('/')}/objects/auditor_status_ALL.json")
    return (f"rm -f {status}; t=$(mktemp -d) && {{ if [ -d {conf} ]; then "
            f"cp {conf}/*.conf \"$t\"/; else cp {conf} \"$t\"/00-server.conf; fi; "
            "printf '[object-auditor]\\nfiles_per_second = 0\\nbytes_per_second = 0\\n"
            "zero_byte_files_per_second = 0\\n' "
            f"> \"$t\"/99-faultline.conf; env {assign} {AUDITOR} \"$t\" once -v "
            f"-d {shlex.quote(device)} 2>&1; rc=$?; rm -rf \"$t\"; exit $rc; }}")


class SwiftReplica:
    """The watch's view of one corrupted Swift replica (see actions/corrupt.py)."""

    detector = "the object auditor"

    def __init__(self, cluster: Cluster, corruption: Corruption):
        self.cluster, self.corruption = cluster, corruption
        self.objects = SwiftObjects(cluster)
        self.shell = NodeShell(cluster.node(corruption.node))
        self.auditor: threading.Thread | None = None
        self.audit_output = ""
        self.audit_started: float | None = None

    def close(self) -> None:
        self.shell.close()

    def read(self) -> tuple[bytes | None, bool]:
        """The object through the proxy (None: not readable), and whether the response
        itself gave the corruption away (its ETag is not the MD5 of its body)."""
        try:
            status, body, etag = self.objects.get(self.corruption.object)
        except ClusterError:
            return None, False
        if status != 200:
            return None, False
        return body, bool(etag) and etag != md5_of(body)

    def state(self) -> tuple[str | None, bool]:
        return parse_replica_state(self.shell.run(
            swift_replica_state_command(self.corruption), check=False).stdout)

    def start_detection(self) -> str:
        command = auditor_command(self.cluster, self.corruption)

        def audit() -> None:
            try:
                with NodeShell(self.cluster.node(self.corruption.node)) as shell:
                    self.audit_output = shell.run(command, timeout=600, check=False).stdout
            except ClusterError as exc:
                self.audit_output = f"the auditor did not run: {exc}"
        self.audit_started = time.monotonic()
        self.auditor = threading.Thread(target=audit, name="swift-object-auditor", daemon=True)
        self.auditor.start()
        return (f"swift-object-auditor once on {self.corruption.node} "
                f"(device {self.corruption.replica.split('/', 1)[1]})")

    def detected(self) -> str | None:
        """Whether the replica is quarantined yet (who did it: detected_by, afterwards)."""
        return "the replica quarantined" if self.state()[1] else None

    def detected_by(self, seen: str) -> str:
        """Who quarantined the replica: the auditor we ran if its log names the object, else
        the object server on a client GET (or, left to the schedule, either)."""
        if self.auditor is None:
            return "Swift (the replica quarantined, by its auditor or on a client GET)"
        self.auditor.join(timeout=300)
        if self.corruption.hash in self.audit_output:
            return "the object auditor (it quarantined the replica)"
        return ("the object server on a client GET (it sent the corrupt copy, then found its "
                "MD5 was not the ETag and quarantined it)")

    def start_repair(self) -> str | None:
        return None  # replication puts a good copy back by itself

    def repaired(self) -> bool:
        return self.state()[0] == self.corruption.md5

    def repaired_by(self) -> str:
        return "replication (the .data file on that node has the good MD5 again)"

    def confirm(self, timeout_s: float) -> str:
        return f"{self.corruption.replica} holds the good content (MD5 {self.corruption.md5})"


def restore(cluster: Cluster, corruption: Corruption) -> dict:
    """Undo the corruption (idempotent): a replica still corrupted gets its good bytes back;
    a canary is deleted through the proxy (and its container, if empty); a named object
    quarantined and not yet replicated back is read from the good copies and written again;
    the quarantined copies of the object on that device are removed."""
    shell = NodeShell(cluster.node(corruption.node))
    done: list[str] = []
    try:
        md5, _ = parse_replica_state(
            shell.run(swift_replica_state_command(corruption), check=False).stdout)
        if md5 == corruption.bad_md5:
            target = f'"$(ls -1 {shlex.quote(corruption.path)}/*.data | tail -n 1)"'
            shell.run(write_bytes_command(target, corruption.offset,
                                          bytes.fromhex(corruption.good)), timeout=60)
            done.append(f"good bytes written back in {corruption.replica}")
        objects = SwiftObjects(cluster)
        if corruption.owned:
            status = objects.delete(corruption.object)
            if status not in (204, 404):
                raise ClusterError(f"DELETE of {corruption.object} answered {status}")
            done.append(f"canary {corruption.object} deleted")
            # the canaries' container too, once empty (409: another canary is in it)
            objects.delete(corruption.object.split("/", 1)[0])
        elif md5 is None:
            status, body, _ = objects.get(corruption.object)
            if status == 200 and md5_of(body) == corruption.md5:
                objects.put(corruption.object, body)
                done.append(f"{corruption.object} written again from its good copies")
        quarantine = shlex.quote(swift_quarantine_dir(corruption.mount, corruption.hash))
        shell.run(f"rm -rf {quarantine} {quarantine}-*", timeout=60)
    finally:
        shell.close()
    return {"object": corruption.object, "replica": corruption.replica, "done": done}
