"""Power through a BMC on the Reef lab: each node's simulated BMC (lab/bmc.py, `ipmi_sim`)
cuts and restores its container's power, driven by `ipmitool -I lanplus -C 3` from the
power actions (clusters/faults/power.py). The lab comes up once for the session (conftest's
reef_cluster, shared with test_ceph_reef_lab.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from catalogue import wait_for
from test_ceph_reef_lab import CONFIGURATION, REPO

from actions.power import power_off_node, power_on_node
from clusters.access.inventory import Cluster
from clusters.ceph.admin import CephAdmin
from clusters.faults import power
from clusters.paths import default_inventory
from clusters.safety import fault_ledger
from lab import ceph_reef, ceph_setup, nspawn

pytestmark = pytest.mark.lab

LAB = ceph_reef.lab_at(None)
NODE2 = LAB.node_named("node2")


def _osd1_up(cluster: Cluster) -> bool:
    with CephAdmin(cluster.client["conf"]) as admin:
        return any(o["osd"] == 1 and o["up"] for o in admin.command("osd dump")["osds"])


def _hook(*args: str) -> subprocess.CompletedProcess[str]:
    """The BMC's chassis control, run as ipmi_sim runs it."""
    return subprocess.run([sys.executable, "-m", "lab.bmc_hook", str(LAB.home), "node2",
                           *args], capture_output=True, text=True, timeout=60, cwd=REPO)


def _ipmitool(cluster: Cluster, action: str) -> subprocess.CompletedProcess[str]:
    argv = power.ipmitool_argv(cluster.node("node2").power, "chassis", "power", action)
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def _outstanding() -> list[str]:
    return [e.key for e in fault_ledger.outstanding(ceph_reef.CLUSTER_NAME)]


@contextmanager
def _node2_powered_on_after():
    """Whatever fails in between, node2 is not left off for the rest of the session."""
    try:
        yield
    finally:
        if "power:node2" in _outstanding():
            power_on_node(node="node2", configuration=CONFIGURATION)


def test_power_off_and_on_through_the_bmc(reef_cluster):
    with _node2_powered_on_after():
        _power_off_and_on(reef_cluster)


def _power_off_and_on(reef_cluster):
    container = LAB.container(NODE2)
    off = power_off_node(node="node2", configuration=CONFIGURATION)
    assert (off["how"], off["guard"]["allowed"]) == ("ipmi", True)
    assert _outstanding() == ["power:node2"]
    assert _ipmitool(reef_cluster, "status").stdout.strip() == "Chassis Power is off"
    assert nspawn.nspawn_pid(container) is None and nspawn.init_pid(container) is None
    # idempotent: ipmitool retransmits, and an operator may say it twice
    assert _ipmitool(reef_cluster, "off").returncode == 0
    assert _hook("set", "power", "0").returncode == 0
    assert _hook("get", "power").stdout.strip() == "power:0"
    marked_down = wait_for("osd.1 marked down", lambda: not _osd1_up(reef_cluster), 60)
    print(f"\nosd.1 marked down {marked_down:.1f} s after the power cut")

    on = power_on_node(node="node2", configuration=CONFIGURATION)
    print(f"power on: {on}")
    assert (on["how"], on["booted_with"], on["started"]) == ("ipmi", ["osd.1"], [])
    assert _ipmitool(reef_cluster, "status").stdout.strip() == "Chassis Power is on"
    booted = nspawn.nspawn_pid(container)
    assert nspawn.wait_booted(container) in ("running", "degraded")
    assert _hook("set", "power", "1").returncode == 0
    assert nspawn.nspawn_pid(container) == booted  # the second "on" booted nothing
    wait_for("osd.1 up", lambda: _osd1_up(reef_cluster), 60)
    with CephAdmin(reef_cluster.client["conf"]) as admin:
        ceph_setup.wait_healthy(admin, 120)
    assert _outstanding() == []


def _with_power(tmp_path, **changes) -> Path:
    """A copy of the inventory where node2's BMC entry is changed."""
    spec = yaml.safe_load(default_inventory().read_text())
    for node in spec["clusters"][ceph_reef.CLUSTER_NAME]["nodes"]:
        if node["name"] == "node2":
            node["power"].update(changes)
    path = tmp_path / "inventory.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.mark.parametrize(("changes", "message"), [
    ({"password_file": "wrong"}, "node node2's BMC at 127.0.0.1:16232 refused the login of "
                                 "user 'admin'"),
    ({"port": 16299}, "node node2's BMC at 127.0.0.1:16299 did not answer"),
])
def test_a_bmc_that_refuses_or_does_not_answer_is_one_error_before_the_run(
        reef_cluster, env, tmp_path, changes, message):
    if changes.get("password_file") == "wrong":
        wrong = tmp_path / "password"
        wrong.write_text("not-the-password")
        wrong.chmod(0o600)
        changes = {"password_file": str(wrong)}
    inventory = _with_power(tmp_path, **changes)
    booted = nspawn.nspawn_pid(LAB.container(NODE2))
    done = subprocess.run(
        ["faultline", "run", str(REPO / "experiments" / "ceph-power-off-node.json"),
         "--cluster", ceph_reef.CLUSTER_NAME, "--inventory", str(inventory)],
        env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = [ln for ln in done.stderr.splitlines() if "error" in ln.lower()]
    assert line.startswith("error: ") and message in line, line
    assert nspawn.nspawn_pid(LAB.container(NODE2)) == booted
    assert _outstanding() == []


POWER_OFF_AND_HANG = """
import sys
from actions.power import power_off_node
print(power_off_node(node="node2", configuration={"faultline_cluster": "lab-ceph-reef"})["how"],
      flush=True)
sys.stdin.read()  # until the test SIGKILLs this run
"""


def test_heal_powers_on_a_node_left_off_by_a_killed_run(reef_cluster, env):
    with _node2_powered_on_after():
        _killed_and_healed(reef_cluster, env)


def _killed_and_healed(reef_cluster, env):
    run = subprocess.Popen([sys.executable, "-c", POWER_OFF_AND_HANG], env=env, cwd=REPO,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert run.stdout.readline().strip() == "ipmi"
    finally:
        os.kill(run.pid, signal.SIGKILL)  # the run dies with the node off
        run.wait()
    assert nspawn.nspawn_pid(LAB.container(NODE2)) is None
    healed = subprocess.run(["faultline", "heal", "--cluster", ceph_reef.CLUSTER_NAME],
                            env=env, capture_output=True, text=True, timeout=300)
    assert healed.returncode == 0, healed.stdout + healed.stderr
    assert "restored: node2 powered off (BMC 127.0.0.1:16232 (ipmitool))" in healed.stdout
    assert nspawn.nspawn_pid(LAB.container(NODE2)) is not None
    wait_for("osd.1 up", lambda: _osd1_up(reef_cluster), 60)
    with CephAdmin(reef_cluster.client["conf"]) as admin:
        ceph_setup.wait_healthy(admin, 120)
    assert _outstanding() == []

