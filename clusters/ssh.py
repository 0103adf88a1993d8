"""Run commands on a cluster node over SSH (paramiko).

Host keys are checked against the inventory's known_hosts file; an unknown or
changed key is refused unless the inventory says `verify_host_keys: false`.
"""

from __future__ import annotations

from dataclasses import dataclass

import paramiko

from .exceptions import HostKeyMismatch, NodeUnreachable, RemoteCommandFailed
from .inventory import Node


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
        client = paramiko.SSHClient()
        if access.verify_host_keys:
            if access.known_hosts:
                try:
                    client.load_host_keys(access.known_hosts)
                except FileNotFoundError:
                    raise NodeUnreachable(
                        f"known_hosts {access.known_hosts} for node {self.node.name} "
                        "does not exist") from None
            else:
                client.load_system_host_keys()
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
        else:
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        try:
            client.connect(
                self.node.address, port=access.port, username=access.user,
                key_filename=access.key_file, timeout=self.connect_timeout,
                banner_timeout=self.connect_timeout, auth_timeout=self.connect_timeout,
                allow_agent=False, look_for_keys=access.key_file is None,
            )
        except paramiko.BadHostKeyException as exc:
            client.close()
            raise HostKeyMismatch(
                f"host key of node {self.node.name} ({self.node.address}) does not match "
                f"{access.known_hosts}: got {exc.key.get_name()} "
                f"{exc.key.fingerprint}; refusing to connect") from None
        except paramiko.SSHException as exc:
            client.close()
            if "not found in known_hosts" in str(exc):
                raise HostKeyMismatch(
                    f"node {self.node.name} ({self.node.address}) is not in "
                    f"{access.known_hosts or 'the system known_hosts'}; refusing to connect"
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
