"""A node out of memory: memory the node cannot give back, filled until the kernel's OOM
killer acts inside the node.

The hog is a file of `size_mib` on a tmpfs of exactly that size, written by `dd`. Pages of
a tmpfs file are charged to the memory cgroup of the process that wrote them, belong to no
process (no process's RSS holds them, so the OOM killer never picks the hog) and, with no
swap, cannot be reclaimed: when the node's cgroup is full, the kernel kills the node's
biggest processes (its daemons, oom_score_adj left as it is) until the rest fits, as in a
production node whose memory ran out. stress-ng's --vm workers were not used: each is
bigger than any daemon, so the kernel took them first, and lowering their oom_score_adj
needs CAP_SYS_RESOURCE, which the lab machine's root does not have.

Bounded three ways: the tmpfs's size is the ceiling the kernel enforces; a hog bigger than
the node's memory less RESERVE_MIB is refused, so its sshd and the hog's timer always fit
once the daemons are gone; a timer beside the file removes it after `timeout_s`.

Where it is charged:
- pid-file lab node (a network namespace on this machine): `lab up` gives the node a memory
  cgroup of its own (lab/memcg.py, the inventory's memory_cgroup) holding every daemon
  started over SSH (its sshd stays outside); the hog is written from a child cgroup of it,
  `faultline-memhog`, whose limit is the hog's size plus the timer's room.
- a lab node without one (lab-ceph-reef's containers): refused, its memory is the
  machine's.
- any other node, reached over SSH: the writer and its timer run in a transient systemd
  scope, `faultline-memhog-<node>.scope`, with MemoryMax= the same ceiling; the node's
  memory is its MemTotal, and the kernel's global OOM killer takes its biggest processes.

The restore (stop_command) kills the timer, removes the file, unmounts the tmpfs and
removes the child cgroup or scope; starting what the OOM killer took is the action's.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from clusters.access.inventory import Node
from clusters.access.node_commands import is_mounted
from clusters.exceptions import InvalidMemoryHog, RemoteCommandFailed

MEMORY = "/sys/fs/cgroup/memory"
LAB_ROOT = f"{MEMORY}/faultline-lab"  # lab/memcg.py: pid-file lab node K's: LAB_ROOT/<netns>
HOG_CGROUP = "faultline-memhog"
MOUNTS = "/run/faultline-memhog"
# left to the hog's writer (dd: 1-2 MiB) and the kernel's own use (2 MiB measured); below
# a fresh OSD's 21-27 MiB (Debian 12's Ceph 16.2, measured on a fresh lab), or a hog of
# all it allows would leave room for the node's only daemon and take nothing
RESERVE_MIB = 16
TIMER_MIB = 16  # what the writer and its timer may use beside the file
MAX_SIZE_MIB, MAX_TIMEOUT_S, MAX_WAIT_S = 1 << 20, 3600, 300


def node_cgroup(node: Node) -> str | None:
    """The pid-file lab node's memory cgroup (lab/memcg.py), None for a node reached over
    SSH; InvalidMemoryHog for a lab node without one, whose memory is the machine's."""
    if node.netns and not node.memory_cgroup:
        raise InvalidMemoryHog(f"{node.name} is a lab node with no memory cgroup of its own "
                               "(the inventory's memory_cgroup, which only the pid-file "
                               "labs have): a memory hog there would fill this machine")
    return node.memory_cgroup


@dataclass(frozen=True)
class MemoryHog:
    node: str
    key: str  # unique on the machine that runs it: the lab nodes of two labs share a host
    size_mib: int
    timeout_s: int
    cgroup: str | None  # the node's memory cgroup (lab), else None (a systemd scope)

    @property
    def mount(self) -> str:
        return mount_of(self.key)

    @property
    def ceiling_mib(self) -> int:
        return self.size_mib + TIMER_MIB

    def says(self) -> str:
        where = (f"in {self.node}'s memory cgroup" if self.cgroup
                 else f"in the systemd scope faultline-memhog-{self.key}")
        return (f"{self.size_mib} MiB that {self.node} cannot give back (a tmpfs file) "
                f"{where}, for at most {self.timeout_s} s")


def mount_of(key: str) -> str:
    return f"{MOUNTS}/{key}"


def key_of(node: Node) -> str:
    return node.netns or node.name


def _whole(name: str, value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidMemoryHog(f"{name} must be a whole number from {low} to {high}, "
                               f"not {value!r}")
    return value


def check(size_mib=0, timeout_s=120, wait_s=30) -> None:
    """The arguments alone (size 0: the node's memory less RESERVE_MIB)."""
    if size_mib != 0:
        _whole("size_mib", size_mib, 16, MAX_SIZE_MIB)
    _whole("timeout_s", timeout_s, 1, MAX_TIMEOUT_S)
    _whole("wait_s", wait_s, 0, MAX_WAIT_S)


def memory_hog(node: Node, node_memory_mib: int, size_mib=0, timeout_s=120) -> MemoryHog:
    """The hog asked for, sized against the node's memory; InvalidMemoryHog otherwise."""
    check(size_mib, timeout_s)
    most = node_memory_mib - RESERVE_MIB
    size = size_mib or most
    if size > most or size < 16:
        raise InvalidMemoryHog(
            f"a memory hog of {size} MiB does not fit {node.name}: it has {node_memory_mib} "
            f"MiB, of which {RESERVE_MIB} MiB stay for the hog's writer and the kernel (at "
            f"most {most} MiB)")
    return MemoryHog(node.name, key_of(node), size, timeout_s, node_cgroup(node))


def memory_command(node: Node) -> str:
    """Shell: the node's memory (bytes), what is in use, and how often the OOM killer acted
    there: `<limit> <usage> <oom_kills>`."""
    cg = node_cgroup(node)
    if cg is None:
        return ("awk '/^MemTotal:/ {t = $2 * 1024} /^MemAvailable:/ {a = $2 * 1024} "
                "END {printf \"%d %d \", t, t - a}' /proc/meminfo && "
                "awk '$1 == \"oom_kill\" {print $2}' /proc/vmstat")
    q = shlex.quote(cg)
    return (f"[ -d {q} ] || {{ echo {_no_cgroup(cg)} >&2; exit 3; }}; "
            f"echo $(cat {q}/memory.limit_in_bytes) $(cat {q}/memory.usage_in_bytes) "
            f"$(awk '$1 == \"oom_kill\" {{print $2}}' {q}/memory.oom_control)")


def _no_cgroup(cg: str) -> str:
    return shlex.quote(f"no memory cgroup at {cg} for this node (faultline lab up makes it)")


def parse_memory(text: str) -> tuple[int, int, int]:
    """`<limit> <usage> <oom_kills>` -> (memory MiB, used MiB, OOM kills so far)."""
    try:
        limit, usage, kills = (int(v) for v in text.split())
    except ValueError:
        raise RemoteCommandFailed(f"the node's memory reads {text.strip()!r}, not "
                                  "'<limit> <usage> <oom kills>'") from None
    return limit >> 20, usage >> 20, kills



def timer_of(key: str) -> str:
    """The lab hog's timer's pid file (a session leader: its PID is its process group)."""
    return f"{MOUNTS}/{key}.timer"


def _timer(hog: MemoryHog, writer: str) -> str:
    """Run the writer, keep the file for the timeout, then take it away."""
    m = shlex.quote(hog.mount)
    return (f"{writer}; sleep {hog.timeout_s}; rm -f {m}/hog; umount {m} && rmdir {m}; "
            f"rm -f {shlex.quote(timer_of(hog.key))}")


def _dd(hog: MemoryHog) -> str:
    return (f"dd if=/dev/zero of={shlex.quote(hog.mount)}/hog bs=1M count={hog.size_mib} "
            "status=none")


def start_command(hog: MemoryHog) -> str:
    """Shell: mount the hog's tmpfs, then write the file from the hog's cgroup or scope,
    detached from the SSH session; exits 3 with a message if the node cannot."""
    m = shlex.quote(hog.mount)
    mount = (f"mkdir -p {m} && {{ {is_mounted(hog.mount)} || mount -t tmpfs "
             f"-o size={hog.size_mib}m,mode=0700 faultline-memhog {m}; }} || exit 3; ")
    if hog.cgroup is None:
        unit = shlex.quote(f"faultline-memhog-{hog.key}")
        scope = shlex.quote(f"faultline-memhog-{hog.key}.scope")
        return (
            "command -v systemd-run >/dev/null || { echo 'systemd-run is not on the node: "
            "the memory hog needs a transient scope with a MemoryMax' >&2; exit 3; }; "
            + mount +
            f"setsid systemd-run --scope --quiet --unit={unit} -p MemoryMax={hog.ceiling_mib}M "
            f"-p MemorySwapMax=0 sh -c {shlex.quote(_timer(hog, _dd(hog)))} "
            "</dev/null >/dev/null 2>&1 & "
            f"for i in $(seq 50); do systemctl is-active --quiet {scope} && break; "
            f"sleep 0.1; done; systemctl is-active --quiet {scope} || "
            "{ echo 'the memory hog did not start' >&2; exit 3; }")
    cg = shlex.quote(f"{hog.cgroup}/{HOG_CGROUP}")
    # only the writer is charged to the node; its timer stays outside, where the OOM
    # killer of the node cannot take it (nor the node's sshd)
    writer = f"sh -c {shlex.quote(f'echo $$ > {cg}/cgroup.procs && exec {_dd(hog)}')}"
    return (
        f"[ -d {shlex.quote(hog.cgroup)} ] || {{ echo {_no_cgroup(hog.cgroup)} >&2; exit 3; "
        "}; "
        f"mkdir -p {cg} && echo {hog.ceiling_mib << 20} > {cg}/memory.limit_in_bytes "
        "|| exit 3; " + mount +
        f"setsid sh -c {shlex.quote(_timer(hog, writer))} </dev/null >/dev/null 2>&1 & "
        f"echo $! > {shlex.quote(timer_of(hog.key))}; "
        f"for i in $(seq 50); do [ -e {m}/hog ] && break; sleep 0.1; done; "
        f"[ -e {m}/hog ] || {{ echo 'the memory hog did not start' >&2; exit 3; }}")


def stop_command(node: Node) -> str:
    """Shell: end the hog (idempotent): its timer killed, the file removed, the tmpfs
    unmounted, its cgroup or scope gone."""
    key = key_of(node)
    m = shlex.quote(mount_of(key))
    cg = node_cgroup(node)
    if cg is None:
        end = f"systemctl stop {shlex.quote(f'faultline-memhog-{key}.scope')} 2>/dev/null; "
        gone = ""
    else:
        t = shlex.quote(timer_of(key))
        hog = shlex.quote(f"{cg}/{HOG_CGROUP}")
        end = (f"p=$(cat {t} 2>/dev/null); if [ -n \"$p\" ] && tr '\\0' ' ' "
               f"</proc/$p/cmdline 2>/dev/null | grep -q faultline-memhog; then "
               f"kill -9 -- -$p 2>/dev/null; fi; rm -f {t}; "
               f"if [ -d {hog} ]; then for i in $(seq 10); do p=$(cat {hog}/cgroup.procs); "
               f"[ -z \"$p\" ] && break; kill -9 $p 2>/dev/null; sleep 0.2; done; fi; ")
        gone = f"; if [ -d {hog} ]; then rmdir {hog} || exit 3; fi"
    return (end + f"rm -f {m}/hog; if {is_mounted(mount_of(key))}; "
            f"then umount {m} || exit 3; fi; if [ -d {m} ]; then rmdir {m}; fi; "
            f"rmdir {MOUNTS} 2>/dev/null || true" + gone)


def daemons_command(pid_files: dict[str, str]) -> str:
    """Shell: `<name> <pid>` for each daemon whose pid file names a live (not zombie)
    process; a daemon that is not running is left out."""
    lines = [f"p=$(cat {shlex.quote(path)} 2>/dev/null) && [ -n \"$p\" ] && [ -d /proc/$p ] "
             f"&& ! grep -q '^State:.*Z' /proc/$p/status && echo {shlex.quote(name)} $p"
             for name, path in pid_files.items()]
    return "; ".join(lines) + "; true"


def parse_daemons(text: str) -> dict[str, int]:
    return {name: int(pid) for name, pid in
            (line.split() for line in text.splitlines() if len(line.split()) == 2)
            if pid.isdigit()}


def to_start(names: list[str], before: dict[str, int], running: dict[str, int]) -> list[str]:
    """Of the node's daemons `names`, those the restore starts: the ones running at the
    injection (`before`) that are not now; without a record, every one not running. A
    daemon down already at the injection (another fault's) is left to that fault."""
    return [name for name in names if name not in running and (not before or name in before)]


def taken(before: dict[str, int], now: dict[str, int]) -> list[str]:
    """The daemons that were running and are not (or run under another PID: restarted)."""
    return sorted(name for name, pid in before.items() if now.get(name) != pid)
