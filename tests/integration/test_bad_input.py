"""Bad input gets one clear message, a non-zero exit, and changes nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select
from sqlalchemy.orm import Session

from clusters.ceph.admin import CephAdmin
from clusters.faults import link_faults
from service.store.models import Run

REPO = Path(__file__).resolve().parents[2]
EXPERIMENT = json.loads((REPO / "experiments" / "ceph-kill-osd.json").read_text())

pytestmark = pytest.mark.lab


def _with_workload(**changes) -> dict:
    experiment = json.loads(json.dumps(EXPERIMENT))
    experiment["controls"][0]["provider"]["arguments"]["workload"].update(changes)
    return experiment


def _with_control(**arguments) -> dict:
    experiment = json.loads(json.dumps(EXPERIMENT))
    experiment["controls"][0]["provider"]["arguments"].update(arguments)
    return experiment


def _from_file(name: str, **arguments) -> dict:
    """An experiment of the catalogue with its first action's arguments changed."""
    experiment = json.loads((REPO / "experiments" / f"{name}.json").read_text())
    experiment["method"][0]["provider"]["arguments"].update(arguments)
    return experiment


def _run_count(url: str) -> int:
    with Session(create_engine(url)) as session:
        return session.execute(select(func.count(Run.id))).scalar_one()


CASES = [
    ("not-json", "{ this is not json", [], "is not valid JSON"),
    ("no-method", json.dumps({"title": "t", "description": "d"}), [],
     "is not a valid experiment"),
    ("negative-rate", json.dumps(_with_workload(rate=-5)), [],
     "invalid workload: rate must be > 0, not -5"),
    ("bad-mix", json.dumps(_with_workload(mix={"read": 50, "write": 10})), [],
     "invalid workload: mix must sum to 100, not 60"),
    ("size-zero", json.dumps(_with_workload(object_size=0)), [],
     "invalid workload: object_size must be > 0, not 0"),
    ("abort-on-without-alertname", json.dumps(_with_control(abort_on=[{"grace_s": 30}])), [],
     "invalid abort_on: abort_on[0]: alertname is required"),
    ("baseline-policy-unknown",
     json.dumps(_with_control(baseline={"on_invalid": "ignore"})), [],
     "invalid baseline.on_invalid 'ignore': expected 'stop' or 'inject-anyway'"),
    ("unknown-cluster", json.dumps(EXPERIMENT), ["--cluster", "nope"],
     "unknown cluster 'nope'"),
    ("unknown-zone", json.dumps(_from_file("ceph-power-off-zone", zone="zone9")), [],
     "power-off-zone: cluster 'lab-ceph' has no zone 'zone9' (zones: zone1, zone2, zone3)"),
    ("unknown-disk", json.dumps(_from_file("ceph-fail-disk", device="osd.7")), [],
     "fail-disk: node node2 of lab-ceph has no disk 'osd.7' (disks: osd.1)"),
    ("unknown-node", json.dumps(_from_file("ceph-partition-node", node="node9")), [],
     "partition-node: cluster 'lab-ceph' has no node 'node9' (nodes: node1, node2, node3, "
     "node4)"),
    ("lossy-link-150", json.dumps(_from_file("ceph-lossy-link", loss_percent=150)), [],
     "lossy-link: loss_percent must be from 1 to 30, not 150"),
    ("lossy-link-zero-cap", json.dumps(_from_file("ceph-lossy-link", cap_mbit=0)), [],
     "lossy-link: cap_mbit must be from 0.1 to 10000 Mbit/s, not 0"),
    ("lossy-link-unknown-zone",
     json.dumps(_from_file("ceph-lossy-link", node="", zones=["zone1", "zone9"])), [],
     "lossy-link: cluster 'lab-ceph' has no zone 'zone9' (zones: zone1, zone2, zone3)"),
    ("lossy-link-latency",  # this kernel has no netem
     json.dumps(_from_file("ceph-lossy-link", delay_ms=50)), [],
     "lossy-link: added latency needs netem: node node2's kernel has no netem qdisc "
     "(`tc qdisc add ... netem` fails)"),
    ("fill-too-far", json.dumps(_from_file("ceph-fill-50", target=0.97)), [],
     "fill-cluster: fill target must be a fraction in (0, 0.9], not 0.97"),
    ("corrupt-missing-object",
     json.dumps(_from_file("ceph-corrupt-replica", object_name="no-such-object")), [],
     "corrupt-replica: object no-such-object does not exist in pool faultline of lab-ceph"),
]


# the unit tests give these messages already: on the lab in the full selection only
FULL_ONLY = {"lossy-link-zero-cap", "lossy-link-unknown-zone"}


@pytest.mark.parametrize(("name", "content", "args", "message"), [
    pytest.param(*c, id=c[0], marks=[pytest.mark.full] if c[0] in FULL_ONLY else [])
    for c in CASES])
def test_bad_input_is_refused_and_changes_nothing(name, content, args, message, tmp_path,
                                                  env, database_url, ceph_cluster):
    path = tmp_path / f"{name}.json"
    path.write_text(content)
    before = _run_count(database_url)
    done = subprocess.run(["faultline", "run", str(path), *args], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert message in done.stderr
    assert done.stderr.count("error:") == 1
    assert _run_count(database_url) == before
    with CephAdmin(ceph_cluster.client["conf"]) as admin:
        assert admin.state().num_up_osds == 4
    if name.startswith("lossy-link"):
        assert not any(link_faults.left_on(node) for node in ceph_cluster.nodes)


def test_missing_experiment_file_is_refused(env, tmp_path):
    done = subprocess.run(["faultline", "run", str(tmp_path / "absent.json")], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "does not exist" in done.stderr


def test_unknown_run_is_refused(env, database_url):
    done = subprocess.run(["faultline", "report", "999999"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "run 999999 does not exist" in done.stderr


def test_unreachable_node_is_refused_before_anything_starts(tmp_path, env, database_url,
                                                            ceph_cluster):
    import yaml

    from clusters.paths import default_inventory

    inventory = yaml.safe_load(default_inventory().read_text())
    spec = inventory["clusters"]["lab-ceph"]
    # node1's own address on a port where no sshd listens: traffic stays in the lab
    spec["nodes"][0]["ssh"] = {"port": 2222}
    bad = tmp_path / "inventory.yaml"
    bad.write_text(yaml.safe_dump(inventory))
    experiment = tmp_path / "exp.json"
    experiment.write_text(json.dumps(EXPERIMENT))
    before = _run_count(database_url)
    done = subprocess.run(["faultline", "run", str(experiment), "--inventory", str(bad)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "node node1 (10.77.0.11:2222) is unreachable" in done.stderr
    assert _run_count(database_url) == before
