"""Scale a Ceph cluster out by one OSD on a new disk of an existing node, and back in: what
the new OSD is, and the shell commands that make, start and remove it on its node.

The inventory says where a new OSD's disk and files go, as templates of its id, under the
cluster's `scale` key (the lab writes it; a cluster without it cannot be scaled):

    scale:
      ceph_osd:
        image: /var/lib/faultline/lab/ceph/disks/osd{id}.img   # a new sparse file, XFS,
        mount: /var/lib/faultline/lab/ceph/osd/ceph-{id}       #  loop-mounted here = osd_data
        pid_file: /var/lib/faultline/lab/ceph/run/ceph-osd.{id}.pid
        log: /var/lib/faultline/lab/ceph/log/osd.{id}.stdout

The OSD is started like the lab's others (pid file, `ceph-osd -c CONF -i ID` over SSH on
its node), with its place given on the command line, so a restart by the inventory's
start command keeps it: CRUSH location root=default, the node's zone, host=<node>; the
node's address as public and cluster address; a BlueStore block file of `size_gib`.
cephx must be off (the lab's); a cluster with cephx would need the OSD's key made first.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from clusters.access.inventory import Cluster, write_cluster
from clusters.access.node_commands import is_mounted
from clusters.exceptions import InvalidScale

MIN_SIZE_GIB, MAX_SIZE_GIB = 1, 1024
IMAGE_MARGIN = 1024**3  # XFS's own space beside BlueStore's block file
TEMPLATE_KEYS = ("image", "mount", "pid_file", "log")
_NAME = re.compile(r"[A-Za-z0-9._-]+")  # put raw into a CRUSH location and a shell command


@dataclass(frozen=True)
class NewOsd:
    """One OSD a scale action adds (and the ledger keeps, to remove it again)."""

    osd_id: int
    uuid: str
    node: str
    zone: str | None
    address: str
    size_gib: float
    conf: str
    image: str
    mount: str
    pid_file: str
    log: str
    # a lab node's memory cgroup (clusters/faults/memory_hog.py), where its daemons are born
    memory_cgroup: str | None = None

    @property
    def name(self) -> str:
        return f"osd.{self.osd_id}"

    @property
    def block_bytes(self) -> int:
        return int(self.size_gib * 1024**3)

    @property
    def crush_location(self) -> str:
        zone = f"zone={self.zone}," if self.zone else ""
        return f"root=default,{zone}host={self.node}"

    def says(self) -> str:
        return (f"{self.name} added on a new {self.size_gib:g} GiB disk of {self.node} "
                f"({self.image} on {self.mount})")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_size(size_gib: Any) -> float:
    if isinstance(size_gib, bool) or not isinstance(size_gib, int | float) \
            or not MIN_SIZE_GIB <= size_gib <= MAX_SIZE_GIB:
        raise InvalidScale(f"size_gib must be a number of GiB from {MIN_SIZE_GIB} to "
                           f"{MAX_SIZE_GIB}, not {size_gib!r}")
    return float(size_gib)


def check_node(cluster: Cluster, node: Any) -> None:
    """The node exists, and its name and zone can go into a CRUSH location as they are."""
    if cluster.kind != "ceph":
        raise InvalidScale(f"{cluster.name} is a {cluster.kind} cluster, not Ceph")
    if node not in cluster.node_names:
        raise InvalidScale(f"cluster {cluster.name!r} has no node {node!r} "
                           f"(nodes: {', '.join(cluster.node_names)})")
    zone = cluster.node(node).zone
    for what, value in (("node", node), ("zone", zone)):
        if value is not None and not _NAME.fullmatch(str(value)):
            raise InvalidScale(f"{what} name {value!r} is not a plain name (letters, digits, "
                               "'.', '_', '-')")


def template(inventory: str | Path, cluster: str) -> dict[str, str]:
    """The cluster's `scale.ceph_osd` templates from the inventory file (the parsed Cluster
    does not keep them); InvalidScale if the cluster does not say how to add an OSD."""
    raw = yaml.safe_load(Path(inventory).read_text()) or {}
    spec = ((raw.get("clusters") or {}).get(cluster) or {}).get("scale") or {}
    found = spec.get("ceph_osd") if isinstance(spec, dict) else None
    if not isinstance(found, dict) or any(
            not isinstance(found.get(k), str) or "{id}" not in found[k] for k in TEMPLATE_KEYS):
        raise InvalidScale(f"cluster {cluster!r} in {inventory} does not say where a new OSD "
                           f"goes: it needs scale.ceph_osd with {', '.join(TEMPLATE_KEYS)}, "
                           "each with {id} in it")
    return found


def new_osd(cluster: Cluster, templates: dict[str, str], osd_id: int, uuid: str, node: str,
            size_gib: float) -> NewOsd:
    paths = {k: templates[k].replace("{id}", str(osd_id)) for k in TEMPLATE_KEYS}
    target = cluster.node(node)
    return NewOsd(osd_id=osd_id, uuid=uuid, node=node, zone=target.zone,
                  address=target.address, size_gib=size_gib, conf=cluster.client["conf"],
                  memory_cgroup=target.memory_cgroup, **paths)


def _options(osd: NewOsd) -> str:
    """What places the OSD, on every start as at its mkfs (they override ceph.conf)."""
    q = shlex.quote
    return (f"-c {q(osd.conf)} -i {osd.osd_id} --osd-data {q(osd.mount)} "
            f"--pid-file {q(osd.pid_file)} --public-addr {q(osd.address)} "
            f"--cluster-addr {q(osd.address)} --crush-location {q(osd.crush_location)} "
            f"--bluestore-block-size {osd.block_bytes}")


def check_command(osd: NewOsd) -> str:
    """Shell on the node that changes nothing: exit 3 with the reason if the image or the
    mount point is taken already, or its file system has too little free space."""
    q = shlex.quote
    image = q(osd.image)
    return (
        f"[ -e {image} ] && {{ echo {q(f'{osd.image} exists already')} >&2; exit 3; }}; "
        f"{is_mounted(osd.mount)} && {{ echo {q(f'something is mounted on {osd.mount}')} "
        ">&2; exit 3; }; "
        f"d=$(dirname {image}); while [ ! -d \"$d\" ]; do d=$(dirname \"$d\"); done; "
        f"free=$(df -B1 --output=avail \"$d\" | tail -1 | tr -d ' '); "
        f"[ \"$free\" -ge {osd.block_bytes + IMAGE_MARGIN} ] || {{ echo \"only $free bytes "
        f"free in $d, {osd.block_bytes + IMAGE_MARGIN} needed for {osd.name}'s disk\" >&2; "
        f"exit 3; }}; true")


def checked_added(cluster: Cluster, templates: dict[str, str], osd_id: int,
                  added: Any) -> dict[str, Any]:
    """The fault ledger's record of an OSD scale added, once it is seen to be that OSD as the
    inventory's templates place it (its image, mount, pid file and log, on one of the
    cluster's nodes): remove_command kills, unmounts and deletes what the record names.
    InvalidScale saying what differs otherwise."""
    if not isinstance(added, dict):
        raise InvalidScale(f"the record of osd.{osd_id} is not an added OSD ({added!r})")
    if added.get("osd_id") != osd_id:
        raise InvalidScale(f"the record of osd.{osd_id} names osd_id {added.get('osd_id')!r}")
    if added.get("node") not in cluster.node_names:
        raise InvalidScale(f"the record of osd.{osd_id} names node {added.get('node')!r}, no "
                           f"node of {cluster.name} (nodes: {', '.join(cluster.node_names)})")
    for key in TEMPLATE_KEYS:
        expected = templates[key].replace("{id}", str(osd_id))
        if added.get(key) != expected:
            raise InvalidScale(f"the record of osd.{osd_id} names {key} {added.get(key)!r}, "
                               f"not {expected!r} where the inventory's scale.ceph_osd puts it")
    return added


def make_disk_command(osd: NewOsd) -> str:
    """Shell on the node: the sparse XFS image (made aside, then renamed, so no half-made
    image is left under its name), loop-mounted where the OSD's data goes."""
    q = shlex.quote
    image, partial, mount = q(osd.image), q(osd.image + ".partial"), q(osd.mount)
    return (f"mkdir -p $(dirname {image}) && truncate -s {osd.block_bytes + IMAGE_MARGIN} "
            f"{partial} && mkfs.xfs -q -f {partial} && mv {partial} {image} && "
            f"mkdir -p {mount} && mount -o loop,noatime {image} {mount}")


def mkfs_command(osd: NewOsd) -> str:
    log = shlex.quote(osd.log)
    return (f"ulimit -c 0; ceph-osd {_options(osd)} --mkfs --osd-uuid {shlex.quote(osd.uuid)} "
            f"</dev/null >>{log} 2>&1 || {{ tail -5 {log} >&2; exit 1; }}")


def start_command(osd: NewOsd) -> str:
    """How the inventory starts it (lab/ceph_layout.py's shape): it daemonizes itself; on a
    lab node, born in the node's memory cgroup as the node's other daemons are (if the node
    has one)."""
    inner = (f"ulimit -c 0; exec ceph-osd {_options(osd)} </dev/null "
             f">>{shlex.quote(osd.log)} 2>&1")
    born = ""
    if osd.memory_cgroup:
        cgroup = shlex.quote(osd.memory_cgroup)
        born = f"if [ -d {cgroup} ]; then echo $$ > {cgroup}/cgroup.procs; fi; "
    return f"{born}sh -c {shlex.quote(inner)}"


def remove_command(osd: dict[str, Any], stop_s: int = 30) -> str:
    """Shell on the node, idempotent: stop the OSD of the pid file (SIGTERM, SIGKILL after
    stop_s), unmount its disk, free its loop devices, delete the image and the mount point.
    Prints what it did."""
    q = shlex.quote
    pid_file, image, mount = q(osd["pid_file"]), q(osd["image"]), q(osd["mount"])
    return (
        # a zombie counts as gone (PID 1 reaps it late); a reused PID is not ours
        f"alive() {{ [ -d /proc/$1 ] && ! grep -q '^State:.*Z' /proc/$1/status; }}; "
        f"p=$(cat {pid_file} 2>/dev/null); "
        f"if [ -n \"$p\" ] && readlink /proc/$p/exe 2>/dev/null | grep -q ceph-osd; then "
        f"kill -TERM $p; i=0; while alive $p && [ $i -lt {stop_s * 5} ]; do sleep 0.2; "
        f"i=$((i+1)); done; alive $p && kill -KILL $p; echo \"stopped ceph-osd (PID $p)\"; "
        f"fi; rm -f {pid_file}; "
        f"while {is_mounted(osd['mount'])}; do umount {mount} 2>/dev/null || "
        f"umount -l {mount} || exit 4; echo unmounted {mount}; done; "
        f"for dev in $(losetup -j {image} | cut -d: -f1); do losetup -d $dev; done; "
        f"if [ -e {image} ]; then rm -f {image}; echo deleted {image}; fi; "
        f"rm -f {q(osd['image'] + '.partial')}; [ -d {mount} ] && rmdir {mount}; true")


def _cluster_spec(inventory: str | Path, cluster: str) -> dict[str, Any]:
    raw = yaml.safe_load(Path(inventory).read_text()) or {}
    return dict(((raw.get("clusters") or {}).get(cluster)) or {})


def record_in_inventory(inventory: str | Path, cluster: str, osd: NewOsd) -> None:
    """The OSD and its disk in the inventory, so every other action sees it (kill_osd,
    start_osd, the guard)."""
    spec = _cluster_spec(inventory, cluster)
    spec["services"] = [s for s in spec.get("services") or [] if s.get("name") != osd.name] + [
        {"name": osd.name, "kind": "osd", "node": osd.node, "pid_file": osd.pid_file,
         "start": start_command(osd)}]
    spec["disks"] = [d for d in spec.get("disks") or [] if d.get("osd") != osd.osd_id] + [
        {"node": osd.node, "device": osd.image, "mount": osd.mount, "osd": osd.osd_id}]
    write_cluster(inventory, cluster, spec)


def forget_in_inventory(inventory: str | Path, cluster: str, osd_id: int) -> None:
    spec = _cluster_spec(inventory, cluster)
    if not spec:
        return  # the lab is down: nothing to forget
    spec["services"] = [s for s in spec.get("services") or [] if s.get("name") != f"osd.{osd_id}"]
    spec["disks"] = [d for d in spec.get("disks") or [] if d.get("osd") != osd_id]
    write_cluster(inventory, cluster, spec)
