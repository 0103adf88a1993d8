"""Silent corruption of one replica: what is corrupted, how, and whether the guard allows it.

Pure logic, shared by the Ceph and Swift sides (clusters/faults/replica_ceph.py,
clusters/faults/replica_swift.py) and by the actions (actions/corrupt.py):
- a `Corruption` names exactly what it touches: one object (a canary Faultline wrote, or a
  named one), one replica of it (an OSD, or a Swift node's device), the bytes flipped (offset
  and the good bytes, kept so the flip can be undone) and the MD5 of the good content;
- the flip is an XOR with 0xff of `FLIP_LENGTH` bytes, written in place with `dd` (a
  command text, so it runs on the node that holds the file);
- the guard: a repair must find a majority of good copies that agree, so a corruption is
  refused on a pool or ring of one or two copies, and refused when this object already has a
  corrupted copy (never two of three), whatever allow_unavailable says.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import asdict, dataclass, field, fields

from clusters.access.inventory import Cluster
from clusters.exceptions import BlastRadiusExceeded, InvalidCorruption

CANARY_PREFIX = "faultline-canary-"
SWIFT_CANARY_CONTAINER = "faultline-canary"
CANARY_SIZE = 16 * 1024
FLIP_LENGTH = 16
MODES = ("triggered", "scheduled")


def canary_content(name: str, size: int = CANARY_SIZE) -> bytes:
    """The canary's bytes, derived from its name (nothing large is kept)."""
    block = hashlib.sha256(name.encode()).digest()
    out = bytearray()
    while len(out) < size:
        out += block
        block = hashlib.sha256(block).digest()
    return bytes(out[:size])


def md5_of(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def flip_offset(size: int) -> int:
    """Where the flip lands: a third into the object (inside any object of 2 flips or more)."""
    if size < FLIP_LENGTH:
        raise InvalidCorruption(f"an object of {size} bytes is too small to flip "
                                f"{FLIP_LENGTH} bytes in")
    return min(size // 3, size - FLIP_LENGTH)


def flipped(data: bytes, offset: int, length: int = FLIP_LENGTH) -> bytes:
    """The bytes with `length` of them from `offset` inverted (XOR 0xff)."""
    part = bytes(b ^ 0xFF for b in data[offset:offset + length])
    return data[:offset] + part + data[offset + length:]


def write_bytes_command(target: str, offset: int, data: bytes) -> str:
    """Shell text that overwrites `len(data)` bytes of the file `target` (a shell word:
    shlex.quote(path), or '"$f"') at `offset` in place (dash's printf takes octal escapes;
    dd with notrunc neither truncates nor moves the file)."""
    octal = "".join(f"\\{b:03o}" for b in data)
    return (f"printf '{octal}' | dd of={target} bs=1 seek={int(offset)} "
            f"count={len(data)} conv=notrunc status=none")


@dataclass(frozen=True)
class Corruption:
    """One corrupted replica of one object, as the ledger keeps it for the restore."""

    system: str  # "ceph" or "swift"
    object: str  # Ceph: the object's name in the pool; Swift: "container/object"
    owned: bool  # a canary written by the fault (the restore deletes it)
    size: int
    md5: str  # of the good content
    bad_md5: str  # of the replica's content once flipped
    offset: int  # where the flipped bytes start
    good: str  # hex of the good bytes there (the flip is undone by writing them back)
    replica: str  # "osd.2" or "node3/d3"
    copies: int  # copies the pool or ring keeps of the object
    pool: str = ""  # Ceph
    pgid: str = ""  # Ceph
    holders: list[str] = field(default_factory=list)  # every copy: OSDs (primary first), nodes
    node: str = ""  # the node holding the corrupted replica
    path: str = ""  # Swift: the object's directory on that node's device; Ceph: the data path
    mount: str = ""  # Swift: the device's mount point on the node
    hash: str = ""  # Swift: the object's name hash

    @property
    def key(self) -> str:
        """Its fault-ledger key: the object and the replica."""
        return f"corrupt:{self.object}@{self.replica}"

    @property
    def osd(self) -> int:
        return int(self.replica.removeprefix("osd."))

    def says(self) -> str:
        return (f"{FLIP_LENGTH} bytes flipped at offset {self.offset} of {self.object} "
                f"({self.size} B) on its replica {self.replica}"
                + (f" (PG {self.pgid})" if self.pgid else ""))

    def as_arguments(self) -> dict:
        return asdict(self)

    @classmethod
    def from_arguments(cls, arguments: dict) -> Corruption:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in arguments.items() if k in known})


_HASH = re.compile(r"[0-9a-f]{32}")
_PGID = re.compile(r"[0-9]+\.[0-9a-f]+")
_HEX = re.compile(r"(?:[0-9a-f]{2})+")


def confined(cluster: Cluster, record: object) -> Corruption:
    """The corruption the fault ledger recorded, once it is seen to stay where the fault
    was: a replica of the inventory (an OSD; a node's Swift device and its mount), the
    object's directory and quarantine under that mount, a canary deleted only if it is
    one. The restore writes bytes, deletes objects and runs `rm -rf` from it: anything else
    is InvalidCorruption saying what, and nothing runs."""
    if not isinstance(record, dict):
        raise InvalidCorruption(f"is not a corruption ({type(record).__name__})")
    try:
        corruption = Corruption.from_arguments(record)
    except TypeError as exc:
        raise InvalidCorruption(f"is not a whole corruption ({exc})") from None
    bad = [name for name in ("system", "object", "replica", "node", "path", "mount", "hash",
                             "pgid", "pool", "good", "md5") if not isinstance(getattr(
                                 corruption, name), str)]
    if bad:
        raise InvalidCorruption(f"names {', '.join(bad)} that {'is' if len(bad) == 1 else 'are'}"
                                " not text")
    if corruption.system != cluster.kind:
        raise InvalidCorruption(f"names a {corruption.system!r} replica, not one of "
                                f"{cluster.name} ({cluster.kind})")
    if not corruption.object:
        raise InvalidCorruption(f"names no object ({corruption.object!r})")
    offset = corruption.offset
    if not _HEX.fullmatch(corruption.good) or isinstance(offset, bool) \
            or not isinstance(offset, int) or offset < 0:
        raise InvalidCorruption(f"names bytes {corruption.good!r} at {corruption.offset!r}, "
                                "not hex at a whole offset")
    canary = (CANARY_PREFIX if cluster.kind == "ceph"
              else f"{SWIFT_CANARY_CONTAINER}/{CANARY_PREFIX}")
    if corruption.owned and not corruption.object.startswith(canary):
        raise InvalidCorruption(f"would delete {corruption.object!r} as a canary, which is "
                                f"no canary ({canary}...)")
    if cluster.kind == "ceph":
        _confined_ceph(cluster, corruption)
    else:
        _confined_swift(cluster, corruption)
    return corruption


def _confined_ceph(cluster: Cluster, corruption: Corruption) -> None:
    if not re.fullmatch(r"osd\.[0-9]+", corruption.replica) \
            or corruption.replica not in {s.name for s in cluster.services_of_kind("osd")}:
        raise InvalidCorruption(f"names replica {corruption.replica!r}, no OSD of "
                                f"{cluster.name}")
    if not _PGID.fullmatch(corruption.pgid):
        raise InvalidCorruption(f"names PG {corruption.pgid!r}, not a PG id")
    # its scratch file is /tmp/faultline-corrupt-<object>-<replica>: no other directory
    if "/" in corruption.object or "\0" in corruption.object:
        raise InvalidCorruption(f"names object {corruption.object!r}, whose scratch file "
                                "would not be in /tmp")


def _confined_swift(cluster: Cluster, corruption: Corruption) -> None:
    node, _, device = corruption.replica.partition("/")
    disks = [d for d in cluster.disks_on(node) if d.swift_device and d.swift_device == device]
    if node != corruption.node or not disks:
        raise InvalidCorruption(f"names replica {corruption.replica!r} on node "
                                f"{corruption.node!r}, no Swift device of {cluster.name}")
    if corruption.mount != disks[0].mount:
        raise InvalidCorruption(f"names mount {corruption.mount!r}, not {disks[0].mount!r} "
                                f"where the inventory mounts {corruption.replica}")
    if not _HASH.fullmatch(corruption.hash):
        raise InvalidCorruption(f"names hash {corruption.hash!r}, not an object's name hash "
                                "(32 hex digits)")
    prefix = f"{corruption.mount.rstrip('/')}/objects/"
    partition = corruption.path.removeprefix(prefix).split("/", 1)[0]
    if not (corruption.path.startswith(prefix) and partition.isdigit() and corruption.path
            == swift_object_dir(corruption.mount, int(partition), corruption.hash)):
        raise InvalidCorruption(f"names path {corruption.path!r}, not the object's directory "
                                f"under {prefix}")


def checked_mode(mode: str) -> str:
    if mode not in MODES:
        raise InvalidCorruption(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    return mode


def checked_timeout(timeout_s) -> float:
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) \
            or not 1 <= timeout_s <= 86_400:
        raise InvalidCorruption(f"timeout_s must be from 1 to 86400 seconds, not {timeout_s!r}")
    return float(timeout_s)


def choose_osd(acting: list[int], primary: int, osd_id: int, name: str) -> int:
    """The OSD whose copy is corrupted: `osd_id`, which must hold a copy, or (-1) the last of
    the acting set that is not its primary (clients read from the primary only, so a
    corrupted secondary is what a client must never see)."""
    if osd_id >= 0:
        if osd_id not in acting:
            raise InvalidCorruption(
                f"osd.{osd_id} holds no copy of {name} (acting set "
                f"{', '.join(f'osd.{o}' for o in acting)})")
        return osd_id
    secondaries = [o for o in acting if o != primary]
    if not secondaries:
        raise InvalidCorruption(f"{name} has no copy besides its primary osd.{primary}")
    return secondaries[-1]


def choose_node(primaries: list[str], node: str, name: str) -> str:
    """The node whose copy is corrupted: `node`, which must hold a primary copy, or ("") the
    last of the ring's primaries."""
    if node:
        if node not in primaries:
            raise InvalidCorruption(f"{node} holds no primary copy of {name} (its primaries: "
                                    f"{', '.join(primaries)})")
        return node
    if not primaries:
        raise InvalidCorruption(f"the ring places no copy of {name}")
    return primaries[-1]


def judge(what: str, copies: int, intact: int, corrupted_already: int,
          where: str) -> dict:
    """The guard's verdict on corrupting one more copy of an object that `where` (a pool, a
    ring) keeps `copies` times, `intact` of them on devices that are up now and
    `corrupted_already` of them corrupted by faults not restored yet. Refused (raises
    BlastRadiusExceeded) unless at least two good copies are left and they outnumber the
    corrupted ones, so a repair that compares copies keeps the good content."""
    after = corrupted_already + 1
    good = intact - after
    if copies < 3:
        reason = (f"{where} keeps {copies} cop{'y' if copies == 1 else 'ies'}: a repair needs "
                  "two good copies that outvote the corrupted one")
    elif good < 2 or good <= after:
        reason = (f"{after} of {copies} copies would be corrupted"
                  + (f" ({corrupted_already} already)" if corrupted_already else "")
                  + f" and {max(good, 0)} good left: a repair could keep the corrupted content")
    else:
        return {"allowed": True, "what": what,
                "reasoning": [f"{good} of {copies} copies stay good ({where}); a repair "
                              "finds the good content in the majority"],
                "message": f"allowed: {what}: {good} of {copies} copies stay good"}
    raise BlastRadiusExceeded(f"refused: {what}: {reason}")


_DATA_LINE = re.compile(r"^([0-9a-f]{32})\s+\S+\.data$")


def parse_replica_state(text: str) -> tuple[str | None, bool]:
    """(MD5 of the replica's .data file or None, whether it sits in quarantine) from the
    output of swift_replica_state_command."""
    data, _, quarantine = text.partition("--quarantine--")
    md5s = [m.group(1) for line in data.splitlines() if (m := _DATA_LINE.match(line.strip()))]
    return (md5s[-1] if md5s else None), bool(quarantine.strip())


def swift_object_dir(mount: str, partition: int, name_hash: str) -> str:
    return f"{mount.rstrip('/')}/objects/{partition}/{name_hash[-3:]}/{name_hash}"


def swift_quarantine_dir(mount: str, name_hash: str) -> str:
    return f"{mount.rstrip('/')}/quarantined/objects/{name_hash}"


def swift_replica_state_command(corruption: Corruption) -> str:
    """Shell text printing the MD5 of the replica's .data files, then the quarantined copies of
    the object on that device."""
    quarantine = shlex.quote(swift_quarantine_dir(corruption.mount, corruption.hash))
    return (f"cd {shlex.quote(corruption.path)} 2>/dev/null && md5sum -- *.data 2>/dev/null; "
            f"echo --quarantine--; ls -d {quarantine} {quarantine}-* 2>/dev/null; true")


def daemon_invocation(start: str | None, program: str) -> tuple[dict[str, str], list[str]]:
    """The environment (NAME=value words) and the arguments that follow `program` in a
    service's start command, e.g. the lab's `sh -c '... SWIFT_CONF_FILE=... setsid
    swift-object-auditor CONF -v ...'`: ({"SWIFT_CONF_FILE": ...}, ["CONF", "-v", ...])."""
    if not start:
        return {}, []
    words = shlex.split(start)
    if len(words) >= 3 and words[0] in ("sh", "bash", "/bin/sh") and words[1] == "-c":
        words = shlex.split(words[2])
    env: dict[str, str] = {}
    for i, word in enumerate(words):
        if word.split("/")[-1] == program:
            return env, _arguments(words[i + 1:])
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", word):
            name, _, value = word.partition("=")
            env[name] = value
    return {}, []


def _arguments(words: list[str]) -> list[str]:
    """The words up to the end of the command (a separator), without redirections."""
    out = []
    for word in words:
        if word in ("&", ";", "&&", "||", "|"):
            break
        if word.endswith(";"):
            out.append(word[:-1])
            break
        if not word.startswith(("<", ">", "2>", "&")):
            out.append(word)
    return out


def option_of(arguments: list[str], *names: str) -> str | None:
    """The value after the first of `names` in a daemon's arguments (e.g. ceph-osd's -c)."""
    for i, word in enumerate(arguments[:-1]):
        if word in names:
            return arguments[i + 1]
    return None
