"""Cut a node off the network while its link stays up: nftables rules on the node itself.

Everything in and out of the node is dropped except loopback and the SSH port
Faultline reaches it on, so the node's daemons keep running and its peers and
clients see silence (timeouts), while the restore can still log in. The rules
live in one table of our own (`inet faultline`), replaced atomically when
added and deleted whole when removed, so nothing else of the node's firewall is
touched. On the lab the node's sshd runs in the node's namespace, so the rules
apply to that node only.
"""

from __future__ import annotations

import shlex

from clusters.access.inventory import Node
from clusters.access.ssh import run_on_node
from clusters.exceptions import RemoteCommandFailed

TABLE = "faultline"


def isolation_ruleset(ssh_port: int) -> str:
    if isinstance(ssh_port, bool) or not isinstance(ssh_port, int) or not 0 < ssh_port < 65536:
        raise RemoteCommandFailed(f"the SSH port in the isolation rules must be 1..65535, "
                                  f"not {ssh_port!r}")
    return f"""\
table inet {TABLE}
delete table inet {TABLE}
table inet {TABLE} {{
  chain input {{
    type filter hook input priority -300; policy accept;
    iif "lo" accept
    tcp dport {ssh_port} accept
    drop
  }}
  chain output {{
    type filter hook output priority -300; policy accept;
    oif "lo" accept
    tcp sport {ssh_port} accept
    drop
  }}
}}
"""


def isolate_command(ssh_port: int) -> str:
    """A shell command that installs the isolation atomically (`nft -f`)."""
    return (f"command -v nft >/dev/null || {{ echo 'nft (nftables) is not installed' >&2; "
            f"exit 3; }}; printf %s {shlex.quote(isolation_ruleset(ssh_port))} | nft -f -")


REJOIN_COMMAND = (f"if nft list table inet {TABLE} >/dev/null 2>&1; then "
                  f"nft delete table inet {TABLE}; fi")
IS_ISOLATED_COMMAND = f"nft list table inet {TABLE} >/dev/null 2>&1 && echo yes || echo no"


def check_ready(node: Node) -> None:
    """nftables is there to cut the node off (checked before a run)."""
    if run_on_node(node, "command -v nft", timeout=30, check=False).exit_status != 0:
        raise RemoteCommandFailed(f"node {node.name} has no nft (nftables): it cannot be "
                                  "partitioned or powered off over SSH")


def isolate(node: Node) -> None:
    run_on_node(node, isolate_command(node.ssh.port), timeout=30)


def rejoin(node: Node) -> None:
    """Remove the isolation (idempotent)."""
    run_on_node(node, REJOIN_COMMAND, timeout=30)


def is_isolated(node: Node) -> bool:
    out = run_on_node(node, IS_ISOLATED_COMMAND, timeout=30, check=False).stdout.strip()
    if out not in ("yes", "no"):
        raise RemoteCommandFailed(f"cannot tell whether node {node.name} is isolated: {out!r}")
    return out == "yes"
