"""A lossy or narrow link: random packet loss and a bandwidth cap on a node's traffic, or on
the traffic between two zones, with nftables on the nodes (or netem where a node has it).

Two mechanisms, and the record says which one a fault used:
- nftables (every kernel with nf_tables): a table of our own, `inet faultline_link`, on each
  receiving node, hooked in prerouting (a drop in the output hook would make the sender's
  sendto() fail with EPERM instead of losing the packet). `numgen random mod 100 < N drop`
  loses N% of the packets it matches; `limit rate over X bytes/second drop` polices them to
  the cap. A node's loss: every packet arriving at the node (but SSH) and every packet from
  it arriving at the cluster's other nodes (what it sends to machines that are not nodes of
  the cluster, a lab's clients, is not lost). A node's cap: the limit on what arrives at
  it, and a tbf qdisc (our handle) on its interface for everything it sends. Between two
  zones: on each node of either zone, the packets from the other zone's nodes (loss and
  cap, each receiving node with its own bucket). Named counters count what the rules saw,
  lost and capped, so the loss can be measured. A policer overshoots a little on short
  transfers (its 100 ms burst, TCP's window in flight): 2.2 Mbit/s under a 2 Mbit/s cap.
- netem (`tc qdisc ... netem`), only for one node's loss and only when its kernel has the
  qdisc: on the interface holding the node's address, so it acts on what the node sends.
  Added latency (`delay_ms`) exists only with netem; nftables cannot delay a packet.

The restore deletes the table and our root qdisc (handle fa17:, netem or tbf) from every
node of the cluster; both are ours alone, nothing else of a node's firewall or queueing is
touched.
"""

from __future__ import annotations

import ipaddress
import shlex
from dataclasses import dataclass

from clusters.access.inventory import Cluster, Node
from clusters.access.ssh import run_on_node
from clusters.exceptions import ClusterError, InvalidLinkFault, RemoteCommandFailed

TABLE = "faultline_link"
HANDLE = "fa17:"  # of our root qdisc (netem, or tbf for a node's cap)
MAX_LOSS_PERCENT = 30
MIN_CAP_MBIT, MAX_CAP_MBIT = 0.1, 10_000.0
# netem delays SSH too (the restore's own way in): past a second its 10 s limits come near
MAX_DELAY_MS = 1_000
MECHANISMS = ("auto", "nftables", "netem")


@dataclass(frozen=True)
class LinkFault:
    """What to do to which traffic. `node` or `zones` says whose traffic."""

    loss_percent: int = 0  # 0: no loss
    cap_mbit: float = 0.0  # megabits per second; 0: no cap
    delay_ms: int = 0  # netem only
    node: str | None = None
    zones: tuple[str, str] | None = None

    @property
    def key(self) -> str:
        """Its fault-ledger key."""
        return f"link:{self.node}" if self.node else f"link:{self.zones[0]}~{self.zones[1]}"

    @property
    def scope(self) -> str:
        return f"on {self.node}" if self.node else f"between {self.zones[0]} and {self.zones[1]}"

    def says(self) -> str:
        parts = [f"{self.loss_percent}% packet loss"] if self.loss_percent else []
        if self.cap_mbit:
            parts.append(f"a {self.cap_mbit:g} Mbit/s cap")
        if self.delay_ms:
            parts.append(f"{self.delay_ms} ms added latency")
        return f"{' and '.join(parts)} {self.scope}"


def _number(name: str, value, whole: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            whole and value != int(value)):
        kind = "a whole number" if whole else "a number"
        raise InvalidLinkFault(f"{name} must be {kind}, not {value!r}")
    return value


def link_fault(cluster: Cluster, node: str = "", zones: list | tuple | None = None,
               loss_percent=None, cap_mbit=None, delay_ms=0) -> LinkFault:
    """The fault the arguments ask for, checked against the cluster; InvalidLinkFault with
    one message otherwise (nothing is touched here). None: no loss, no cap."""
    loss = 0 if loss_percent is None else _number("loss_percent", loss_percent, whole=True)
    if loss_percent is not None and not 1 <= loss <= MAX_LOSS_PERCENT:
        raise InvalidLinkFault(f"loss_percent must be from 1 to {MAX_LOSS_PERCENT}, "
                               f"not {loss_percent!r}")
    cap = 0 if cap_mbit is None else _number("cap_mbit", cap_mbit)
    if cap_mbit is not None and not MIN_CAP_MBIT <= cap <= MAX_CAP_MBIT:
        raise InvalidLinkFault(f"cap_mbit must be from {MIN_CAP_MBIT:g} to {MAX_CAP_MBIT:g} "
                               f"Mbit/s, not {cap_mbit!r}")
    delay = _number("delay_ms", delay_ms, whole=True)
    if not 0 <= delay <= MAX_DELAY_MS:
        raise InvalidLinkFault(f"delay_ms must be from 0 to {MAX_DELAY_MS}, not {delay_ms!r}")
    if not (loss or cap or delay):
        raise InvalidLinkFault("a lossy link needs loss_percent (1 to 30), cap_mbit or delay_ms")
    if bool(node) == bool(zones):
        raise InvalidLinkFault("name either a node or two zones (zones: [\"zone1\", \"zone2\"]), "
                               f"not {'both' if node else 'neither'}")
    if node:
        return LinkFault(int(loss), float(cap), int(delay), node=cluster.node(str(node)).name)
    if not isinstance(zones, list | tuple) or len(zones) != 2 or zones[0] == zones[1]:
        raise InvalidLinkFault(f"zones must be two different zones, not {zones!r}")
    for zone in zones:
        cluster.nodes_in_zone(str(zone))  # UnknownCluster naming the known zones
    return LinkFault(int(loss), float(cap), int(delay), zones=(str(zones[0]), str(zones[1])))


def receivers(cluster: Cluster, fault: LinkFault) -> dict[str, list[str] | None]:
    """Node name -> the sources whose packets it loses (addresses; None: from anywhere)."""
    if fault.node:
        target = cluster.node(fault.node)
        out: dict[str, list[str] | None] = {target.name: None}
        for other in cluster.nodes:
            if other.name != target.name:
                out[other.name] = [target.address]
        return out
    a, b = (cluster.nodes_in_zone(z) for z in fault.zones)
    out = {n.name: [m.address for m in b] for n in a}
    out.update({n.name: [m.address for m in a] for n in b})
    return out


def rule_address(address: str) -> str:
    """An IPv4 address as the rule text writes it, parsed first: an inventory's address is
    never pasted into nftables rules as it is (`ip saddr` matches IPv4 only)."""
    try:
        return str(ipaddress.IPv4Address(str(address)))
    except ValueError:
        raise InvalidLinkFault(f"a lossy link matches nodes by IPv4 address; {address!r} "
                               "is not one") from None


def ruleset(fault: LinkFault, sources: list[str] | None, ssh_port: int,
            police: bool = True) -> str:
    """The nftables table for one receiving node (atomically replaces an older one);
    `police`: with the cap's rate limit (a lossy node's peers leave the cap of what it
    sends to the node's own tbf)."""
    if sources is not None:
        match = f"ip saddr {{ {', '.join(rule_address(s) for s in sources)} }} "
    else:
        match = ""
    if isinstance(ssh_port, bool) or not isinstance(ssh_port, int) or not 0 < ssh_port < 65536:
        raise InvalidLinkFault(f"the SSH port in an nftables rule must be 1..65535, "
                               f"not {ssh_port!r}")
    rules = ['iif "lo" accept', f"tcp dport {ssh_port} accept",
             f'{match}counter name "seen"']
    if fault.loss_percent:
        rules.append(f'{match}numgen random mod 100 < {fault.loss_percent} '
                     'counter name "lost" drop')
    if fault.cap_mbit and police:
        rate = int(fault.cap_mbit * 1_000_000 / 8)  # bytes per second
        burst = max(rate // 10, 16_000)  # 100 ms of it, at least a few packets
        rules.append(f"{match}limit rate over {rate} bytes/second burst {burst} bytes "
                     'counter name "capped" drop')
    body = "\n".join(f"    {r}" for r in rules)
    return f"""\
table inet {TABLE}
delete table inet {TABLE}
table inet {TABLE} {{
  counter seen {{ }}
  counter lost {{ }}
  counter capped {{ }}
  chain prerouting {{
    type filter hook prerouting priority -300; policy accept;
{body}
  }}
}}
"""


def nft_command(text: str) -> str:
    return (f"command -v nft >/dev/null || {{ echo 'nft (nftables) is not installed' >&2; "
            f"exit 3; }}; printf %s {shlex.quote(text)} | nft -f -")


def _interface_of(address: str) -> str:
    """Shell: $dev is the interface holding the address; exit 3 saying so when none does.
    The address (the inventory's text) reaches the shell and awk only quoted, as data."""
    return (f"dev=$(ip -o -4 addr show | awk -v a={shlex.quote(address + '/')} "
            "'index($4, a) == 1 {print $2; exit}'); "
            f"[ -n \"$dev\" ] || {{ echo {shlex.quote(f'no interface holds {address}')} >&2; "
            "exit 3; }")


def netem_command(fault: LinkFault, address: str) -> str:
    """Put a netem qdisc (our handle) as the root of the interface holding `address`."""
    spec = []
    if fault.delay_ms:
        spec.append(f"delay {fault.delay_ms}ms")
    if fault.loss_percent:
        spec.append(f"loss {fault.loss_percent}%")
    if fault.cap_mbit:
        spec.append(f"rate {int(fault.cap_mbit * 1000)}kbit")
    return (f"{_interface_of(address)}; "
            f"tc qdisc replace dev \"$dev\" root handle {HANDLE} netem {' '.join(spec)}")


def tbf_command(fault: LinkFault, address: str) -> str:
    """Cap what the node sends: a tbf qdisc (our handle) as the root of its interface."""
    rate = int(fault.cap_mbit * 1000)  # kbit/s
    burst = max(rate * 1000 // 8 // 10, 16_000)  # 100 ms of it, at least a few packets
    return (f"{_interface_of(address)}; "
            f"tc qdisc replace dev \"$dev\" root handle {HANDLE} tbf rate {rate}kbit "
            f"burst {burst} latency 100ms")


# does the kernel have netem? Put one on loopback for a moment (no delay, no loss).
HAS_NETEM_COMMAND = ("if tc qdisc add dev lo root handle fa18: netem delay 0ms 2>/dev/null; "
                     "then tc qdisc del dev lo root handle fa18:; echo yes; else echo no; fi")
CLEAR_COMMAND = (f"if nft list table inet {TABLE} >/dev/null 2>&1; then "
                 f"nft delete table inet {TABLE}; fi; "
                 f"for d in $(tc qdisc show 2>/dev/null | awk '$3 == \"{HANDLE}\" "
                 "{print $5}'); do tc qdisc del dev \"$d\" root; done; true")
LEFT_COMMAND = (f"nft list table inet {TABLE} >/dev/null 2>&1 && echo table; "
                f"tc qdisc show 2>/dev/null | awk '$3 == \"{HANDLE}\" {{print $2}}'; true")


def has_netem(node: Node) -> bool:
    out = run_on_node(node, HAS_NETEM_COMMAND, timeout=30, check=False).stdout.strip()
    if out not in ("yes", "no"):
        raise RemoteCommandFailed(f"cannot tell whether node {node.name} has netem: {out!r}")
    return out == "yes"


def mechanism_for(cluster: Cluster, fault: LinkFault, wanted: str = "auto") -> str:
    """"netem" or "nftables", checked on the node: netem where asked or where it is there
    (one node), nftables otherwise; InvalidLinkFault when what is asked cannot be had."""
    if wanted not in MECHANISMS:
        raise InvalidLinkFault(f"mechanism must be one of {', '.join(MECHANISMS)}, "
                               f"not {wanted!r}")
    if wanted == "nftables":
        if fault.delay_ms:
            raise InvalidLinkFault("added latency (delay_ms) needs netem: nftables cannot "
                                   "delay a packet")
        return "nftables"
    if not fault.node:
        if fault.delay_ms or wanted == "netem":
            raise InvalidLinkFault("netem (and so added latency) is for one node's link, "
                                   "not between zones")
        return "nftables"
    if has_netem(cluster.node(fault.node)):
        return "netem"
    if fault.delay_ms or wanted == "netem":
        raise InvalidLinkFault(f"added latency needs netem: node {fault.node}'s kernel has no "
                               "netem qdisc (`tc qdisc add ... netem` fails)")
    return "nftables"


def describe_mechanism(fault: LinkFault, mechanism: str) -> str:
    """For the run's record: the mechanism used, in words."""
    if mechanism == "netem":
        return f"tc netem on {fault.node}'s interface ({fault.says()}, on what it sends)"
    parts = [f"nftables random drop {fault.loss_percent}%"] if fault.loss_percent else []
    if fault.cap_mbit and fault.node:
        parts.append(f"nftables limit {fault.cap_mbit:g} Mbit/s on what arrives at "
                     f"{fault.node}, tbf {fault.cap_mbit:g} Mbit/s on what it sends")
    elif fault.cap_mbit:
        parts.append(f"nftables limit {fault.cap_mbit:g} Mbit/s per receiving node")
    if fault.node and fault.loss_percent:
        where = f"on packets arriving at {fault.node} and from it at the other nodes"
    elif fault.node:
        where = f"on {fault.node}"
    else:
        where = f"on packets between {fault.zones[0]} and {fault.zones[1]}"
    return f"{', '.join(parts)} (prerouting, table inet {TABLE}) {where}; no added latency " \
           "(that needs netem)"


def apply(cluster: Cluster, fault: LinkFault, mechanism: str) -> list[str]:
    """Inject it; returns the nodes touched."""
    if mechanism == "netem":
        node = cluster.node(fault.node)
        run_on_node(node, netem_command(fault, node.address), timeout=30)
        return [node.name]
    touched = []
    for name, sources in receivers(cluster, fault).items():
        node = cluster.node(name)
        peer = fault.node is not None and name != fault.node  # of a lossy node
        if peer and not fault.loss_percent:
            continue  # the node's tbf caps what it sends them
        touched.append(name)
        run_on_node(node, nft_command(ruleset(fault, sources, node.ssh.port, police=not peer)),
                    timeout=30)
        if fault.cap_mbit and name == fault.node:
            run_on_node(node, tbf_command(fault, node.address), timeout=30)
    return touched


def clear(cluster: Cluster) -> dict[str, dict]:
    """Remove every lossy link from every node of the cluster (idempotent), one SSH call
    each; returns per node what was there ("table", and our root qdisc's kind: "netem" or
    "tbf") and what its rules counted."""
    found, failed = {}, []
    for node in cluster.nodes:
        # every node is tried: one that cannot be reached must not keep the others lossy
        try:
            out = run_on_node(node, f"{LEFT_COMMAND}; echo --; {COUNTERS_COMMAND}; "
                              f"{CLEAR_COMMAND}", timeout=30).stdout
        except ClusterError as exc:
            failed.append(f"{node.name}: {exc}")
            continue
        left, _, listed = out.partition("--")
        found[node.name] = {"had": left.split(), "counted": parse_counters(listed)}
    if failed:
        raise RemoteCommandFailed("lossy links not cleared on " + "; ".join(failed)
                                  + f" (cleared on {', '.join(found) or 'none'})")
    return found


def left_on(node: Node) -> list[str]:
    """What of ours is on the node: "table", and our root qdisc's kind ("netem", "tbf")."""
    return run_on_node(node, LEFT_COMMAND, timeout=30, check=False).stdout.split()


COUNTERS_COMMAND = f"nft list counters table inet {TABLE} 2>/dev/null; true"


def counters(node: Node) -> dict[str, int]:
    """Packets the node's rules saw, lost and capped (zeros without the table)."""
    return parse_counters(run_on_node(node, COUNTERS_COMMAND, timeout=30).stdout)


def parse_counters(listed: str) -> dict[str, int]:
    """`nft list counters` output -> {"seen": packets, "lost": ..., "capped": ...}."""
    found, name, words = {"seen": 0, "lost": 0, "capped": 0}, None, listed.split()
    for word, after in zip(words, words[1:], strict=False):
        if word == "counter":
            name = after
        elif word == "packets" and name in found:
            found[name] = int(after)
    return found
