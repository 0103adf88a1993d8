"""The current-release Swift lab (lab/swift_current.py: Swift 2.35 under Debian's systemd
units in nspawn containers) and the kill-process fault's two intents on its real units: a
`down` object server stays down a minute until its restore (its unit masked: systemd's
Restart=on-failure would have it back in 100 ms), a `crash` is restarted by systemd and the
run reports when. `down` leaves nothing behind, and a warm start only boots the nodes.

The lab is brought up for this module and, if the module started it, taken down and purged
after."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from reef_lab import assert_nothing_left, nodes_running
from short_runs import shortened
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session
from streams import lab_changes

from actions.recovery_tuning import restore_swift_replication, set_swift_replication
from clusters.access.inventory import Cluster, load_cluster
from clusters.faults import supervision
from clusters.paths import default_inventory
from clusters.swift import replicator_changes
from clusters.swift.admin import SwiftAdmin
from lab import swift_current
from service.store.models import Run

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
EXPERIMENT = REPO / "experiments" / "swift-kill-object-server.json"
SERVICE = "object-server.node1"
# the catalogue's 20 ops/s did not hold in one CI run, both streams and the Reef lab busy
# beside this lab's 45 daemons (18.9 achieved, p50 87 to 381 ms): the intents are what is
# tested here, not the lab's capacity
RATE = 8


@pytest.fixture(scope="module")
def current_cluster():
    with lab_changes():
        was_up = nodes_running(swift_current)
        info = swift_current.up()
    print(f"\ncurrent swift lab up: {info}")
    yield load_cluster(default_inventory(), swift_current.CLUSTER_NAME)
    if not was_up:
        with lab_changes():
            left = swift_current.down(purge=True)
        assert_nothing_left(left, swift_current)


def _unit(cluster: Cluster, name: str = SERVICE) -> supervision.UnitState:
    service = cluster.service(name)
    return supervision.unit_state(cluster, service, supervision.unit_of(cluster, service))


def _run(path: Path, env: dict) -> tuple[subprocess.CompletedProcess, Run]:
    done = subprocess.run(["faultline", "run", str(path)],
                          env={**env, "FAULTLINE_CLUSTER": swift_current.CLUSTER_NAME},
                          cwd=path.parent, capture_output=True, text=True, timeout=900)
    with Session(create_engine(env["DATABASE_URL"])) as session:
        run = session.execute(select(Run).order_by(Run.id.desc()).limit(1)).scalar_one()
        run.events  # noqa: B018 - load them before the session closes
    return done, run


def _with_intent(path: Path, intent: str) -> Path:
    experiment = json.loads(path.read_text())
    step = next(a for a in experiment["method"] if a["name"] == "kill-object-server")
    step["provider"]["arguments"]["intent"] = intent
    path.write_text(json.dumps(experiment))
    return path


def test_up_answers_with_each_server_under_its_stock_unit(current_cluster):
    with SwiftAdmin(current_cluster) as admin:
        version = admin.version()
        state = admin.state()
    assert version is not None and version.startswith("swift 2.35."), version
    assert state.proxy_up and all(all(n.servers_up.values()) for n in state.nodes), state
    # the host's tools hash names as the servers do (clusters/swift/conf_shim.py): every
    # copy of the dispersion sample is found
    assert state.dispersion.object_found == state.dispersion.object_expected > 0
    assert state.dispersion.container_found == state.dispersion.container_expected > 0
    for service in current_cluster.services:
        assert service.supervisor == "systemd", service
        assert _unit(current_cluster, service.name).running, service.name
    policy = supervision.services.run(
        current_cluster, current_cluster.service(SERVICE),
        "systemctl show -p Restart,User swift-object.service").stdout.split()
    assert policy == ["Restart=on-failure", "User=swift"]


def test_a_down_run_keeps_the_object_server_down_a_minute(current_cluster, env, tmp_path):
    # the catalogue's experiment as written (kill_server's default intent: down), held 60 s
    before = _unit(current_cluster)
    path = shortened(EXPERIMENT, tmp_path, fault_hold_s=60, rate=RATE)
    done, run = _run(path, env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    f = run.figures
    assert run.status == "completed", (run.status, run.error)
    assert f["restore_at_s"] >= 60 and f["fault_intent"]["kept"] is True
    [outcome] = [o for o in f["fault_intent"]["daemons"] if o["intent"] == "down"]
    assert (outcome["supervisor"], outcome["started_by_restore"]) == ("systemd", True)
    assert f["time_to_full_redundancy_after_restore_s"] is not None, f["reasons"]
    assert f["lost_objects"] == 0 and f["verified_objects"] > 0
    assert f["cluster_release"] == swift_current.RELEASE
    # systemd never restarted it: the restore started it after the hold (an explicit start
    # resets NRestarts; an automatic restart in between would have left it at 1 or more)
    after = _unit(current_cluster)
    assert after.n_restarts == 0 and after.main_pid != before.main_pid
    assert "object-server.node1 kept down (systemd unit masked)" in done.stdout
    # the settings it ran under, from the files Debian's units start the daemons with
    assert run.recovery_settings["release"].startswith("swift 2.35.")
    assert run.recovery_settings["errors"] == []
    wheres = {s["where"] for s in run.recovery_settings["settings"]}
    assert any(w.startswith("node1:/etc/swift/object-server.conf") for w in wheres), wheres
    assert "proxy:/etc/swift/proxy-server.conf" in wheres


def test_a_crash_run_reports_when_systemd_brought_the_server_back(current_cluster, env,
                                                                  tmp_path):
    before = _unit(current_cluster)
    path = _with_intent(shortened(EXPERIMENT, tmp_path, rate=RATE), "crash")
    done, run = _run(path, env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert run.status == "completed", (run.status, run.error)
    [restarted] = [e for e in run.events if e.kind == "daemon_restarted"]
    assert restarted.detail["daemon"] == SERVICE and restarted.detail["restarts"] == 1
    # Debian's unit leaves RestartSec at systemd's 100 ms: back within seconds
    assert 0 <= restarted.detail["after_s"] <= 10
    assert run.figures["fault_intent"]["kept"] is True
    assert run.figures["lost_objects"] == 0
    assert _unit(current_cluster).n_restarts == before.n_restarts + 1


def _object_server_confs(cluster: Cluster) -> dict[str, str]:
    return {s.name: supervision.services.run(cluster, s, "cat /etc/swift/object-server.conf"
                                             ).stdout
            for s in replicator_changes.replicators(cluster)}


def test_replicator_settings_take_and_the_restore_puts_back_each_file(current_cluster):
    configuration = {"faultline_cluster": swift_current.CLUSTER_NAME}
    files = _object_server_confs(current_cluster)
    pids = {name: _unit(current_cluster, name).main_pid for name in files}
    done = set_swift_replication({"concurrency": 1, "handoffs_first": True}, configuration)
    assert set(done["replicators"]) == set(files)
    assert all(v == {"concurrency": "1", "handoffs_first": "true"}
               for v in done["replicators"].values()), done
    # the lab's files say concurrency 4 and nothing of handoffs_first
    assert all(v == {"concurrency": "4", "handoffs_first": None}
               for v in done["previous"].values()), done
    for name in files:  # restarted: Swift reads its file only at start
        assert _unit(current_cluster, name).main_pid != pids[name], name
    section = _object_server_confs(current_cluster)["object-replicator.node2"].split(
        "[object-replicator]\n")[1].split("\n[")[0]
    assert section.startswith("handoffs_first = true\n") and "\nconcurrency = 1\n" in section
    restore_swift_replication(configuration)
    assert _object_server_confs(current_cluster) == files
    assert replicator_changes.running(current_cluster)["object-replicator.node4"] == {
        "concurrency": "4", "handoffs_first": "false"}
    assert restore_swift_replication(configuration) == {"restored": {}}  # nothing outstanding


def test_down_leaves_nothing_behind_and_a_warm_up_only_boots(current_cluster):
    assert_nothing_left(swift_current.down(), swift_current)
    info = swift_current.up()
    print(f"\ncurrent swift lab warm up: first PUT/GET after "
          f"{info['seconds_to_first_put_get']} s")
    assert info["mode"] == "warm" and info["rootfs_build_s"] is None
