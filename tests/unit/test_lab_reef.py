"""The production-like lab's pure parts: the root filesystem's cache key and mirrors
(lab/rootfs.py), the nspawn command line (lab/nspawn.py), and the Reef lab's inventory and
ceph.conf (lab/ceph_reef.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from clusters.access.inventory import parse_inventory
from clusters.exceptions import RemoteCommandFailed
from clusters.faults import power
from lab import ceph_reef, nspawn, rootfs
from service.cli.group import main


def test_the_roots_key_changes_with_its_package_list_only():
    recipe = rootfs.Recipe
    assert rootfs.key(recipe(("ceph-osd", "ceph-mon"))) == rootfs.key(recipe(("ceph-mon",
                                                                              "ceph-osd")))
    assert rootfs.key(recipe(("ceph-osd",))) != rootfs.key(recipe(("ceph-osd", "swift-object")))
    assert rootfs.key(rootfs.CEPH) != rootfs.key(rootfs.SWIFT)
    assert rootfs.path().name == rootfs.key(rootfs.CEPH)


def test_mirrors_come_from_the_machines_deb822_sources(tmp_path: Path):
    (tmp_path / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm\n\n"
        "Types: deb\nURIs: http://mirror.example/debian-security/\nSuites: bookworm-security\n")
    assert rootfs.mirrors(tmp_path) == ("http://mirror.example/debian",
                                        "http://mirror.example/debian-security")


def test_mirrors_come_from_one_line_sources_and_default_to_deb_debian_org(tmp_path: Path):
    assert rootfs.mirrors(tmp_path) == ("http://deb.debian.org/debian",
                                        "http://deb.debian.org/debian-security")
    (tmp_path / "a.list").write_text("deb [arch=amd64] http://m.example/debian bookworm main\n")
    assert rootfs.mirrors(tmp_path)[0] == "http://m.example/debian"


def test_mgr_util_imports_bcrypt_only_where_it_hashes(tmp_path: Path):
    mgr_util = tmp_path / "mgr_util.py"
    mgr_util.write_text("import os\nimport bcrypt\nimport cephfs\n\n"
                        "def password_hash(password, salt_password=None):\n"
                        "    if not password:\n        return None\n"
                        "    return bcrypt.hashpw(password, bcrypt.gensalt())\n")
    rootfs._import_bcrypt_lazily(mgr_util)
    text = mgr_util.read_text()
    assert "\nimport bcrypt\n" not in text.split("def ")[0]
    assert "        return None\n    import bcrypt\n    return bcrypt.hashpw" in text


def test_a_node_boots_systemd_in_the_labs_namespace_with_its_own_unit_and_no_machined():
    node = nspawn.NodeContainer("node2", Path("/lab/nodes/node2"), "flreef2", Path("/lab/run"),
                                Path("/lab/log"))
    argv = nspawn.argv(node, [nspawn.Bind(Path("/lab/ceph.conf"), "/etc/ceph/ceph.conf", True)])
    assert argv[:4] == ["systemd-nspawn", "-b", "-D", "/lab/nodes/node2/root"]
    for flag in ("--register=no", "--keep-unit", "--network-namespace-path=/run/netns/flreef2",
                 "--hostname=node2", "--bind-ro=/lab/ceph.conf:/etc/ceph/ceph.conf"):
        assert flag in argv
    assert [str(c) for c in node.cgroups()] == ["/sys/fs/cgroup/systemd/flreef2",
                                                "/sys/fs/cgroup/unified/flreef2"]


def test_the_reef_lab_is_a_cluster_of_systemd_units_on_its_own_subnet(tmp_path: Path):
    lab = ceph_reef.lab_at(tmp_path)
    spec = ceph_reef.inventory_spec(lab)
    cluster = parse_inventory({"clusters": {"lab-ceph-reef": spec}})["lab-ceph-reef"]
    assert [(n.name, n.address, n.zone, n.netns) for n in cluster.nodes] == [
        ("node1", "10.79.0.11", "zone1", "flreef1"), ("node2", "10.79.0.12", "zone1", "flreef2"),
        ("node3", "10.79.0.13", "zone2", "flreef3"), ("node4", "10.79.0.14", "zone3", "flreef4")]
    assert [(s.name, s.node, s.unit, s.supervisor) for s in cluster.services] == [
        ("mon.a", "node1", "ceph-mon@a.service", "systemd"),
        ("mgr.x", "node1", "ceph-mgr@x.service", "systemd"),
        ("osd.0", "node1", "ceph-osd@0.service", "systemd"),
        ("osd.1", "node2", "ceph-osd@1.service", "systemd"),
        ("osd.2", "node3", "ceph-osd@2.service", "systemd"),
        ("osd.3", "node4", "ceph-osd@3.service", "systemd")]
    assert cluster.release == "reef" and cluster.lab  # kept with each run's figures


def test_the_reef_conf_places_each_osd_in_its_zone_and_keeps_broken_mgr_modules_out(
        tmp_path: Path):
    text = ceph_reef.conf_text(ceph_reef.lab_at(tmp_path), "f-s-i-d")
    assert "mon_host = [v2:10.79.0.11:3300,v1:10.79.0.11:6789]" in text
    assert "[osd.2]\ncrush_location = root=default zone=zone2 host=node3\n" in text
    assert "mgr_disabled_modules = test_orchestrator" in text
    assert "mon_osd_down_out_interval = 30" in text  # the Pacific lab's tuning


def test_there_is_no_swift_lab_on_reef():
    result = CliRunner().invoke(main, ["lab", "up", "swift", "--release", "reef"])
    assert result.exit_code == 2
    assert result.output.strip() == ("error: there is no swift lab on reef (reef: ceph only; "
                                     "current: both)")


def test_a_reef_node_without_its_bmc_is_not_powered_off_through_its_namespace(
        tmp_path: Path):
    # its daemons run under systemd in the container: killing pid files on this machine would
    # reach none of them, and systemd would restart what it lost; it needs a BMC (the lab
    # gives each node one: without it, the node is refused)
    spec = ceph_reef.inventory_spec(ceph_reef.lab_at(tmp_path))
    spec["nodes"] = [{k: v for k, v in node.items() if k != "power"} for node in spec["nodes"]]
    cluster = parse_inventory({"clusters": {"lab-ceph-reef": spec}})["lab-ceph-reef"]
    with pytest.raises(RemoteCommandFailed) as refused:
        power.power_off(cluster, "node2")
    assert str(refused.value) == (
        "cannot power off node node2 through its namespace: osd.1 run under a supervisor "
        "there (give the node a BMC, power type ipmi)")
