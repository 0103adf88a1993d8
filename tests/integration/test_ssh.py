"""The SSH path against the lab nodes' real sshd: commands land in the node, keys are checked."""

from __future__ import annotations

import dataclasses
import subprocess

import pytest

from clusters.access.inventory import Node
from clusters.access.ssh import NodeShell, run_on_node
from clusters.exceptions import HostKeyMismatch, NodeUnreachable

pytestmark = pytest.mark.lab


def test_command_runs_inside_the_node(ceph_cluster):
    node = ceph_cluster.node("node2")
    result = run_on_node(node, "ip -4 -o addr show dev eth0")
    assert f"inet {node.address}/" in result.stdout


def test_changed_host_key_is_refused(ceph_cluster, tmp_path):
    node = ceph_cluster.node("node1")
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    fake = tmp_path / "known_hosts"
    fake.write_text(f"{node.address} {(tmp_path / 'other_key.pub').read_text().split(' ', 2)[0]} "
                    f"{(tmp_path / 'other_key.pub').read_text().split(' ')[1]}\n")
    forged = dataclasses.replace(node, ssh=dataclasses.replace(node.ssh, known_hosts=str(fake)))
    with pytest.raises(HostKeyMismatch, match="does not match"):
        run_on_node(forged, "true")


def test_unknown_host_key_is_refused(ceph_cluster, tmp_path):
    node = ceph_cluster.node("node1")
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    stranger = dataclasses.replace(node,
                                   ssh=dataclasses.replace(node.ssh, known_hosts=str(empty)))
    with pytest.raises(HostKeyMismatch, match="is not in"):
        run_on_node(stranger, "true")


def test_unreachable_node_says_so(ceph_cluster):
    # A lab node's own address, on a port where no sshd listens: traffic stays in the lab.
    node1 = ceph_cluster.node("node1")
    ghost = Node(name="ghost", address=node1.address,
                 ssh=dataclasses.replace(node1.ssh, port=2222))
    with pytest.raises(NodeUnreachable, match="ghost"):
        with NodeShell(ghost, connect_timeout=2):
            pass
