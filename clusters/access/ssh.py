"""Run commands on a cluster node over SSH (paramiko).

Host keys are checked against the inventory's known_hosts file; an unknown or
changed key is refused, unless the inventory says `host_keys: tofu`, where a node's first
key is recorded and a changed one still refused (clusters/access/host_keys.py). The key file is
the inventory's, checked private first; nothing under ~/.ssh is ever used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import paramiko

from clusters.access import host_keys
from clusters.access.inventory import Node
from clusters.access.private_files import check_private
from clusters.exceptions import ClusterError, HostKeyMismatch, NodeUnreachable, RemoteCommandFailed


@dataclass(frozen=True)
class CommandResult:
    exit_status: int
    stdout: str
    stderr: str


class NodeShell:
    """One SSH connection to one node. Use as a context manager."""

    def __init__(self, node: Node, connect_timeout: float = 10.0):
        self.node = node
        self.connect_timeout = connect_timeout
        self._client: paramiko.SSHClient | None = None

    def __enter__(self) -> NodeShell:
        self.connect()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def connect(self) -> None:
        access = self.node.ssh
        if not access.key_file:
            raise NodeUnreachable(
                f"node {self.node.name} has no ssh key_file in the inventory (Faultline uses "
                "only the key the inventory names, never ~/.ssh)")
        check_private(access.key_file, f"SSH key file of node {self.node.name}")
        if access.host_keys != "tofu" and not access.known_hosts:
            raise HostKeyMismatch(
                f"node {self.node.name} has no known_hosts in the inventory to check its host "
                "key against: give ssh.known_hosts, or set ssh.host_keys: tofu to trust its "
                "first key; refusing to connect")
        client = paramiko.SSHClient()
        try:
            host_keys.trust(client, self.node.name, access.known_hosts, access.host_keys)
        except FileNotFoundError:
            raise NodeUnreachable(
                f"known_hosts {access.known_hosts} for node {self.node.name} "
                "does not exist") from None
        try:
            client.connect(
                self.node.address, port=access.port, username=access.user,
                key_filename=os.path.expanduser(access.key_file),
                timeout=self.connect_timeout, banner_timeout=self.connect_timeout,
                auth_timeout=self.connect_timeout, allow_agent=False, look_for_keys=False,
            )
        except ClusterError:  # refused by trust on first use
            client.close()
            raise
        except paramiko.BadHostKeyException as exc:
            client.close()
            raise HostKeyMismatch(
                f"host key of node {self.node.name} ({self.node.address}) does not match "
                f"{access.known_hosts or host_keys.tofu_known_hosts()}: got {exc.key.get_name()} "
                f"{exc.key.fingerprint}; refusing to connect") from None
        except paramiko.SSHException as exc:
            client.close()
            if "not found in known_hosts" in str(exc):
                raise HostKeyMismatch(
                    f"node {self.node.name} ({self.node.address}) is not in "
                    f"{access.known_hosts}; refusing to connect (host_keys: tofu would trust "
                    "its first key)"
                ) from None
            raise NodeUnreachable(
                f"SSH to node {self.node.name} ({self.node.address}) failed: {exc}") from None
        except (TimeoutError, OSError) as exc:
            client.close()
            raise NodeUnreachable(
                f"node {self.node.name} ({self.node.address}:{access.port}) is unreachable: "
                f"{exc}") from None
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(5)  # notice a node that died mid-command
        self._client = client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def run(self, command: str, timeout: float = 60.0, check: bool = True) -> CommandResult:
        """Run a shell command on the node; raise RemoteCommandFailed if it fails and check."""
        if self._client is None:
            self.connect()
        assert self._client is not None
        try:
            _, stdout, stderr = self._client.exec_command(command, timeout=timeout)
            # reads honour the channel timeout; recv_exit_status() alone would wait forever
            # on a frozen node
            out = stdout.read().decode(errors="replace")
            err = stderr.read().decode(errors="replace")
            if not stdout.channel.status_event.wait(timeout):
                raise TimeoutError(f"no exit status after {timeout:.0f} s")
            status = stdout.channel.recv_exit_status()
            result = CommandResult(status, out, err)
        except (TimeoutError, paramiko.SSHException, OSError) as exc:
            raise NodeUnreachable(
                f"`{command}` on node {self.node.name} did not complete: {exc}") from None
        if check and status != 0:
            raise RemoteCommandFailed(
                f"`{command}` on node {self.node.name} exited {status}: "
                f"{result.stderr.strip() or result.stdout.strip()}")
        return result


def run_on_node(node: Node, command: str, timeout: float = 60.0,
                check: bool = True) -> CommandResult:
    """Connect, run one command, disconnect."""
    with NodeShell(node) as shell:
        return shell.run(command, timeout=timeout, check=check)
