"""Host keys and key files against a real OpenSSH server of our own on 127.0.0.1 (Debian's
/usr/sbin/sshd with its own host key and config, never /etc/ssh; no lab needed).

Exploit played: "SSH and files" of issue 25: `verify_host_keys: false` silently accepted any
host key and fell back to root's ~/.ssh, and key files were never checked for their mode.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from clusters.access.host_keys import tofu_known_hosts
from clusters.access.inventory import Node, SshAccess
from clusters.access.ssh import run_on_node
from clusters.exceptions import HostKeyMismatch, InsecureSecretFile

SSHD = "/usr/sbin/sshd"
PRIVSEP_DIR = Path("/run/sshd")  # sshd refuses to start without it (lab/sshd.py makes it too)


def _keygen(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.with_name(path.name + ".pub").unlink(missing_ok=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
                   check=True, capture_output=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Sshd:
    """One sshd on 127.0.0.1:port, with a host key that can be changed between starts."""

    directory: Path
    port: int
    process: subprocess.Popen | None = None

    @property
    def host_key(self) -> Path:
        return self.directory / "ssh_host_ed25519_key"

    @property
    def client_key(self) -> Path:
        return self.directory / "id_ed25519"

    def host_key_line(self) -> str:
        kind, blob = (self.directory / "ssh_host_ed25519_key.pub").read_text().split()[:2]
        return f"[127.0.0.1]:{self.port} {kind} {blob}\n"

    def start(self) -> None:
        config = self.directory / "sshd_config"
        config.write_text("\n".join([
            f"ListenAddress 127.0.0.1:{self.port}", f"HostKey {self.host_key}",
            f"PidFile {self.directory / 'sshd.pid'}",
            f"AuthorizedKeysFile {self.directory / 'authorized_keys'}",
            "PermitRootLogin prohibit-password", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", "UseDNS no", ""]))
        PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
        self.process = subprocess.Popen([SSHD, "-D", "-f", str(config), "-E",
                                         str(self.directory / "sshd.log")])
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise AssertionError(f"sshd on 127.0.0.1:{self.port} did not start: "
                                         f"{(self.directory / 'sshd.log').read_text()}"
                                         ) from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def node(self, key_file: Path | None = None, known_hosts: Path | None = None,
             host_keys: str = "verify") -> Node:
        return Node(name="node1", address="127.0.0.1", ssh=SshAccess(
            user="root", port=self.port, key_file=str(key_file or self.client_key),
            known_hosts=str(known_hosts) if known_hosts else None, host_keys=host_keys))


@pytest.fixture
def sshd(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.fail("these tests start sshd and log in as root: run them as root, as the lab")
    monkeypatch.setenv("FAULTLINE_HOME", str(tmp_path / "home"))
    server = Sshd(tmp_path / "sshd", _free_port())
    server.directory.mkdir()
    _keygen(server.host_key)
    _keygen(server.client_key)
    (server.directory / "authorized_keys").write_text(
        (server.directory / "id_ed25519.pub").read_text())
    server.start()
    yield server
    server.stop()


def test_a_known_host_key_lets_the_command_run(sshd, tmp_path):
    known = tmp_path / "known_hosts"
    known.write_text(sshd.host_key_line())
    assert run_on_node(sshd.node(known_hosts=known), "echo $((6 * 7))").stdout.strip() == "42"


def test_an_unknown_host_key_is_refused(sshd, tmp_path):
    empty = tmp_path / "known_hosts"
    empty.write_text("")

    with pytest.raises(HostKeyMismatch, match=r"node node1 \(127.0.0.1\) is not in "
                                              rf"{empty}; refusing to connect"):
        run_on_node(sshd.node(known_hosts=empty), f"touch {tmp_path / 'ran'}")
    assert not (tmp_path / "ran").exists()
    assert not tofu_known_hosts().exists()  # verify never records anything


def test_trust_on_first_use_records_the_key_once_and_refuses_a_changed_one(sshd, caplog,
                                                                          tmp_path):
    node = sshd.node(host_keys="tofu")
    caplog.set_level(logging.WARNING, logger="clusters.access.host_keys")

    # first use: the key is recorded, with one warning; the second use finds it
    assert run_on_node(node, "echo first").stdout.strip() == "first"
    assert run_on_node(node, "echo again").stdout.strip() == "again"
    assert tofu_known_hosts().read_text() == sshd.host_key_line()
    assert stat_mode(tofu_known_hosts()) == 0o600
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "trusting node node1" in warnings[0], warnings

    # the node comes back with another host key: refused, and the record is unchanged
    recorded = tofu_known_hosts().read_text()
    sshd.stop()
    _keygen(sshd.host_key)
    sshd.start()
    with pytest.raises(HostKeyMismatch, match="host key of node node1 .* does not match"):
        run_on_node(node, f"touch {tmp_path / 'ran'}")
    assert not (tmp_path / "ran").exists()
    assert tofu_known_hosts().read_text() == recorded


def test_a_key_file_others_can_read_is_refused_before_connecting(sshd, tmp_path):
    known = tmp_path / "known_hosts"
    known.write_text(sshd.host_key_line())
    sshd.client_key.chmod(0o644)
    log_before = (sshd.directory / "sshd.log").read_text()

    with pytest.raises(InsecureSecretFile, match=r"\(mode 0644\); make it private with "
                                                 rf"`chmod 600 {sshd.client_key}`"):
        run_on_node(sshd.node(known_hosts=known), f"touch {tmp_path / 'ran'}")
    assert not (tmp_path / "ran").exists()
    assert "Accepted publickey" not in (sshd.directory / "sshd.log").read_text()[
        len(log_before):]


def stat_mode(path: Path) -> int:
    return path.stat().st_mode & 0o777
