"""A node out of memory on both real labs: the hog fills one node's memory cgroup, the
kernel's OOM killer takes daemons of that node only, `faultline heal` (what is left after a
SIGKILL of the run) ends the hog and starts them again, and nothing is left behind."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from short_runs import short_experiment
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from actions import memory
from clusters.access import services
from clusters.faults import memory_hog
from clusters.paths import default_inventory
from clusters.safety import fault_ledger
from probes import ceph as ceph_probes
from probes import swift as swift_probes
from service.store.models import Run

pytestmark = pytest.mark.lab


def _oom_kills(node) -> int:
    text = open(f"{memory_hog.node_cgroup(node)}/memory.oom_control").read()
    return int(text.split("oom_kill ")[1].split()[0])


def _pids(cluster, names) -> dict[str, int | None]:
    return {name: services.pid_of(cluster, cluster.service(name)) for name in names}


def _size_to_take_some(node) -> int:
    """Enough that ~150 MiB of the node's daemons must go, within the hog's bounds (a
    fresh OSD holds 21-27 MiB: then all the node allows, which leaves it no room)."""
    cgroup = memory_hog.node_cgroup(node)
    limit, used = (int(open(f"{cgroup}/memory.{f}").read()) >> 20
                   for f in ("limit_in_bytes", "usage_in_bytes"))
    return min(limit - memory_hog.RESERVE_MIB, limit - used + 150)


def _exhaust_then_heal(cluster, node_name: str, invoke) -> dict:
    config = {"faultline_cluster": cluster.name}
    node = cluster.node(node_name)
    others = [n for n in cluster.nodes if n.name != node_name]
    elsewhere = [s.name for n in others for s in cluster.services_on(n.name)]
    pids_elsewhere, kills_elsewhere = _pids(cluster, elsewhere), [_oom_kills(n) for n in others]
    try:
        result = memory.exhaust_memory(node=node_name, size_mib=_size_to_take_some(node),
                                       timeout_s=120, wait_s=20, configuration=config)
        # the OOM killer acted in this node's cgroup and took some of its daemons only
        assert result["oom_kills"] >= 1, result
        assert result["oom_killed"], result
        assert set(result["oom_killed"]) <= {s.name for s in cluster.services_on(node_name)}
        assert _pids(cluster, elsewhere) == pids_elsewhere
        assert [_oom_kills(n) for n in others] == kills_elsewhere
        mount = memory_hog.mount_of(node.netns)
        assert f" {mount} " in open("/proc/mounts").read()

        # what `faultline heal` does for a run SIGKILLed while the node was out of memory
        healed = invoke("heal", "--cluster", cluster.name, "--inventory",
                        str(default_inventory()))

        assert healed.exit_code == 0, healed.output
        back = _pids(cluster, [s.name for s in cluster.services_on(node_name)])
        assert all(back.values()), back
        assert not os.path.exists(f"{memory_hog.node_cgroup(node)}/{memory_hog.HOG_CGROUP}")
        assert f" {mount} " not in open("/proc/mounts").read()
        assert not os.path.exists(mount)
        assert fault_ledger.outstanding(cluster.name) == []
        return result
    finally:
        memory.stop_memory_hog(node=node_name, configuration=config)  # idempotent


def test_ceph_a_node_out_of_memory_loses_its_osd_and_heal_brings_it_back(
        ceph_cluster, file_ledger, invoke):
    result = _exhaust_then_heal(ceph_cluster, "node2", invoke)

    assert result["oom_killed"] == ["osd.1"]
    ceph_probes.wait_for_health_ok(timeout_s=180, require_all_up=True,
                                   configuration={"faultline_cluster": ceph_cluster.name})


@pytest.mark.full  # 72 s (the Ceph case: 30 s); both together exceed make test's share
def test_swift_a_node_out_of_memory_loses_servers_and_heal_brings_them_back(
        swift_cluster, file_ledger, invoke):
    _exhaust_then_heal(swift_cluster, "node3", invoke)

    assert swift_probes.healthy(settle_s=120,
                                configuration={"faultline_cluster": swift_cluster.name})


def _memory_action(func: str, **arguments) -> dict:
    return {"type": "action", "name": func.replace("_", "-"), "provider": {
        "type": "python", "module": "actions.memory", "func": func, "arguments": arguments}}


def test_a_hog_the_node_holds_beside_its_daemons_is_a_fault_that_did_not_take(
        ceph_cluster, env, tmp_path):
    # 16 MiB fits in node2's cgroup beside osd.1: no OOM kill, so nothing was tested
    hog = _memory_action("exhaust_memory", node="node2", size_mib=16, wait_s=2)
    stop = _memory_action("stop_memory_hog", node="node2")
    path = tmp_path / "no-oom.json"
    path.write_text(json.dumps(short_experiment("a hog too small to take anything",
                                                [hog, stop], [stop], restore="stop-memory-hog")))

    done = subprocess.run(["faultline", "run", str(path)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)

    assert done.returncode != 0, done.stdout[-2000:]
    with Session(create_engine(env["DATABASE_URL"])) as session:
        run = session.execute(select(Run).order_by(Run.id.desc()).limit(1)).scalar_one()
    assert run.status == "invalid"
    assert run.error.startswith("the fault did not take: the OOM killer took nothing on node2 "
                                "within 2 s: its daemons ("), run.error
    assert fault_ledger.outstanding(ceph_cluster.name) == []
    node2 = ceph_cluster.node("node2")
    assert not os.path.exists(f"{memory_hog.node_cgroup(node2)}/{memory_hog.HOG_CGROUP}")
    assert memory_hog.MOUNTS not in open("/proc/mounts").read()
