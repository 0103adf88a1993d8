"""Lab nodes that boot systemd: `systemd-nspawn -b` containers over one shared root.

Each node is one container of its own:
- its root is an overlay mount (`lowerdir=` the shared read-only root of lab/rootfs.py,
  `upperdir=`/`workdir=` in the node's directory), mounted at <node dir>/root;
- its nspawn process is put in a cgroup of its own before it executes nspawn (in the
  `systemd` and `unified` hierarchies), else the containers would share one payload cgroup;
- its network is the lab's namespace for it (lab/netns.py: `--network-namespace-path`);
- `--keep-unit --register=no`: the host's PID 1 is not systemd, there is no machined;
- `SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1`: the guest gets a pure cgroup2 tree and boots in
  about half a second of userspace.

The PID we start is the nspawn process's; it is kept in a pid file and is the only thing
ever signalled (SIGTERM, which makes the guest's systemd shut down in 2-3 s; SIGKILL only
if it is stuck). The guest's init (PID 1 inside) is found as nspawn's descendant whose
innermost PID is 1; commands run in the node with `nsenter -t <init> -a`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import disks, procs
from .exceptions import NodeError
from .netns import NETNS_DIR

NSPAWN = "systemd-nspawn"
CGROUP_ROOTS = (Path("/sys/fs/cgroup/systemd"), Path("/sys/fs/cgroup/unified"))
BOOT_TIMEOUT = 60.0
STOP_TIMEOUT = 20.0



@dataclass(frozen=True)
class Bind:
    """A host path bound into the node (`--bind` / `--bind-ro`)."""

    source: Path
    target: str
    read_only: bool = False

    def option(self) -> str:
        return f"--bind{'-ro' if self.read_only else ''}={self.source}:{self.target}"


@dataclass(frozen=True)
class NodeContainer:
    """One node: where its overlay lives, its namespace, its cgroup and its pid file."""

    name: str  # host name inside, e.g. node1
    directory: Path  # <lab home>/nodes/<name>
    netns: str
    run_dir: Path
    log_dir: Path

    @property
    def machine(self) -> str:
        """Its machine name (and cgroup name): unique on the host, like its namespace."""
        return self.netns

    @property
    def upper(self) -> Path:
        return self.directory / "upper"

    @property
    def work(self) -> Path:
        return self.directory / "work"

    @property
    def root(self) -> Path:
        return self.directory / "root"

    @property
    def pid_file(self) -> Path:
        return self.run_dir / f"nspawn.{self.name}.pid"

    @property
    def log_file(self) -> Path:
        return self.log_dir / f"nspawn.{self.name}.log"

    def cgroups(self) -> list[Path]:
        return [root / self.machine for root in CGROUP_ROOTS]


# -- overlay -------------------------------------------------------------------------


def mount_root(node: NodeContainer, lower: Path) -> None:
    """Mount the node's overlay root (no-op if mounted)."""
    if disks.is_mounted(node.root):
        return
    for directory in (node.upper, node.work, node.root):
        directory.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "overlay", "overlay", "-o",
         f"lowerdir={lower},upperdir={node.upper},workdir={node.work}", str(node.root)],
        capture_output=True, text=True)
    if done.returncode != 0:
        raise NodeError(f"cannot mount the overlay root of {node.name}: {done.stderr.strip()}")


def unmount_root(node: NodeContainer) -> None:
    disks.unmount(node.root)


# -- cgroups -------------------------------------------------------------------------


def _join_cgroups(paths: list[Path]) -> None:
    """preexec_fn: move this (child) process into its own cgroups before it runs nspawn."""
    for path in paths:
        (path / "cgroup.procs").write_text(str(os.getpid()))


def _make_cgroups(node: NodeContainer) -> list[Path]:
    made = []
    for path in node.cgroups():
        if path.parent.is_dir():
            path.mkdir(exist_ok=True)
            made.append(path)
    return made


def remove_cgroups(node: NodeContainer) -> list[str]:
    """Remove the node's cgroups, deepest first (the guest leaves its own tree in them);
    returns those that could not be removed (still holding processes)."""
    left = []
    for path in node.cgroups():
        if not path.is_dir():
            continue
        for directory in sorted((p for p in path.rglob("*") if p.is_dir()),
                                key=lambda p: len(p.parts), reverse=True) + [path]:
            try:
                directory.rmdir()
            except OSError:
                left.append(str(directory))
    return left


def leftover_cgroups(node: NodeContainer) -> list[str]:
    return [str(p) for p in node.cgroups() if p.is_dir()]


# -- boot / stop ---------------------------------------------------------------------


def argv(node: NodeContainer, binds: list[Bind]) -> list[str]:
    return [NSPAWN, "-b", "-D", str(node.root), f"--machine={node.machine}",
            f"--hostname={node.name}", "--register=no", "--keep-unit",
            f"--network-namespace-path={NETNS_DIR / node.netns}", "--console=pipe",
            "--resolv-conf=off", "--timezone=off", "--link-journal=no",
            *(b.option() for b in binds)]


def nspawn_pid(node: NodeContainer) -> int | None:
    return procs.alive_pid(node.pid_file, "systemd-nspawn")


def boot(node: NodeContainer, binds: list[Bind]) -> int:
    """Start the node's container (no-op if its nspawn runs); returns the nspawn PID."""
    pid = nspawn_pid(node)
    if pid is not None:
        return pid
    node.pid_file.unlink(missing_ok=True)
    for directory in (node.run_dir, node.log_dir):
        directory.mkdir(parents=True, exist_ok=True)
    cgroups = _make_cgroups(node)
    env = {**os.environ, "SYSTEMD_NSPAWN_UNIFIED_HIERARCHY": "1"}
    with open(node.log_file, "ab") as out:
        process = subprocess.Popen(argv(node, binds), stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=out, env=env, start_new_session=True,
                                   preexec_fn=lambda: _join_cgroups(cgroups))
    node.pid_file.write_text(f"{process.pid}\n")
    return process.pid


def _children(pid: int) -> list[int]:
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return []
    for task in tasks:
        try:
            found += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except FileNotFoundError:
            continue
    return found


def _innermost_pid(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    except FileNotFoundError:
        return None
    return None


def init_pid(node: NodeContainer) -> int | None:
    """The host PID of the guest's init (PID 1 in the container), or None if not booted."""
    pid = nspawn_pid(node)
    todo = _children(pid) if pid else []
    while todo:
        child = todo.pop(0)
        if _innermost_pid(child) == 1 and child != 1:
            return child
        todo += _children(child)
    return None


def nsenter_argv(init: int) -> list[str]:
    """Prefix that runs a command inside a node: all of its namespaces, its root."""
    return ["nsenter", "-t", str(init), "-a", "--"]


def run(node: NodeContainer, command: list[str], timeout: float = 120.0,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command inside the node (as root, in all its namespaces)."""
    init = init_pid(node)
    if init is None:
        raise NodeError(f"node {node.name} is not running")
    done = subprocess.run([*nsenter_argv(init), *command], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)
    if check and done.returncode != 0:
        raise NodeError(f"`{' '.join(command)}` on {node.name} exited {done.returncode}: "
                        f"{(done.stderr or done.stdout).strip()[-500:]}")
    return done


def wait_booted(node: NodeContainer, timeout: float = BOOT_TIMEOUT) -> str:
    """Wait until the guest's systemd finished its start-up ("running" or "degraded"): its
    init is looked for in /proc, then one `systemctl is-system-running --wait` blocks until
    the boot is over (polling systemctl ten times a second in every node took CPU from the
    boots themselves)."""
    deadline = time.monotonic() + timeout
    seen = "no init yet"
    while time.monotonic() < deadline:
        if nspawn_pid(node) is None:
            raise NodeError(f"node {node.name}'s nspawn exited while booting "
                            f"(see {node.log_file})")
        init = init_pid(node)
        if init is None:
            time.sleep(0.1)
            continue
        try:
            done = subprocess.run([*nsenter_argv(init), "systemctl", "is-system-running",
                                   "--wait"], capture_output=True, text=True,
                                  stdin=subprocess.DEVNULL,
                                  timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            break
        seen = done.stdout.strip() or done.stderr.strip()
        if seen in ("running", "degraded"):
            return seen
        time.sleep(0.1)  # its bus not up yet, or the system still initialising
    raise NodeError(f"waited {timeout:.0f} s for node {node.name} to boot; its systemd "
                    f"said {seen!r} (see {node.log_file})")


def stop(node: NodeContainer, timeout: float = STOP_TIMEOUT) -> str:
    """SIGTERM the node's nspawn (the guest shuts down), SIGKILL it if still there after
    `timeout`; then free its cgroups and unmount its root. Returns what happened."""
    pid = nspawn_pid(node)
    outcome = "not running"
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        outcome = "stopped"
        end = time.monotonic() + timeout
        while procs.is_alive(pid):
            if time.monotonic() > end:
                if outcome == "killed":
                    outcome = "stuck"
                    break
                os.kill(pid, signal.SIGKILL)
                outcome, end = "killed", time.monotonic() + 5.0
            time.sleep(0.05)
        procs.reap(pid)
    node.pid_file.unlink(missing_ok=True)
    remove_cgroups(node)
    unmount_root(node)
    return outcome


def power_cut(node: NodeContainer) -> str:
    """Kill the whole guest at once, as a power cut does (no shutdown: its daemons say
    goodbye to no one): SIGKILL its init, which takes every process of its PID namespace
    with it; then `stop` frees what nspawn held. Returns what `stop` found."""
    init = init_pid(node)
    if init is not None:
        try:
            os.kill(init, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return stop(node)
