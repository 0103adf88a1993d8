"""Ceph discovery turns the monitors' JSON (captured from the lab) into inventory entries,
and marks TODO what the maps do not hold."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from clusters.discovery.ceph import CephFacts, CephSource, address_ip, ceph_draft, rgw_endpoint
from clusters.discovery.reach import Reach

NOTHING_GIVEN = Reach()  # no option given
CAPTURED = json.loads((Path(__file__).parent / "data" / "ceph_lab_facts.json").read_text())
LAB_HOST = "10.77.0.1"  # the lab's mon, mgr and rgw run on this machine, at its bridge address
SOURCE = CephSource(conf="/etc/ceph/ceph.conf", mon_host=None,
                    keyring="/etc/ceph/ceph.client.admin.keyring", pool="faultline")


def facts(**changes) -> CephFacts:
    raw = {k: copy.deepcopy(v) for k, v in CAPTURED.items() if not k.startswith("_")}
    return CephFacts(**{**raw, **changes})


def draft(facts_=None, reach=NOTHING_GIVEN, is_local=lambda ip: ip == LAB_HOST, **kw):
    return ceph_draft(facts_ or facts(), SOURCE, reach, "prod", is_local, **kw)


def values(entries):
    return [e.value for e in entries]


def test_nodes_are_the_crush_hosts_in_their_zones_at_their_osds_public_address():
    assert values(draft().nodes) == [
        {"name": "node1", "address": "10.77.0.11", "zone": "zone1"},
        {"name": "node2", "address": "10.77.0.12", "zone": "zone1"},
        {"name": "node3", "address": "10.77.0.13", "zone": "zone2"},
        {"name": "node4", "address": "10.77.0.14", "zone": "zone3"}]


def test_each_osd_is_a_disk_with_its_device_and_data_directory():
    disks = {d["osd"]: d for d in values(draft().disks)}
    assert sorted(disks) == [0, 1, 2, 3]
    by_id = {m["id"]: m for m in CAPTURED["osd_metadata"]}
    for osd, disk in disks.items():
        assert disk["device"] == "/dev/" + by_id[osd]["devices"]
        assert disk["mount"] == f"/var/lib/faultline/lab/ceph/osd/ceph-{osd}"
    assert disks[2]["node"] == "node3"


def test_daemons_at_an_address_of_this_machine_run_here():
    services = {s["name"]: s for s in values(draft().services)}
    assert {n: s["node"] for n, s in services.items()} == {
        "osd.0": "node1", "osd.1": "node2", "osd.2": "node3", "osd.3": "node4",
        "mon.a": None, "mgr.x": None, "rgw.lab": None}
    assert services["rgw.lab"]["kind"] == "rgw"


def test_daemons_elsewhere_get_a_node_of_their_own_whose_zone_is_todo():
    result = draft(is_local=lambda ip: False)
    added = [e for e in result.nodes if e.value["address"] == LAB_HOST]
    assert [e.value for e in added] == [{"name": "vm", "address": LAB_HOST}]
    assert "zone" in added[0].todos[0]
    assert {s["name"]: s["node"] for s in values(result.services)}["mon.a"] == "vm"


def test_without_an_orchestrator_units_are_the_packages_and_marked_todo():
    result = draft()
    units = {s["name"]: s["unit"] for s in values(result.services)}
    assert units == {"osd.0": "ceph-osd@0", "osd.1": "ceph-osd@1", "osd.2": "ceph-osd@2",
                     "osd.3": "ceph-osd@3", "mon.a": "ceph-mon@a", "mgr.x": "ceph-mgr@x",
                     "rgw.lab": "ceph-radosgw@rgw.lab"}
    assert all("guessed" in s.todos[0] for s in result.services)
    assert any("No orchestrator configured" in n for n in result.notes)


def test_under_cephadm_units_come_from_orch_ps():
    fsid = CAPTURED["fsid"]
    orch = [{"daemon_type": "osd", "daemon_id": "0", "hostname": "node1"},
            {"daemon_type": "rgw", "daemon_id": "lab", "hostname": "vm"}]
    services = {e.value["name"]: e for e in draft(facts(orch_ps=orch)).services}
    assert services["osd.0"].value["unit"] == f"ceph-{fsid}@osd.0"
    assert services["rgw.lab"].value["unit"] == f"ceph-{fsid}@rgw.lab"
    assert services["osd.0"].todos == () and services["rgw.lab"].todos == ()
    assert services["osd.1"].todos  # not in orch ps: still a guess


def test_pid_file_and_start_templates_manage_every_daemon_without_todo():
    reach = Reach(pid_file="/run/ceph/ceph-{entity}.pid",
                  start="{program} -c /etc/ceph/ceph.conf -n {entity}")
    services = {e.value["name"]: e for e in draft(reach=reach).services}
    assert services["rgw.lab"].value == {
        "name": "rgw.lab", "kind": "rgw", "node": None,
        "pid_file": "/run/ceph/ceph-client.rgw.lab.pid",
        "start": "radosgw -c /etc/ceph/ceph.conf -n client.rgw.lab"}
    assert services["osd.3"].value["pid_file"] == "/run/ceph/ceph-osd.3.pid"
    assert all(not e.todos for e in services.values())


def test_ssh_is_todo_unless_given():
    assert draft().ssh.value == {} and "SSH" in draft().ssh.todos[0]
    given = draft(reach=Reach(ssh_user="ops", ssh_port=2222, ssh_key="/k/id"))
    assert given.ssh.value == {"user": "ops", "port": 2222, "key_file": "/k/id"}
    assert given.ssh.todos == ()


def test_zone_type_names_the_crush_bucket_type_that_is_a_zone():
    tree = copy.deepcopy(CAPTURED["osd_tree"])
    # put zone1 in a row: root -> row1 -> zone1 -> node1, node2
    root = next(n for n in tree["nodes"] if n["type"] == "root")
    root["children"] = [c if c != -4 else -100 for c in root["children"]]
    tree["nodes"].append({"id": -100, "name": "row1", "type": "row", "children": [-4]})
    rows = {e.value["name"]: e.value.get("zone") for e in
            draft(facts(osd_tree=tree), zone_type="row").nodes}
    assert rows == {"node1": "row1", "node2": "row1", "node3": None, "node4": None}
    assert {e.value["name"]: e.value.get("zone") for e in
            draft(facts(osd_tree=tree)).nodes}["node1"] == "zone1"


def test_the_client_has_paths_only_and_the_mgr_prometheus_endpoint():
    client = draft().client.value
    assert client == {"conf": "/etc/ceph/ceph.conf",
                      "keyring": "/etc/ceph/ceph.client.admin.keyring", "pool": "faultline",
                      "prometheus": "http://127.0.0.1:9283/metrics"}
    hints = draft().client_hints
    assert "swift_api: {auth_url: http://127.0.0.1:7480/auth/1.0" in hints[1]


def test_without_a_conf_the_client_conf_is_todo_naming_the_monitors():
    result = ceph_draft(facts(), CephSource(None, LAB_HOST, None, "faultline"), Reach(), "p",
                        lambda ip: True)
    assert result.client.value["conf"] == "/etc/ceph/ceph.conf"
    assert "mon_host = 10.77.0.1:6789" in result.client.todos[0]


@pytest.mark.parametrize("addr, ip", [
    ("[v2:10.77.0.11:6800/2029,v1:10.77.0.11:6801/2029]", "10.77.0.11"),
    ("10.77.0.1:6789/0", "10.77.0.1"),
    ("10.77.0.1", "10.77.0.1"),
    ("10.77.0.1:0/2931410117", "10.77.0.1"),
    ("[v2:[fd00::1]:3300/0,v1:[fd00::1]:6789/0]", "fd00::1"),
])
def test_address_ip(addr, ip):
    assert address_ip(addr) == ip


@pytest.mark.parametrize("frontend, endpoint", [
    ("beast endpoint=127.0.0.1:7480", "http://127.0.0.1:7480"),
    ("beast port=8080", "http://10.0.0.5:8080"),
    ("beast ssl_endpoint=10.0.0.5:443 ssl_certificate=/c.pem", "https://10.0.0.5:443"),
    ("beast", None),
])
def test_rgw_endpoint_from_its_frontend_config(frontend, endpoint):
    rgw = {"addr": "10.0.0.5:0/1", "metadata": {"frontend_config#0": frontend}}
    assert rgw_endpoint(rgw) == endpoint
