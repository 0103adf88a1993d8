"""Which SSH host keys Faultline trusts, and trust on first use for the inventories that ask.

With `host_keys: verify` (the default) a node's key must be in the inventory's known_hosts;
a node not there, or with another key, is refused. Nothing else is consulted: not the
user's ~/.ssh/known_hosts, not the system's.

With `host_keys: tofu` a node missing from both the inventory's known_hosts and Faultline's
own (`FAULTLINE_HOME/ssh/known_hosts`) has the key it shows now recorded in Faultline's
own file, with one warning; from then on that key is the only one accepted, so a changed
key is refused as in `verify`.
"""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path

import paramiko

from clusters.exceptions import HostKeyMismatch
from clusters.paths import state_dir

log = logging.getLogger(__name__)


def tofu_known_hosts() -> Path:
    """Faultline's own known_hosts, where trust on first use records keys."""
    return state_dir() / "ssh" / "known_hosts"


class TrustOnFirstUse(paramiko.MissingHostKeyPolicy):
    """Record a node's first key in Faultline's known_hosts (once, under a file lock, so two
    connections at once agree) and warn; a key recorded meanwhile that differs is refused."""

    def __init__(self, path: Path, node: str) -> None:
        self.path = path
        self.node = node

    def missing_host_key(self, client, hostname: str, key: paramiko.PKey) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "r+") as file:
            fcntl.flock(file, fcntl.LOCK_EX)
            known = paramiko.HostKeys()
            known.load(str(self.path))
            recorded = (known.lookup(hostname) or {}).get(key.get_name())
            if recorded is not None:
                if recorded != key:
                    raise HostKeyMismatch(
                        f"host key of node {self.node} ({hostname}) does not match the one "
                        f"recorded on first use in {self.path}: got {key.get_name()} "
                        f"{key.fingerprint}; refusing to connect")
                return
            file.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")
        log.warning("trusting node %s (%s) on first use: recorded its %s key %s in %s",
                    self.node, hostname, key.get_name(), key.fingerprint, self.path)


def trust(client: paramiko.SSHClient, node: str, known_hosts: str | None,
          mode: str) -> None:
    """Load the keys `client` may accept for `node` and set what happens to an unknown one."""
    if known_hosts:
        # as "system" keys: read, never written back
        client.load_system_host_keys(known_hosts)
    if mode == "tofu":
        own = tofu_known_hosts()
        if own.exists():
            client.load_host_keys(str(own))
        client.set_missing_host_key_policy(TrustOnFirstUse(own, node))
    else:
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
