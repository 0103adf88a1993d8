"""The current-release Swift lab's pure parts (lab/swift_current.py and its layout): the
inventory it writes, the files each node runs with, the rings' nodes, the BMC hook's choice
of lab, and the shim through which the host's Swift 2.30 tools read the lab's swift.conf."""

from __future__ import annotations

import configparser
import hashlib
import subprocess
from pathlib import Path

from clusters.access.inventory import parse_inventory
from clusters.swift.conf_shim import write_shim
from lab import bmc_hook, ceph_reef, rootfs, swift_current, swift_current_layout

PYTHON = "/usr/bin/python3"  # the one with Debian's python3-swift 2.30


def _conf(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    return parser


def test_the_lab_is_a_cluster_of_debian_units_with_the_pacific_labs_service_names(
        tmp_path: Path):
    lab = swift_current.lab_at(tmp_path)
    spec = swift_current.inventory_spec(lab)
    cluster = parse_inventory({"clusters": {"lab-swift-current": spec}})["lab-swift-current"]
    assert [(n.name, n.address, n.zone, n.netns) for n in cluster.nodes] == [
        ("node1", "10.80.0.11", "zone1", "flswc1"), ("node2", "10.80.0.12", "zone1", "flswc2"),
        ("node3", "10.80.0.13", "zone2", "flswc3"), ("node4", "10.80.0.14", "zone3", "flswc4"),
        ("proxy", "10.80.0.15", None, "flswc5")]
    assert all(n.power and n.power["type"] == "ipmi" for n in cluster.nodes)
    services = {s.name: (s.node, s.unit, s.supervisor) for s in cluster.services}
    assert len(services) == 4 * 11 + 1
    assert services["object-server.node1"] == ("node1", "swift-object.service", "systemd")
    assert services["object-replicator.node3"] == ("node3", "swift-object-replicator.service",
                                                   "systemd")
    assert services["proxy-server"] == ("proxy", "swift-proxy.service", "systemd")
    assert [(d.node, d.mount, d.swift_device) for d in cluster.disks][0] == (
        "node1", "/srv/node/d1", "d1")
    assert cluster.client["auth_url"] == "http://10.80.0.15:8080/auth/v1.0"
    assert cluster.release == "2.35" and cluster.lab


def test_each_node_runs_swift_as_its_user_on_its_own_address(tmp_path: Path):
    lab = swift_current.lab_at(tmp_path)
    files = swift_current_layout.node_files(lab, lab.nodes[2])
    assert sorted(files) == ["/etc/rsyncd.conf", "/etc/swift/account-server.conf",
                             "/etc/swift/container-server.conf", "/etc/swift/object-server.conf"]
    obj = _conf(files["/etc/swift/object-server.conf"])["DEFAULT"]
    assert (obj["bind_ip"], obj["user"], obj["devices"], obj["swift_dir"]) == (
        "10.80.0.13", "swift", "/srv/node", "/etc/swift")
    assert obj["mount_check"] == "true"  # the bound device is a mount point in the node
    assert "uid = swift" in files["/etc/rsyncd.conf"]
    proxy = swift_current_layout.node_files(lab, lab.proxy_node)
    conf = _conf(proxy["/etc/swift/proxy-server.conf"])
    assert (conf["DEFAULT"]["bind_ip"], conf["DEFAULT"]["bind_port"]) == ("10.80.0.15", "8080")
    assert conf["filter:cache"]["memcache_servers"] == "127.0.0.1:11211"
    assert "s3api" in conf["pipeline:main"]["pipeline"]


def test_the_rings_hold_the_storage_nodes_only_and_each_node_enables_its_own_units(
        tmp_path: Path):
    lab = swift_current.lab_at(tmp_path)
    assert [n.address for n in lab.nodes] == [f"10.80.0.{10 + k}" for k in range(1, 5)]
    assert lab.units_on(lab.proxy_node) == {"proxy-server": "swift-proxy.service"}
    assert "swift-proxy.service" not in lab.units_on(lab.nodes[0]).values()
    assert lab.support_units_on(lab.proxy_node) == ("memcached.service",)
    # the root enables none of the Swift units: a node runs only what the lab enables in it
    assert "swift-*" in rootfs.SWIFT.disabled
    assert rootfs.key(rootfs.SWIFT) != rootfs.key(rootfs.CEPH)


def test_the_bmc_hook_takes_the_lab_it_controls_and_defaults_to_reef(monkeypatch,
                                                                     tmp_path: Path, capsys):
    seen = []
    for module in (ceph_reef, swift_current):
        monkeypatch.setattr(module, "node_powered",
                            lambda home, node, m=module: seen.append((m.__name__, node)) or True)
    for lab in (ceph_reef.lab_at(tmp_path), swift_current.lab_at(tmp_path)):
        lab.run_dir.mkdir(parents=True, exist_ok=True)
    assert bmc_hook.main(["swift-current", str(tmp_path), "proxy", "get", "power"]) == 0
    assert bmc_hook.main([str(tmp_path), "node2", "get", "power"]) == 0
    assert seen == [("lab.swift_current", "proxy"), ("lab.ceph_reef", "node2")]
    assert capsys.readouterr().out == "power:1\npower:1\n"
    assert bmc_hook.main(["swift-current", str(tmp_path), "proxy", "set", "power", "2"]) == 2


def test_the_shim_hashes_names_with_the_named_swift_conf_whatever_etc_swift_holds(
        tmp_path: Path):
    # Debian's `swift` package puts a swift.conf with `changeme` in /etc/swift: Swift 2.30
    # reads it when imported, before the shim can name another file
    conf = tmp_path / "swift.conf"
    conf.write_text("[swift-hash]\nswift_hash_path_prefix = pre\n"
                    "swift_hash_path_suffix = suf\n")
    write_shim(tmp_path)
    done = subprocess.run(
        [PYTHON, "-c", "from swift.common.utils import hash_path; "
                       "print(hash_path('AUTH_test', 'c', 'o'))"],
        env={"SWIFT_CONF_FILE": str(conf), "PYTHONPATH": str(tmp_path)},
        capture_output=True, text=True, timeout=60, check=True)
    expected = hashlib.md5(b"pre/AUTH_test/c/osuf").hexdigest()
    assert done.stdout.strip() == expected, done.stderr
