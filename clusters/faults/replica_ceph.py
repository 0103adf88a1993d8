"""Corrupt one OSD's copy of a Ceph object, and watch Ceph find and mend it.

- The object: a canary written with librados into the inventory's pool, or a named object of
  that pool (read first: its content is what the copies must hold).
- Where it lives: `osd map` gives its PG and the acting set; the chosen OSD's data path is
  the mount of its disk in the inventory.
- The flip: the OSD is stopped (with its own noout flag, so it is not marked out meanwhile),
  `ceph-objectstore-tool --data-path <osd dir> --pgid <pg> <object> get-bytes` reads its
  copy (checked against the good MD5), 16 bytes are inverted, `set-bytes` writes it back
  and `get-bytes` again proves it landed; then the OSD is started and the PG waited for.
  BlueStore's own checksums are rewritten with the data, so only a scrub can tell: a deep
  scrub compares the copies' digests.
- Detection: the PG is `inconsistent` (and `rados list-inconsistent-obj` names the object and
  the OSD). Triggered: `ceph pg deep-scrub <pg>`; else left to the OSDs' scrub schedule
  (osd_deep_scrub_interval, a week by default).
- Repair: `ceph pg repair <pg>`, then active+clean and not inconsistent; a deep scrub after
  it confirms the copies agree.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from typing import Any

import rados

from clusters.access import services
from clusters.access.inventory import Cluster
from clusters.ceph.admin import CephAdmin, is_clean
from clusters.exceptions import (
    AdminCommandFailed,
    ClusterError,
    InvalidCorruption,
    RemoteCommandFailed,
)
from clusters.faults.corruption import (
    CANARY_PREFIX,
    CANARY_SIZE,
    Corruption,
    canary_content,
    choose_osd,
    daemon_invocation,
    flip_offset,
    flipped,
    md5_of,
    option_of,
    write_bytes_command,
)
from clusters.polling import poll_until

TOOL = "ceph-objectstore-tool"
OSD_BACK_TIMEOUT_S = 180.0
# a scrub or repair asked for and not begun after this long is asked for again (a PG that
# re-peers forgets the request)
REASK_S = 20.0


def _pg_command(admin: CephAdmin, prefix: str, pgid: str) -> None:
    """`ceph pg deep-scrub|repair <pgid>`: a mgr command since Nautilus, a mon one before."""
    try:
        admin.mgr_command(prefix, pgid=pgid)
    except AdminCommandFailed:
        admin.command(prefix, pgid=pgid)


def pg_stat(admin: CephAdmin, pgid: str) -> dict[str, Any]:
    """The PG's entry of `pg dump pgs` (state, last_deep_scrub_stamp, ...)."""
    dump = admin.mgr_command("pg dump", dumpcontents=["pgs"])
    stats = dump.get("pg_stats", []) if isinstance(dump, dict) else dump or []
    for stat in stats:
        if stat.get("pgid") == pgid:
            return stat
    raise AdminCommandFailed(f"pg dump has no PG {pgid}")


def parse_inconsistent(raw: dict[str, Any], name: str) -> list[str]:
    """From `rados list-inconsistent-obj` JSON: "osd.N: error, ..." for each copy of the
    object with errors (the object's own errors when no copy has any)."""
    found = []
    for item in raw.get("inconsistents") or []:
        if (item.get("object") or {}).get("name") != name:
            continue
        for shard in item.get("shards") or []:
            if shard.get("errors"):
                found.append(f"osd.{shard.get('osd')}: {', '.join(shard['errors'])}")
        if not found:
            found.append(", ".join(item.get("errors") or []) or "listed as inconsistent")
    return found


def list_inconsistent(cluster: Cluster, pgid: str, name: str) -> list[str]:
    """What `rados list-inconsistent-obj <pgid>` says of the object (empty: nothing)."""
    argv = ["rados", "-c", cluster.client["conf"], "list-inconsistent-obj", pgid,
            "--format=json"]
    if cluster.client.get("keyring"):
        argv += ["--keyring", cluster.client["keyring"]]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        return parse_inconsistent(json.loads(done.stdout or "{}"), name)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return []


def _ioctx(admin: CephAdmin, cluster: Cluster) -> rados.Ioctx:
    return admin.rados.open_ioctx(cluster.client["pool"])


def _missing(cluster: Cluster, name: str) -> InvalidCorruption:
    return InvalidCorruption(f"object {name} does not exist in pool {cluster.client['pool']} "
                             f"of {cluster.name}")


def check_exists(cluster: Cluster, name: str) -> None:
    """InvalidCorruption unless the pool has an object of that name (a stat, nothing read)."""
    with CephAdmin.for_cluster(cluster, timeout=30) as admin:
        ioctx = _ioctx(admin, cluster)
        try:
            ioctx.stat(name)
        except rados.ObjectNotFound:
            raise _missing(cluster, name) from None
        finally:
            ioctx.close()


def plan(cluster: Cluster, osd_id: int = -1, obj: str = "",
         size: int = CANARY_SIZE) -> tuple[Corruption, bytes, int]:
    """Read the named object (or make the canary's content), map it to its PG and acting
    set and choose the OSD; nothing is written yet. Returns the corruption to make, the good
    content and the number of copies in the acting set now."""
    pool = cluster.client["pool"]
    with CephAdmin.for_cluster(cluster, timeout=30) as admin:
        if obj:
            ioctx = _ioctx(admin, cluster)
            try:
                length, _ = ioctx.stat(obj)
                content = ioctx.read(obj, length)
            except rados.ObjectNotFound:
                raise _missing(cluster, obj) from None
            except rados.Error as exc:
                raise ClusterError(f"reading {obj} failed: {exc}") from None
            finally:
                ioctx.close()
            name, owned = obj, False
        else:
            name, owned = f"{CANARY_PREFIX}{time.time_ns():x}", True
            content = canary_content(name, size)
        offset = flip_offset(len(content))
        mapped = admin.command("osd map", pool=pool, object=name)
        copies = int(admin.command("osd pool get", pool=pool, var="size")["size"])
    acting = [int(o) for o in mapped["acting"] if int(o) != 2147483647]
    osd = choose_osd(acting, int(mapped["acting_primary"]), osd_id, name)
    data_path = next((d.mount for d in cluster.disks if d.osd == osd and d.mount),
                     f"/var/lib/ceph/osd/ceph-{osd}")
    service = cluster.service(f"osd.{osd}")
    corruption = Corruption(
        system="ceph", object=name, owned=owned, size=len(content), md5=md5_of(content),
        bad_md5=md5_of(flipped(content, offset)), offset=offset,
        good=content[offset:offset + 16].hex(), replica=f"osd.{osd}", copies=copies,
        pool=pool, pgid=mapped["pgid"], holders=[f"osd.{o}" for o in acting],
        node=service.node or "", path=data_path)
    return corruption, content, len(acting)


def write_canary(cluster: Cluster, corruption: Corruption, content: bytes) -> None:
    if not corruption.owned:
        return
    with CephAdmin.for_cluster(cluster, timeout=30) as admin:
        ioctx = _ioctx(admin, cluster)
        try:
            ioctx.write_full(corruption.object, content)
        except rados.Error as exc:
            raise ClusterError(f"writing the canary {corruption.object} failed: {exc}") from None
        finally:
            ioctx.close()


def _scratch(corruption: Corruption) -> str:
    return f"/tmp/faultline-corrupt-{corruption.object}-{corruption.replica}"


def tool_script(corruption: Corruption, conf: str | None) -> str:
    """Shell text run on the OSD's node while it is stopped: read the copy, check it, flip
    16 bytes, write it back, read it again and print its MD5."""
    # the tool takes no -c: its configuration file comes from CEPH_CONF
    tool = (f"{'CEPH_CONF=' + shlex.quote(conf) + ' ' if conf else ''}{TOOL} --no-mon-config "
            f"--data-path {shlex.quote(corruption.path)} --pgid {shlex.quote(corruption.pgid)} "
            f"{shlex.quote(corruption.object)}")
    scratch = shlex.quote(_scratch(corruption))
    flip = bytes(b ^ 0xFF for b in bytes.fromhex(corruption.good))
    return (f"set -e; t={scratch}; trap 'rm -f \"$t\" \"$t\".check' EXIT; "
            f"{tool} get-bytes \"$t\"; "
            f"[ \"$(md5sum < \"$t\" | cut -c1-32)\" = {shlex.quote(corruption.md5)} ] || "
            f"{{ echo {shlex.quote(f'{corruption.replica} copy does not hold the content')} "
            ">&2; exit 4; }; "
            + write_bytes_command('"$t"', corruption.offset, flip) + "; "
            f"{tool} set-bytes \"$t\"; {tool} get-bytes \"$t\".check; "
            "md5sum < \"$t\".check | cut -c1-32")


def _wait(what: str, check, timeout_s: float, every_s: float = 0.5, polls: int = 1) -> float:
    """Poll until check() held on `polls` polls in a row; ClusterError after timeout_s."""
    started = time.monotonic()
    held = 0

    def held_enough() -> bool:
        nonlocal held
        held = held + 1 if check() else 0
        return held >= polls
    poll_until(what, held_enough, timeout_s, every_s, error=ClusterError)
    return round(time.monotonic() - started, 1)


def _noout(admin: CephAdmin, corruption: Corruption, on: bool) -> None:
    admin.command("osd set-group" if on else "osd unset-group", flags="noout",
                  who=[corruption.replica])


def _start_osd(cluster: Cluster, admin: CephAdmin, corruption: Corruption) -> float:
    """Start the OSD if it is stopped; wait until it is up and its PG active+clean."""
    started = time.monotonic()
    service = cluster.service(corruption.replica)
    services.start(cluster, service)
    _wait(f"{corruption.replica} up", lambda: admin.osd_up(corruption.osd), OSD_BACK_TIMEOUT_S)
    # a booted OSD's PGs look clean for a moment before peering starts: three polls in a row
    _wait(f"PG {corruption.pgid} active+clean",
          lambda: is_clean(pg_stat(admin, corruption.pgid)["state"]), OSD_BACK_TIMEOUT_S,
          every_s=1.0, polls=3)
    return round(time.monotonic() - started, 1)


def inject(cluster: Cluster, corruption: Corruption) -> dict[str, Any]:
    """Stop the OSD, flip the bytes of its copy with ceph-objectstore-tool, start it again
    and wait for its PG; the OSD is started again whatever failed. Returns the steps' times."""
    service = cluster.service(corruption.replica)
    _, arguments = daemon_invocation(service.start, "ceph-osd")
    conf = option_of(arguments, "-c", "--conf")
    times: dict[str, Any] = {}
    with CephAdmin.for_cluster(cluster, timeout=30) as admin:
        _noout(admin, corruption, True)
        try:
            if services.pid_of(cluster, service) is not None:
                services.kill(cluster, service, "TERM")
            times["osd_stopped_s"] = _wait(f"{corruption.replica} to stop",
                                           lambda: services.pid_of(cluster, service) is None, 60)
            began = time.monotonic()
            out = services.run(cluster, service, tool_script(corruption, conf),
                               timeout=300).stdout.split()
            times["tool_s"] = round(time.monotonic() - began, 1)
            if not out or out[-1] != corruption.bad_md5:
                raise RemoteCommandFailed(f"the flip in {corruption.replica}'s copy did not "
                                          f"land (MD5 {out[-1] if out else 'none'})")
        finally:
            times["osd_back_s"] = _start_osd(cluster, admin, corruption)
            _noout(admin, corruption, False)
    return times


class CephReplica:
    """The watch's view of one corrupted Ceph copy (see actions/corrupt.py)."""

    detector = "a deep scrub"

    def __init__(self, cluster: Cluster, corruption: Corruption):
        self.cluster, self.corruption = cluster, corruption
        self.admin = CephAdmin.for_cluster(cluster, timeout=30)
        self.admin.connect()
        self.ioctx = _ioctx(self.admin, cluster)
        self.asked: tuple[str, float, str | None] | None = None  # prefix, when, stamp then
        self.reasked = 0

    def close(self) -> None:
        self.ioctx.close()
        self.admin.close()

    def _ask(self, prefix: str, stat: dict[str, Any] | None = None) -> None:
        stat = stat or pg_stat(self.admin, self.corruption.pgid)
        _pg_command(self.admin, prefix, self.corruption.pgid)
        self.asked = (prefix, time.monotonic(), stat.get("last_deep_scrub_stamp"))

    def _ask_again_if_ignored(self, stat: dict[str, Any]) -> None:
        """Ask again for the scrub or repair asked for if it has not begun (nor ended)."""
        if self.asked is None:
            return
        prefix, when, stamp = self.asked
        if ("scrubbing" not in stat["state"] and stat.get("last_deep_scrub_stamp") == stamp
                and time.monotonic() - when > REASK_S):
            self._ask(prefix, stat)
            self.reasked += 1

    def read(self) -> tuple[bytes | None, bool]:
        """The object through librados (from the PG's primary); Ceph returns no digest to
        check it against, so nothing gives a corruption away but the content."""
        try:
            return self.ioctx.read(self.corruption.object, self.corruption.size + 1), False
        except rados.Error:
            return None, False

    def _state(self) -> str:
        return pg_stat(self.admin, self.corruption.pgid)["state"]

    def start_detection(self) -> str:
        self._ask("pg deep-scrub")
        return f"ceph pg deep-scrub {self.corruption.pgid}"

    def detected(self) -> str | None:
        stat = pg_stat(self.admin, self.corruption.pgid)
        if "inconsistent" not in stat["state"]:
            self._ask_again_if_ignored(stat)
            return None
        listed = list_inconsistent(self.cluster, self.corruption.pgid, self.corruption.object)
        return (f"a deep scrub of PG {self.corruption.pgid} (inconsistent"
                + (f"; list-inconsistent-obj: {'; '.join(listed)}" if listed else "") + ")")

    def detected_by(self, seen: str) -> str:
        return seen

    def start_repair(self) -> str | None:
        self._ask("pg repair")
        return f"ceph pg repair {self.corruption.pgid}"

    def repaired(self) -> bool:
        stat = pg_stat(self.admin, self.corruption.pgid)
        flags = set(stat["state"].split("+"))
        if "inconsistent" in flags:
            self._ask_again_if_ignored(stat)
        return is_clean(stat["state"]) and not {"inconsistent", "repair", "scrubbing"} & flags

    def repaired_by(self) -> str:
        return f"pg repair (PG {self.corruption.pgid} active+clean, not inconsistent)"

    def confirm(self, timeout_s: float) -> str:
        """A deep scrub after the repair, waited for: the copies agree again."""
        before = pg_stat(self.admin, self.corruption.pgid).get("last_deep_scrub_stamp")
        _pg_command(self.admin, "pg deep-scrub", self.corruption.pgid)
        try:
            took = _wait(f"a deep scrub of PG {self.corruption.pgid}", lambda: (
                (stat := pg_stat(self.admin, self.corruption.pgid)).get(
                    "last_deep_scrub_stamp") != before and "scrubbing" not in stat["state"]),
                timeout_s)
        except ClusterError as exc:
            return f"not confirmed: {exc}"
        state = self._state()
        if "inconsistent" in state:
            return f"a deep scrub after the repair still found PG {self.corruption.pgid} {state}"
        return f"a deep scrub after the repair found PG {self.corruption.pgid} clean ({took} s)"


def restore(cluster: Cluster, corruption: Corruption) -> dict:
    """Undo the corruption (idempotent): the OSD running again and its noout flag off; an
    inconsistent PG repaired (a named object's PG deep-scrubbed first, as its copy may be
    corrupted unseen); a canary deleted; the scratch files on the node removed."""
    done: list[str] = []
    with CephAdmin.for_cluster(cluster, timeout=30) as admin:
        service = cluster.service(corruption.replica)
        if services.pid_of(cluster, service) is None:
            _start_osd(cluster, admin, corruption)
            done.append(f"{corruption.replica} started")
        _noout(admin, corruption, False)
        if not corruption.owned and "inconsistent" not in pg_stat(admin, corruption.pgid)["state"]:
            before = pg_stat(admin, corruption.pgid).get("last_deep_scrub_stamp")
            _pg_command(admin, "pg deep-scrub", corruption.pgid)
            _wait(f"a deep scrub of PG {corruption.pgid}", lambda: (
                (stat := pg_stat(admin, corruption.pgid)).get("last_deep_scrub_stamp")
                != before and "scrubbing" not in stat["state"]), OSD_BACK_TIMEOUT_S)
        if "inconsistent" in pg_stat(admin, corruption.pgid)["state"]:
            _pg_command(admin, "pg repair", corruption.pgid)
            _wait(f"PG {corruption.pgid} repaired", lambda: not {"inconsistent", "repair"} & set(
                pg_stat(admin, corruption.pgid)["state"].split("+")), OSD_BACK_TIMEOUT_S)
            done.append(f"PG {corruption.pgid} repaired")
        if corruption.owned:
            ioctx = _ioctx(admin, cluster)
            try:
                ioctx.remove_object(corruption.object)
                done.append(f"canary {corruption.object} deleted")
            except rados.ObjectNotFound:
                pass
            finally:
                ioctx.close()
    scratch = shlex.quote(_scratch(corruption))
    services.run(cluster, service, f"rm -f {scratch} {scratch}.check", timeout=60)
    return {"object": corruption.object, "replica": corruption.replica, "done": done}
