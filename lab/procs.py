"""Lab daemons, known only through their pid files.

Nothing here looks processes up by name: a PID is signalled only if it comes
from one of our pid files and /proc says it still runs the expected program
(a stale pid file of a killed lab may name a PID reused by anything).
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .exceptions import DaemonError


def no_core_dumps() -> None:
    """preexec_fn: core_pattern is "core", so a crashing OSD would drop GBs into its cwd."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def read_pid(pid_file: Path) -> int | None:
    try:
        text = pid_file.read_text().strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return int(text) if text.isdigit() else None


def _proc_state(pid: int) -> str | None:
    return _proc_state_of(f"/proc/{pid}/stat")


def _proc_state_of(stat_path: str) -> str | None:
    try:
        stat = Path(stat_path).read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return stat.rsplit(")", 1)[1].split()[0]  # the comm field may contain spaces or ')'


def _runs(pid: int, program: str | None) -> bool:
    # the executable, not argv: sshd rewrites its argv (setproctitle) into prose
    if program is None:
        return True
    try:
        exe = os.path.basename(os.readlink(f"/proc/{pid}/exe").removesuffix(" (deleted)"))
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return False
    if exe == program:
        return True
    # a script (Swift's servers): the interpreter runs it, so it is argv[1]
    script = os.path.basename(argv[1].decode(errors="replace")) if len(argv) > 1 else ""
    return exe.startswith("python") and script == program


def _other_threads_run(pid: int) -> bool:
    """True while a thread of the process other than its main one has not exited yet."""
    try:
        tasks = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return any(_proc_state_of(f"/proc/{pid}/task/{t}/stat") not in (None, "Z", "X")
               for t in tasks if t != pid)


def is_alive(pid: int, program: str | None = None) -> bool:
    """True if the PID runs. Zombies count as dead (PID 1 here reaps orphans late), but only
    once all their threads are gone: a daemon's main thread turns zombie at exit while the
    others still run, holding its files (and so its disk's mount) for some milliseconds."""
    state = _proc_state(pid)
    if state in ("Z", "X"):
        return _other_threads_run(pid)
    return state is not None and _runs(pid, program)


def alive_pid(pid_file: Path, program: str | None = None) -> int | None:
    """The PID in a pid file if that process is alive (and runs `program`), else None."""
    pid = read_pid(pid_file)
    return pid if pid is not None and is_alive(pid, program) else None


def remove_stale(pid_file: Path, program: str | None = None) -> None:
    if pid_file.exists() and alive_pid(pid_file, program) is None:
        pid_file.unlink(missing_ok=True)


def rss_bytes(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def start_daemon(argv: list[str], pid_file: Path, log_file: Path, *, program: str | None = None,
                 timeout: float = 30.0) -> int:
    """Run a self-daemonizing program and wait for its pid file to name a live process.

    `argv` may be wrapped (nsenter, ssh); its launcher must exit once the daemon forked.
    Returns the daemon's PID.
    """
    pid = alive_pid(pid_file, program)
    if pid is not None:
        return pid
    pid_file.unlink(missing_ok=True)  # so an old file cannot pass for the new daemon's
    run_detached(argv, log_file, timeout)
    return wait_for_pid_file(pid_file, program=program, timeout=timeout, log_file=log_file)


def wait_for_pid_file(pid_file: Path, *, program: str | None = None, timeout: float = 30.0,
                      log_file: Path | None = None) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid = alive_pid(pid_file, program)
        if pid is not None:
            return pid
        time.sleep(0.1)
    where = f" (see {log_file})" if log_file else ""
    raise DaemonError(f"no live process in {pid_file} after {timeout:.0f} s{where}")


def _signal(pid: int, sig: int, group: bool = False) -> None:
    """Signal a PID, or its whole process group if asked and it leads one (setsid)."""
    try:
        if group and os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _group_of(pid: int) -> int | None:
    """The process group the PID leads, or None if it leads none (then only it is signalled)."""
    try:
        return pid if os.getpgid(pid) == pid else None
    except ProcessLookupError:
        return None


def run_detached(argv: list[str], log_file: Path, timeout: float = 30.0) -> None:
    """Run a launcher that backgrounds its program and returns (a start command of ours)."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with open(log_file, "ab") as log:
        launcher = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                  preexec_fn=no_core_dumps, start_new_session=True,
                                  timeout=timeout)
    if launcher.returncode != 0:
        raise DaemonError(f"{' '.join(argv)} exited {launcher.returncode} (see {log_file})")


def stop(pid_file: Path, *, program: str | None = None, deadline: float = 10.0,
         group: bool = False) -> str:
    """SIGTERM the daemon of a pid file, SIGKILL it after `deadline` s.

    With `group`, the daemon's whole process group is signalled (if it leads one):
    Swift's replicators leave rsync children behind otherwise.
    Returns what happened: "not running", "stopped", "killed" or "stuck".
    """
    pid = alive_pid(pid_file, program)
    if pid is None:
        pid_file.unlink(missing_ok=True)
        return "not running"
    pgid = _group_of(pid) if group else None
    _signal(pid, signal.SIGTERM, group)
    outcome = "stopped"
    end = time.monotonic() + deadline
    while is_alive(pid):
        if time.monotonic() > end:
            if outcome == "killed":  # SIGKILL ignored: stuck in the kernel (D state)
                return "stuck"
            _signal(pid, signal.SIGKILL, group)
            outcome = "killed"
            end = time.monotonic() + 5.0
        time.sleep(0.05)
    if pgid is not None:  # members that outlived their leader (its PID may be gone now)
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    pid_file.unlink(missing_ok=True)
    return outcome


def reap(pid: int) -> None:
    """Collect the exit of a child this process started (else it stays a zombie)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def kill(pid_file: Path, *, program: str | None = None) -> bool:
    """SIGKILL the daemon of a pid file at once (a crash); True if there was one."""
    pid = alive_pid(pid_file, program)
    if pid is None:
        return False
    _signal(pid, signal.SIGKILL)
    return True


def stop_many(targets: dict[Path, str | None], deadline: float = 10.0,
              group: bool = False) -> dict[str, str]:
    """Stop several daemons at once ({pid_file: program}); each Ceph daemon takes ~2 s."""
    if not targets:
        return {}
    with ThreadPoolExecutor(max_workers=min(len(targets), 32)) as pool:
        futures = {pf.name: pool.submit(stop, pf, program=prog, deadline=deadline, group=group)
                   for pf, prog in targets.items()}
        return {name: f.result() for name, f in futures.items()}
