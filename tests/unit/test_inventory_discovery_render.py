"""A discovered inventory is written as commented YAML that today's loader reads, with one
`# TODO` line per thing to review, and option errors named all at once."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clusters.access.inventory import load_cluster
from clusters.discovery import TODO, Reach, inventory_text
from clusters.discovery.ceph import CephFacts, CephSource, ceph_draft
from clusters.discovery.reach import check_reach
from clusters.discovery.swift import SwiftSource, swift_draft
from clusters.exceptions import InventoryError

NOTHING_GIVEN = Reach()  # no option given
DATA = Path(__file__).parent / "data"
CEPH = {k: v for k, v in json.loads((DATA / "ceph_lab_facts.json").read_text()).items()
        if not k.startswith("_")}
RINGS = json.loads((DATA / "swift_lab_rings.json").read_text())["rings"]


def ceph(reach=NOTHING_GIVEN):
    return ceph_draft(CephFacts(**CEPH), CephSource("/etc/ceph/ceph.conf", None, None, "fl"),
                      reach, "prod-ceph", lambda ip: ip == "10.77.0.1")


def swift(reach=NOTHING_GIVEN):
    return swift_draft(RINGS, SwiftSource(swift_dir="/etc/swift"), reach, "prod-swift")


@pytest.mark.parametrize("make", [ceph, swift])
def test_the_text_loads_with_the_inventory_loader_as_discovered(make, tmp_path):
    draft = make()
    path = tmp_path / "inventory.yaml"
    path.write_text(inventory_text(draft, "faultline inventory discover"))
    cluster = load_cluster(path, draft.name)
    assert cluster.kind == draft.kind
    assert cluster.node_names == [e.value["name"] for e in draft.nodes]
    assert [s.name for s in cluster.services] == [e.value["name"] for e in draft.services]


@pytest.mark.parametrize("make", [ceph, swift])
def test_one_todo_comment_line_per_thing_to_review(make):
    draft = make()
    text = inventory_text(draft, "faultline inventory discover")
    assert text.count(f"# {TODO}:") == draft.todo_count() > 0
    assert f"{draft.todo_count()} thing(s) discovery could not learn are marked TODO" in (
        " ".join(line.lstrip("# ") for line in text.splitlines()[:5]))


def test_given_reach_leaves_only_what_no_option_covers():
    reach = Reach(ssh_user="root", ssh_key="/k", pid_file="/run/{name}.pid", start="x {id}")
    text = inventory_text(ceph(reach), "c", now=datetime(2026, 11, 25, tzinfo=UTC))
    todos = [line for line in text.splitlines() if f"# {TODO}:" in line]
    assert len(todos) == 2, todos  # the BMCs and the RGW's Swift/S3 credentials
    assert "at 2026-11-25T00:00:00Z" in text


@pytest.mark.parametrize("reach, message", [
    (Reach(unit="u", pid_file="p", start="s"),
     "--unit and --pid-file/--start exclude each other (a daemon is managed by systemd or by "
     "a pid file)"),
    (Reach(pid_file="/run/{name}.pid"),
     "--pid-file needs --start (how to start the daemon again after a kill)"),
    (Reach(start="go"), "--start needs --pid-file (how to find the daemon's process)"),
    (Reach(ssh_port=0), "--ssh-port must be 1..65535, not 0"),
    (Reach(unit="ceph-osd@{osd}"),
     "--unit 'ceph-osd@{osd}' names {osd}; known: {name}, {kind}, {id}, {entity}, {node}, "
     "{program}, {fsid}"),
    (Reach(mount="/srv/{name}"), "--mount '/srv/{name}' names {name}; known: {node}, {device}"),
    (Reach(block_device="/dev/{"),
     "--block-device '/dev/{' is not a valid template: Single '{' encountered in format "
     "string"),
    (Reach(unit="ceph-osd@{id:d}"),
     "--unit 'ceph-osd@{id:d}' is not a valid template: Unknown format code 'd' for object "
     "of type 'str'"),
])
def test_bad_options_are_one_message(reach, message):
    with pytest.raises(InventoryError) as error:
        check_reach(reach)
    assert str(error.value) == message
