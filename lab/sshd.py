"""A real OpenSSH server per lab node, so the lab is reached like remote machines.

Each node runs Debian's /usr/sbin/sshd inside its network namespace, listening
on the node's address only, with its own ed25519 host key and a config of our
own (never /etc/ssh). Root logs in with the lab's client key only. Commands
run over SSH land in the node's namespace, so `ssh root@10.77.0.11 ceph-osd ...`
starts an OSD exactly where it belongs.

The client key is shared by every lab (one key file in the inventory); host
keys, configs and known_hosts belong to one lab.
"""

from __future__ import annotations

import shlex
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from clusters.polling import poll_until

from . import procs
from .netns import LabNode, nsenter_argv

SSHD = "/usr/sbin/sshd"
PORT = 22
PRIVSEP_DIR = Path("/run/sshd")  # sshd refuses to start without it


@dataclass(frozen=True)
class SshdLayout:
    """Where one lab keeps its SSH material and its sshds' pid files and logs."""

    directory: Path  # host keys, configs, authorized_keys, known_hosts
    run_dir: Path
    log_dir: Path
    client_key: Path  # private key; the public one is client_key + ".pub"

    @property
    def authorized_keys(self) -> Path:
        return self.directory / "authorized_keys"

    @property
    def known_hosts(self) -> Path:
        return self.directory / "known_hosts"

    def host_key(self, node: LabNode) -> Path:
        return self.directory / node.name / "ssh_host_ed25519_key"

    def config(self, node: LabNode) -> Path:
        return self.directory / node.name / "sshd_config"

    def pid_file(self, node: LabNode) -> Path:
        return self.run_dir / f"sshd.{node.name}.pid"

    def log_file(self, node: LabNode) -> Path:
        return self.log_dir / f"sshd.{node.name}.log"


def _keygen(path: Path, comment: str) -> None:
    """Make an ed25519 key pair once; an existing key is kept (host keys must not change)."""
    if path.exists() and path.with_name(path.name + ".pub").exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                   check=True, capture_output=True)


def ensure_client_key(path: Path) -> Path:
    _keygen(path, "faultline-lab")
    return path


def _public_key(private_key: Path) -> str:
    return private_key.with_name(private_key.name + ".pub").read_text().strip()


def _config_text(node: LabNode, layout: SshdLayout) -> str:
    return "\n".join([
        f"ListenAddress {node.address}:{PORT}",
        f"HostKey {layout.host_key(node)}",
        f"PidFile {layout.pid_file(node)}",
        f"AuthorizedKeysFile {layout.authorized_keys}",
        "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        # the state dir's owners and modes are not sshd's business here
        "StrictModes no",
        "PrintMotd no",
        "UseDNS no",
        # chaos runs open many sessions at once; don't drop them as a flood
        "MaxStartups 64:30:128",
        "MaxSessions 64",
        "Subsystem sftp /usr/lib/openssh/sftp-server",
        "",
    ])


def prepare(nodes: list[LabNode], layout: SshdLayout) -> None:
    """Keys, configs, authorized_keys and known_hosts for these nodes (idempotent)."""
    ensure_client_key(layout.client_key)
    layout.directory.mkdir(parents=True, exist_ok=True)
    layout.authorized_keys.write_text(_public_key(layout.client_key) + "\n")
    known = []
    for node in nodes:
        _keygen(layout.host_key(node), f"faultline-lab-{node.name}")
        layout.config(node).write_text(_config_text(node, layout))
        host_key_type_and_blob = " ".join(_public_key(layout.host_key(node)).split()[:2])
        known.append(f"{node.address} {host_key_type_and_blob}\n")
    layout.known_hosts.write_text("".join(known))


def wait_listening(address: str, port: int = PORT, timeout: float = 15.0) -> None:
    def answers() -> bool:
        with socket.create_connection((address, port), timeout=1.0):
            return True
    poll_until(f"sshd on {address}:{port}", answers, timeout, 0.1, error=procs.DaemonError,
               message=lambda exc: f"sshd on {address}:{port} not answering: {exc}",
               retry_on=(OSError,))


def start(node: LabNode, layout: SshdLayout) -> int:
    """Start the node's sshd in its namespace (no-op if running); returns its PID."""
    PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    layout.run_dir.mkdir(parents=True, exist_ok=True)
    argv = [*nsenter_argv(node.netns), SSHD, "-f", str(layout.config(node)),
            "-E", str(layout.log_file(node))]
    pid = procs.start_daemon(argv, layout.pid_file(node), layout.log_file(node), program="sshd")
    wait_listening(node.address)
    return pid


def stop_targets(nodes: list[LabNode], layout: SshdLayout) -> dict[Path, str | None]:
    """{pid_file: program} of the sshds, for procs.stop_many."""
    return {layout.pid_file(node): "sshd" for node in nodes}


def ssh_argv(node: LabNode, layout: SshdLayout, user: str = "root") -> list[str]:
    """The ssh client command for a node, host key checked against our known_hosts."""
    return ["ssh", "-i", str(layout.client_key), "-p", str(PORT),
            "-o", f"UserKnownHostsFile={layout.known_hosts}",
            "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
            "-o", "ConnectTimeout=10", "-o", "LogLevel=ERROR",
            f"{user}@{node.address}"]


def run(node: LabNode, layout: SshdLayout, command: str, timeout: float = 60.0,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a shell command on a node over SSH."""
    result = subprocess.run([*ssh_argv(node, layout), command], capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=timeout)
    if check and result.returncode != 0:
        raise procs.DaemonError(
            f"ssh {node.name} {shlex.quote(command)} exited {result.returncode}: "
            f"{result.stderr.strip()[-500:]}")
    return result
