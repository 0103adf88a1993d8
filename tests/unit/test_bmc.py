"""A node's BMC: the one ipmitool command line (clusters/faults/power.py), the inventory's
checks of a `power: {type: ipmi}` entry, the simulated BMCs' files (lab/bmc.py) as the Reef
lab writes them (lab/ceph_reef.py), and the monitor quorum a power-off must leave
(actions/power.py)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from chaoslib.exceptions import ActivityFailed

from actions.power import _keep_monitor_quorum, check_arguments
from clusters.access.inventory import parse_inventory
from clusters.exceptions import InventoryError
from clusters.faults.power import ipmitool_argv
from lab import bmc, ceph_reef

BMC = {"type": "ipmi", "address": "10.0.0.13", "user": "admin", "password_file": "/keys/bmc"}


def test_ipmitool_names_the_cipher_suite_the_port_and_only_the_password_file():
    assert ipmitool_argv({**BMC, "port": 16232, "cipher_suite": 17}, "chassis", "power",
                         "off") == [
        "ipmitool", "-I", "lanplus", "-C", "17", "-H", "10.0.0.13", "-p", "16232",
        "-U", "admin", "-f", "/keys/bmc", "chassis", "power", "off"]


def test_ipmitool_defaults_to_lanplus_with_cipher_suite_3_on_the_standard_port():
    # -C 3: else each call spends 10 s asking the BMC for its cipher suites
    assert ipmitool_argv(BMC, "chassis", "power", "status") == [
        "ipmitool", "-I", "lanplus", "-C", "3", "-H", "10.0.0.13", "-U", "admin",
        "-f", "/keys/bmc", "chassis", "power", "status"]
    # IPMI 1.5 (lan) has no cipher suites
    assert "-C" not in ipmitool_argv({**BMC, "interface": "lan"}, "chassis", "power", "on")


def test_a_probe_before_the_run_gives_up_quickly_and_verbosely():
    # one try of 1 s and one retry: a BMC nothing answers is told in 2 s, not 20
    assert ipmitool_argv(BMC, "chassis", "power", "status", probe=True)[11:] == [
        "-N", "1", "-R", "1", "-v", "chassis", "power", "status"]


def _cluster(power: dict) -> dict:
    return {"clusters": {"c": {
        "kind": "ceph", "client": {"conf": "/c"},
        "nodes": [{"name": "node1", "address": "10.0.0.11", "power": power}],
        "disks": [{"node": "node1", "device": "/d", "mount": "/m", "osd": 0}],
        "services": [{"name": "osd.0", "kind": "osd", "node": "node1", "pid_file": "/p"}]}}}


@pytest.mark.parametrize(("changes", "problem"), [
    ({"port": 0}, "port must be a whole number 1..65535, not 0"),
    ({"port": "623"}, "port must be a whole number 1..65535, not '623'"),
    ({"cipher_suite": 18}, "cipher_suite must be a whole number 1..17, not 18"),
    ({"cipher_suite": True}, "cipher_suite must be a whole number 1..17, not True"),
    ({"interface": "open"}, "interface must be lan or lanplus, not 'open'"),
])
def test_the_inventory_refuses_a_bad_bmc_setting(changes, problem):
    with pytest.raises(InventoryError, match=problem):
        parse_inventory(_cluster({**BMC, **changes}))


def test_the_inventory_keeps_the_bmc_settings():
    power = {**BMC, "port": 16232, "interface": "lanplus", "cipher_suite": 3}
    assert parse_inventory(_cluster(power))["c"].node("node1").power == power


def test_each_reef_node_has_its_own_bmc_in_the_inventory(tmp_path: Path):
    lab = ceph_reef.lab_at(tmp_path)
    spec = ceph_reef.inventory_spec(lab)
    cluster = parse_inventory({"clusters": {"lab-ceph-reef": spec}})["lab-ceph-reef"]
    powers = [n.power for n in cluster.nodes]
    assert [p["port"] for p in powers] == [16231, 16232, 16233, 16234]
    assert {(p["type"], p["address"], p["user"], p["interface"], p["cipher_suite"],
             p["password_file"]) for p in powers} == {
        ("ipmi", "127.0.0.1", "admin", "lanplus", 3, str(tmp_path / "bmc" / "password"))}


def test_the_bmc_password_is_made_once_and_only_its_owner_reads_it(tmp_path: Path):
    path = tmp_path / "bmc" / "password"
    password = bmc.ensure_password(path)
    assert len(password) == 16 and bmc.ensure_password(path) == password
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_lan_conf_gives_ipmi_sim_its_port_user_and_hook(tmp_path: Path):
    lab = ceph_reef.lab_at(tmp_path)
    node2 = lab.bmc_of(lab.node_named("node2"))
    text = bmc.lan_conf_text(node2, "s3cret", ["/py", "-m", "lab.bmc_hook", "/home"])
    lines = [line.strip() for line in text.splitlines()]
    assert "addr 127.0.0.1 16232" in lines
    assert 'chassis_control "/py -m lab.bmc_hook /home node2"' in lines
    assert 'user 2 true "admin" "s3cret" admin 10 none md2 md5 straight' in lines
    # without a GUID ipmi_sim offers no IPMI v2 session (lanplus)
    [guid] = [line.split()[1] for line in lines if line.startswith("guid ")]
    assert len(guid) == 32 and bmc.lan_conf_text(node2, "x", []).count(guid) == 1


def _reef_cluster(tmp_path: Path):
    spec = ceph_reef.inventory_spec(ceph_reef.lab_at(tmp_path))
    return parse_inventory({"clusters": {"lab-ceph-reef": spec}})["lab-ceph-reef"]


@pytest.mark.parametrize(("func", "arguments", "what"), [
    ("power_off_zone", {"zone": "zone1"}, "power off zone zone1 (node1, node2)"),
    ("power_off_node", {"node": "node1"}, "power off node1"),
])
def test_powering_off_the_only_monitor_is_refused_before_the_run(tmp_path: Path, func,
                                                                 arguments, what):
    # the data guard would allow it (each PG keeps two copies): the monitors decide here
    with pytest.raises(ActivityFailed) as refused:
        check_arguments(func, arguments, _reef_cluster(tmp_path))
    assert str(refused.value) == (
        f"refused: {what} takes mon.a with it, leaving 0 of 1 monitors, no quorum (a "
        "majority, 1, is needed): the whole cluster would stop serving (set "
        "allow_unavailable: true to inject anyway)")


def test_a_zone_without_monitors_keeps_the_quorum(tmp_path: Path):
    cluster = _reef_cluster(tmp_path)
    for zone, allow in (("zone2", False), ("zone3", False), ("zone1", True)):
        _keep_monitor_quorum(cluster, [n.name for n in cluster.nodes_in_zone(zone)],
                             f"power off zone {zone}", allow)


def test_an_empty_password_file_left_by_a_killed_lab_up_gets_a_password(tmp_path: Path):
    path = tmp_path / "bmc" / "password"
    path.parent.mkdir()
    path.write_text("")
    password = bmc.ensure_password(path)
    assert len(password) == 16 and path.read_text() == password


UDP = """  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid
  1: 0100007F:3F82 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1 2 0 0
  2: 00000000:0202 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1 2 0 0
  3: 0A4D000C:3F83 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1 2 0 0
"""


@pytest.mark.parametrize("port, taken", [(16258, True), (514, True), (16259, False),
                                         (16230, False)])
def test_a_bmc_port_is_taken_when_proc_net_udp_has_a_listener_on_it(port, taken):
    assert bmc.udp_listening(UDP, port) is taken
