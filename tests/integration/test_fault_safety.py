"""The safety of faults on the real labs: the blast-radius guard at the actions, healing a
run that was killed mid-fault, and the same faults over SSH on a cluster that is not a lab."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from catalogue import swift_fault_seen, wait_for
from chaoslib.exceptions import ActivityFailed
from sqlalchemy import create_engine, func, select
from sqlalchemy.orm import sessionmaker

from actions import power
from clusters.access import services
from clusters.access.inventory import load_cluster
from clusters.faults import firewall
from clusters.faults import power as node_power
from clusters.paths import default_inventory
from clusters.safety import fault_ledger
from probes import ceph as ceph_probes
from probes import swift as swift_probes
from service.store.fault_ledger import PgFaultLedger
from service.store.models import ClusterSample, Event, LoadSample, Run

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.lab


def test_guard_refuses_two_of_three_replicas_hosts_and_accepts_the_override(ceph_cluster,
                                                                            file_ledger):
    config = {"faultline_cluster": ceph_cluster.name}
    osd3 = ceph_cluster.service("osd.3")
    try:
        # node3 is zone2, node4 zone3: together they hold two of every PG's three copies
        power.power_off_node(node="node3", configuration=config)
        with pytest.raises(ActivityFailed) as refused:
            power.power_off_node(node="node4", configuration=config)
        message = str(refused.value)
        assert message.startswith("refused: power off node4: pool faultline: size 3, "
                                  "min_size 2, failure domain zone")
        assert "already down: osd.2" in message  # node3, though Ceph may not know yet
        # nothing changed: osd.3 still runs, and no fault was written down for node4
        assert services.pid_of(ceph_cluster, osd3) is not None
        assert not node_power.is_off(ceph_cluster, "node4")
        assert [e.key for e in fault_ledger.outstanding(ceph_cluster.name)] == ["power:node3"]
        # with the override it is injected, and the verdict says what was overridden
        result = power.power_off_node(node="node4", allow_unavailable=True,
                                      configuration=config)
        assert result["guard"]["allowed"] is False
        # node4 is off the network now: its pid file is read here, not over SSH
        assert services.pid_of(ceph_cluster, dataclasses.replace(osd3, node=None)) is None
    finally:
        for node in ("node3", "node4"):
            power.power_on_node(node=node, configuration=config)
    assert fault_ledger.outstanding(ceph_cluster.name) == []
    ceph_probes.wait_for_health_ok(timeout_s=300, require_all_up=True, configuration=config)


def _kill_and_wait_experiment(tmp_path: Path) -> Path:
    experiment = json.loads((REPO / "experiments" / "ceph-kill-osd.json").read_text())
    control = experiment["controls"][0]["provider"]["arguments"]
    control["workload"].update(ramp_s=2, baseline_s=5, objects_per_container=20)
    kill = experiment["method"][0]
    kill["pauses"] = {"after": 600}  # the run sits mid-fault until it is killed
    experiment["method"] = [kill]
    path = tmp_path / "kill-and-wait.json"
    path.write_text(json.dumps(experiment))
    return path


@pytest.mark.full  # 60 s; a killed run's fault restored by the heal code is in make test through
# the worker (test_hostile_orphans), and `faultline heal` itself in test_heal_cli
def test_heal_restores_a_fault_left_by_a_killed_run_and_marks_the_run_interrupted(
        ceph_cluster, database_url, env, tmp_path):
    ceph_probes.wait_for_health_ok(timeout_s=300, require_all_up=True,
                                   configuration={"faultline_cluster": "lab-ceph"})
    ledger = PgFaultLedger(sessionmaker(create_engine(database_url)))
    log = tmp_path / "run.log"
    run = subprocess.Popen(["faultline", "run", str(_kill_and_wait_experiment(tmp_path))],
                           env=env, stdout=subprocess.DEVNULL, stderr=log.open("w"),
                           start_new_session=True)

    def injected() -> bool:
        assert run.poll() is None, f"the run ended early: {log.read_text()[-3000:]}"
        return any(e.key == "daemon:osd.1" for e in ledger.outstanding("lab-ceph"))

    try:
        wait_for("the run to inject its fault", injected, 180, every_s=1)
        time.sleep(1)  # the kill itself follows the ledger entry
    finally:
        os.killpg(run.pid, signal.SIGKILL)  # as a crash, an OOM kill or a lost session would
        run.wait(30)
    [entry] = [e for e in ledger.outstanding("lab-ceph") if e.key == "daemon:osd.1"]
    assert entry.owner_alive() is False and entry.run_id is not None
    assert services.pid_of(ceph_cluster, ceph_cluster.service("osd.1")) is None

    listed = subprocess.run(["faultline", "faults", "--cluster", "lab-ceph", "--json"],
                            env=env, capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert "daemon:osd.1" in listed.stdout

    healed = subprocess.run(["faultline", "heal", "--cluster", "lab-ceph"], env=env,
                            capture_output=True, text=True, timeout=300)
    assert healed.returncode == 0, healed.stdout + healed.stderr
    assert "restored: osd.1 killed (SIGKILL) on node2" in healed.stdout
    assert ledger.outstanding("lab-ceph") == []
    # the heal found the run's process dead: its row is interrupted at its last sample
    assert f"run {entry.run_id} interrupted: its process (pid {run.pid} on " in healed.stderr
    with sessionmaker(create_engine(database_url))() as session:
        killed = session.get(Run, entry.run_id)
        last = max(session.execute(select(func.max(t.ts)).where(t.run_id == killed.id))
                   .scalar() for t in (LoadSample, ClusterSample))
        found = session.execute(select(Event.detail).where(
            Event.run_id == killed.id, Event.kind == "interrupted")).scalar_one()
    assert (killed.status, killed.owner_pid) == ("interrupted", run.pid)
    assert killed.ended_at.timestamp() == pytest.approx(last, abs=1e-3)
    # killed in the pause after its fault's action: the fault counts from when it began
    assert killed.fault_ts is not None and killed.figures["baseline_ops"] > 0
    assert found["found_by"] == "faultline heal"
    ceph_probes.wait_for_health_ok(timeout_s=300, require_all_up=True,
                                   configuration={"faultline_cluster": "lab-ceph"})


def test_power_off_over_ssh_on_a_cluster_that_is_not_a_lab(swift_cluster, tmp_path,
                                                           file_ledger):
    # the lab as a remote cluster: no namespace to pull a cable from, only SSH to its nodes
    raw = yaml.safe_load(Path(default_inventory()).read_text())["clusters"]["lab-swift"]
    raw = {**raw, "lab": False, "chaos": "allowed",
           "nodes": [{k: v for k, v in n.items() if k != "netns"} for n in raw["nodes"]]}
    inventory = tmp_path / "remote.yaml"
    inventory.write_text(yaml.safe_dump({"clusters": {"remote-swift": raw}}))
    remote = load_cluster(inventory, "remote-swift")
    config = {"faultline_cluster": "remote-swift", "faultline_inventory": str(inventory)}
    node1 = remote.node("node1")
    try:
        off = power.power_off_node(node="node1", configuration=config)
        assert off["how"] == "ssh"
        assert "object-server.node1" in off["killed"]
        assert firewall.is_isolated(node1)
        wait_for("Swift to see node1 gone", lambda: swift_fault_seen(remote), 60)
    finally:
        on = power.power_on_node(node="node1", configuration=config)
    assert on["how"] == "ssh" and "object-server.node1" in on["started"]
    assert not firewall.is_isolated(node1)
    swift_probes.wait_for_replication_caught_up(timeout_s=300, configuration=config)
