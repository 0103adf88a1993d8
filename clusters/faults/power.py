"""Power a node off and on, the way its inventory entry says it can be.

- `netns` (the lab): the node is a network namespace on this machine. Off = its
  cable is pulled (the bridge side of its veth goes down) and then every daemon of
  the node is SIGKILLed by PID, so peers see silence (timeouts), as with a dead
  server, not refused connections. On = link up, daemons started over SSH.
- `ipmi`: the node's BMC, through `ipmitool -I lanplus -C 3` (chassis power off/on;
  `ipmitool_argv` is the one place its command line is made). After power on, Faultline
  waits for SSH, then for the node's own systemd to start its enabled units (it starts
  none of them itself: that would race the boot), and starts only pid-file daemons.
- `ssh` (a remote node with no BMC): over SSH, the node's traffic is dropped by
  nftables (clusters/faults/firewall.py, SSH excepted) and then every storage daemon of
  the node is SIGKILLed. On = rules removed, daemons started.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

from clusters.access import services
from clusters.access.inventory import Cluster, Node
from clusters.access.private_files import check_private
from clusters.access.ssh import run_on_node
from clusters.exceptions import BmcUnavailable, InventoryError, NodeUnreachable, RemoteCommandFailed
from clusters.faults import firewall, supervision
from clusters.polling import poll_until

SSH_BACK_TIMEOUT_S = 600.0
IPMI_TIMEOUT_S = 60.0
# before a run, a BMC that does not answer is told in ~2 s (ipmitool's default: 20 s)
IPMI_PROBE_OPTIONS = ("-N", "1", "-R", "1", "-v")
DEFAULT_CIPHER_SUITE = 3
UNAUTHENTICATED_CIPHER_SUITE = 0
CIPHER_SUITE_0 = ("cipher_suite 0 is refused: it authenticates nothing (anyone on the BMC's "
                  "network can power the node off); use 3 (the default) or 17")


def controller_of(node: Node) -> str:
    if node.power:
        return node.power["type"]
    return "netns" if node.netns else "ssh"


def veth_of(node: Node) -> str:
    """The bridge side of a lab node's veth pair (lab/netns.py names it v<netns>)."""
    return f"v{node.netns}"


def _local(*argv: str) -> None:
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RemoteCommandFailed(f"`{' '.join(argv)}` exited {done.returncode}: "
                                  f"{done.stderr.strip()}")


def ipmitool_argv(power: dict, *command: str, probe: bool = False) -> list[str]:
    """ipmitool's command line for a node's BMC (its inventory `power:` entry). lanplus
    names its cipher suite (3 unless set): else every call spends 10 s asking the BMC for
    its list. The password is passed only as its file (-f), never on the command line."""
    interface = power.get("interface", "lanplus")
    argv = ["ipmitool", "-I", interface]
    if interface == "lanplus":
        suite = power.get("cipher_suite", DEFAULT_CIPHER_SUITE)
        if suite == UNAUTHENTICATED_CIPHER_SUITE:
            raise InventoryError(CIPHER_SUITE_0)
        argv += ["-C", str(suite)]
    argv += ["-H", power["address"]]
    if power.get("port") is not None:
        argv += ["-p", str(power["port"])]
    argv += ["-U", power["user"], "-f", power["password_file"]]
    if probe:
        argv += IPMI_PROBE_OPTIONS
    return [*argv, *command]


def _bmc_address(node: Node) -> str:
    power = node.power or {}
    port = f":{power['port']}" if power.get("port") is not None else ""
    return f"{power.get('address', '?')}{port}"


def _bmc_name(node: Node) -> str:
    return f"node {node.name}'s BMC at {_bmc_address(node)}"


def _ipmi(node: Node, *command: str, probe: bool = False) -> str:
    """Run an ipmitool command on the node's BMC; its output, or BmcUnavailable saying
    whether the BMC did not answer or refused the login."""
    argv = ipmitool_argv(node.power or {}, *command, probe=probe)
    check_private((node.power or {}).get("password_file") or "",
                  f"BMC password file of node {node.name}")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=IPMI_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise BmcUnavailable(f"{_bmc_name(node)}: `{' '.join(command)}` got no answer in "
                             f"{IPMI_TIMEOUT_S:.0f} s") from None
    if done.returncode == 0:
        return done.stdout
    said = done.stderr.strip()
    if "RAKP 2 HMAC is invalid" in said or "unauthorized name" in said.lower():
        why = (f"refused the login of user {(node.power or {}).get('user')!r} (is the password "
               f"in {(node.power or {}).get('password_file')} right?)")
    elif "Get Channel Authentication Capabilities" in said or "no response" in said.lower():
        why = "did not answer"
    else:
        why = f"failed: {said.splitlines()[-1] if said else f'exit {done.returncode}'}"
    raise BmcUnavailable(f"{_bmc_name(node)} {why} (ipmitool {' '.join(command)})")


def bmc_power_is_on(node: Node, probe: bool = False) -> bool:
    """What the BMC says of the chassis power ("Chassis Power is on|off")."""
    return _ipmi(node, "chassis", "power", "status", probe=probe).strip().lower().endswith(" on")


def _each(cluster: Cluster, node: Node, act) -> list[str]:
    """`act` on every daemon of the node at once (one SSH session each: a node runs a dozen
    daemons, one after the other took ~1 s apiece); the names it acted on, in order."""
    daemons = cluster.services_on(node.name)
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(daemons)))) as pool:
        done = list(pool.map(act, daemons))
    return [service.name for service, acted in zip(daemons, done, strict=True) if acted]


def _kill_daemons(cluster: Cluster, node: Node, here: bool) -> list[str]:
    """SIGKILL every daemon of the node; `here`: through its pid files on this machine."""
    def kill(service) -> bool:
        target = dataclasses.replace(service, node=None) if here else service
        if services.pid_of(cluster, target) is None:
            return False
        services.kill(cluster, target, "KILL", group=True)
        return True
    return _each(cluster, node, kill)


def _wait_for_ssh(node: Node, timeout_s: float) -> None:
    def answers() -> bool:
        run_on_node(node, "true", timeout=10)
        return True
    poll_until(f"node {node.name} over SSH", answers, timeout_s, 2, error=NodeUnreachable,
               message=lambda exc: f"node {node.name} not reachable over SSH "
                                   f"{timeout_s:.0f} s after power on: {exc}",
               retry_on=(NodeUnreachable,))


def _start_daemons(cluster: Cluster, node: Node, supervised_too: bool = True) -> list[str]:
    def start(service) -> bool:
        if not supervised_too and service.supervisor != "pid_file":
            return False
        if services.pid_of(cluster, service) is not None:
            return False
        services.start(cluster, service)
        return True
    return _each(cluster, node, start)


def _wait_for_units(cluster: Cluster, node: Node, timeout_s: float) -> list[str]:
    """After a boot: wait until the node's systemd has started each of its supervised
    daemons (their units are enabled); the names waited for."""
    deadline = time.monotonic() + timeout_s  # one for all the node's daemons

    def wait(service) -> bool:
        unit = supervision.unit_of(cluster, service)
        if unit is None:
            return False
        poll_until(f"{unit} running", lambda: supervision.unit_state(cluster, service,
                                                                      unit).running,
                   deadline - time.monotonic(), 1, error=RemoteCommandFailed,
                   message=f"node {node.name} booted, but its systemd has not started {unit} "
                           f"({service.name}) in {timeout_s:.0f} s")
        return True
    return _each(cluster, node, wait)


def _refuse_supervised(cluster: Cluster, node: Node) -> None:
    """The namespace controller kills a node's daemons through their pid files on this
    machine; daemons under systemd in a container node (the Reef lab) are not reached that
    way, and their supervisor would restart them: the node would only be cut off, not off."""
    supervised = [s.name for s in cluster.services_on(node.name) if s.supervisor != "pid_file"]
    if supervised:
        raise RemoteCommandFailed(
            f"cannot power off node {node.name} through its namespace: "
            f"{', '.join(supervised)} run under a supervisor there (give the node a BMC, "
            "power type ipmi)")


def power_off(cluster: Cluster, node_name: str) -> dict:
    node = cluster.node(node_name)
    how = controller_of(node)
    if how == "netns":
        _refuse_supervised(cluster, node)
        _local("ip", "link", "set", veth_of(node), "down")
        killed = _kill_daemons(cluster, node, here=True)
    elif how == "ipmi":
        _ipmi(node, "chassis", "power", "off")
        killed = ["(whole machine)"]
    else:
        firewall.isolate(node)
        killed = _kill_daemons(cluster, node, here=False)
    return {"node": node.name, "how": how, "killed": killed}


def power_on(cluster: Cluster, node_name: str, timeout_s: float = SSH_BACK_TIMEOUT_S) -> dict:
    """Power the node on and start its daemons (idempotent: a running node is left alone)."""
    node = cluster.node(node_name)
    how = controller_of(node)
    started = time.monotonic()
    if how == "netns":
        _local("ip", "link", "set", veth_of(node), "up")
    elif how == "ipmi":
        _ipmi(node, "chassis", "power", "on")
    _wait_for_ssh(node, timeout_s)
    if how == "ssh":
        firewall.rejoin(node)
    if how != "ipmi":
        return {"node": node.name, "how": how, "started": _start_daemons(cluster, node)}
    # a machine that booted: its systemd starts its enabled units; only pid-file daemons
    # are ours to start
    waited = _wait_for_units(cluster, node, max(1.0, timeout_s - (time.monotonic() - started)))
    return {"node": node.name, "how": how, "booted_with": waited,
            "started": _start_daemons(cluster, node, supervised_too=False),
            "seconds_to_daemons": round(time.monotonic() - started, 1)}


def is_off(cluster: Cluster, node_name: str) -> bool:
    """Whether the node is powered off as far as this controller can tell."""
    node = cluster.node(node_name)
    how = controller_of(node)
    if how == "netns":
        out = subprocess.run(["ip", "-o", "link", "show", "dev", veth_of(node)],
                             capture_output=True, text=True).stdout
        return "state DOWN" in out or ",UP" not in out.split(">")[0]
    if how == "ipmi":
        return not bmc_power_is_on(node)
    return firewall.is_isolated(node)


def check_ready(cluster: Cluster, node_name: str) -> None:
    """Before a run: what this node's controller needs is there; raise saying what is not."""
    node = cluster.node(node_name)
    how = controller_of(node)
    if how == "netns":
        if subprocess.run(["ip", "link", "show", "dev", veth_of(node)],
                          capture_output=True).returncode != 0:
            raise RemoteCommandFailed(f"node {node.name}: no lab link {veth_of(node)} on this "
                                      "machine (is the lab up?)")
    elif how == "ipmi":
        if shutil.which("ipmitool") is None:
            raise RemoteCommandFailed(f"node {node.name} is powered through its BMC, but "
                                      "ipmitool is not installed here")
        if not os.access((node.power or {})["password_file"], os.R_OK):
            raise RemoteCommandFailed(f"node {node.name}: BMC password file "
                                      f"{(node.power or {})['password_file']} is not readable")
        bmc_power_is_on(node, probe=True)  # it answers, and takes this user and password
    else:
        firewall.check_ready(node)


def describe(node: Node) -> str:
    how = controller_of(node)
    if how == "ipmi":
        return f"BMC {shlex.quote(_bmc_address(node))} (ipmitool)"
    return {"netns": f"lab link {veth_of(node)}", "ssh": "nftables over SSH"}[how]
