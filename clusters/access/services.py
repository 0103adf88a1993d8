"""Signal, start and inspect a cluster's daemons wherever they run.

A service runs on a node (reached over SSH) or, with no node, on this machine.
It is managed by a pid file (lab, hand-started daemons) or a systemd unit.
"""

from __future__ import annotations

import shlex
import subprocess
import time

from clusters.access.inventory import Cluster, Service
from clusters.access.ssh import CommandResult, run_on_node
from clusters.exceptions import RemoteCommandFailed

# The binary each kind of daemon runs, unless the inventory names another (`program`).
SIGNALS = ("KILL", "STOP", "CONT", "TERM")  # what faults send; the name goes into shell text
PROGRAMS = {"osd": "ceph-osd", "mon": "ceph-mon", "mgr": "ceph-mgr", "rgw": "radosgw"}


def run(cluster: Cluster, service: Service, command: str, timeout: float = 60.0,
        check: bool = True) -> CommandResult:
    """Run a shell command where the service lives."""
    if service.node is not None:
        return run_on_node(cluster.node(service.node), command, timeout=timeout, check=check)
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=timeout)
    result = CommandResult(done.returncode, done.stdout, done.stderr)
    if check and done.returncode != 0:
        raise RemoteCommandFailed(
            f"`{command}` exited {done.returncode}: {done.stderr.strip()}")
    return result


def pid_of(cluster: Cluster, service: Service) -> int | None:
    """The PID of the running service, or None if it is not running."""
    if service.unit:
        unit = shlex.quote(service.unit)
        out = run(cluster, service, f"systemctl show -p MainPID --value {unit}",
                  check=False).stdout.strip()
        return int(out) if out.isdigit() and int(out) > 0 else None
    # A zombie, a stale pid file, or a PID reused by another program counts as not running:
    # SIGKILL leaves the pid file behind, and its PID may belong to anything later.
    program = service.program or PROGRAMS.get(service.kind)
    # the executable, or for a script (Swift's servers) the script its interpreter runs
    same_program = (
        f" && e=$(readlink /proc/$p/exe) && s=$(tr '\\0' '\\n' </proc/$p/cmdline | sed -n 2p)"
        f" && case \"${{e% (deleted)}}\" in */{shlex.quote(program)}) true;;"
        f" */python3*) [ \"${{s##*/}}\" = {shlex.quote(program)} ];; *) false;; esac"
        if program else "")
    script = (f"p=$(cat {shlex.quote(service.pid_file or '')} 2>/dev/null) && "
              f"[ -n \"$p\" ] && [ -d /proc/$p ] && ! grep -q '^State:.*Z' /proc/$p/status"
              f"{same_program} && echo $p")
    out = run(cluster, service, script, check=False).stdout.strip()
    return int(out) if out.isdigit() else None


def kill(cluster: Cluster, service: Service, signal: str = "KILL", group: bool = False) -> int:
    """Send a signal to the service's main process by PID; return that PID.

    With `group`, and when the process leads its own process group (a daemon started in a
    session of its own), the whole group gets it: the children it forked (Swift's auditors
    fork one per audit) die with it, as on a machine that loses power, instead of living on
    as orphans.
    """
    if signal not in SIGNALS:
        raise RemoteCommandFailed(f"signal {signal!r} is not one of {', '.join(SIGNALS)}")
    pid = pid_of(cluster, service)
    if pid is None:
        raise RemoteCommandFailed(f"{service.name} is not running on {service.node or 'here'}")
    pid = int(pid)  # it goes into shell text
    if group:
        run(cluster, service, f"if [ \"$(ps -o pgid= -p {pid} | tr -d ' ')\" = {pid} ]; "
                              f"then kill -{signal} -{pid}; else kill -{signal} {pid}; fi")
    else:
        run(cluster, service, f"kill -{signal} {pid}")
    return pid


def stopped(cluster: Cluster, service: Service, pid: int) -> bool:
    """The process is stopped by a signal (state T): alive, holding its sockets and its
    place in the cluster, answering nothing."""
    out = run(cluster, service, f"sed -n 's/^State:[[:space:]]*//p' /proc/{pid}/status",
              check=False).stdout.strip()
    return out.startswith("T")


def suspend(cluster: Cluster, service: Service) -> int:
    """SIGSTOP the service (with the children it forked, if it leads its process group) and
    check that it is stopped; return its PID. A hung daemon, not a dead one: no supervisor
    restarts it, and nothing about it changes until it is resumed."""
    pid = kill(cluster, service, "STOP", group=True)
    if not stopped(cluster, service, pid):
        raise RemoteCommandFailed(f"{service.name} (PID {pid}) is not stopped after SIGSTOP")
    return pid


def resume(cluster: Cluster, service: Service) -> int | None:
    """SIGCONT the service if it runs (the restore of suspend); its PID, or None if it does
    not run. A running process that was not stopped is unchanged by it."""
    if pid_of(cluster, service) is None:
        return None
    pid = kill(cluster, service, "CONT", group=True)
    if stopped(cluster, service, pid):
        raise RemoteCommandFailed(f"{service.name} (PID {pid}) is still stopped after SIGCONT")
    return pid


def start(cluster: Cluster, service: Service, timeout: float = 60.0) -> None:
    """Start the service if it is not running (idempotent)."""
    if pid_of(cluster, service) is not None:
        return
    if service.unit:
        run(cluster, service, f"systemctl start {shlex.quote(service.unit)}", timeout=timeout)
        return
    if not service.start:
        raise RemoteCommandFailed(f"{service.name} has no start command in the inventory")
    run(cluster, service, service.start, timeout=timeout)


def restart(cluster: Cluster, service: Service, timeout: float = 60.0) -> int:
    """Restart the service so that it reads its configuration again; returns its new PID.
    A unit: `systemctl restart`. A pid file: SIGTERM (its forked children too), wait until
    it is gone, then its start command."""
    if service.unit:
        run(cluster, service, f"systemctl restart {shlex.quote(service.unit)}", timeout=timeout)
    else:
        if pid_of(cluster, service) is not None:
            kill(cluster, service, "TERM", group=True)
        deadline = time.monotonic() + timeout
        while pid_of(cluster, service) is not None:
            if time.monotonic() > deadline:
                raise RemoteCommandFailed(f"{service.name} still runs {timeout:.0f} s after "
                                          "SIGTERM")
            time.sleep(0.5)
        start(cluster, service, timeout=timeout)
    deadline = time.monotonic() + timeout
    while (pid := pid_of(cluster, service)) is None:
        if time.monotonic() > deadline:
            raise RemoteCommandFailed(f"{service.name} did not run again within "
                                      f"{timeout:.0f} s of its restart")
        time.sleep(0.5)
    return pid
