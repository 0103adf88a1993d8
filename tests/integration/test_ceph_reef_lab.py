"""The production-like Ceph lab (lab/ceph_reef.py: Ceph 18 under Debian's systemd units in
nspawn containers) and a process fault's intent on it: a `crash` is restarted by systemd
and reported, a `down` stays down past RestartSec until its restore, even when the run that
injected it is SIGKILLed and `faultline heal` has to undo it; `down` leaves nothing behind.

The lab is brought up once for the module (its root filesystem built first if missing) and,
if this module started it, taken down and purged after."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from reef_lab import assert_nothing_left
from short_runs import short_experiment, shortened
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from actions.ceph import kill_osd, start_osd
from clusters.access.inventory import Cluster
from clusters.ceph.admin import CephAdmin
from clusters.faults import supervision
from lab import ceph_reef, ceph_setup
from service.store.models import Run

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
CONFIGURATION = {"faultline_cluster": ceph_reef.CLUSTER_NAME}
RESTART_SEC = 10  # Debian's ceph-osd@.service


def _unit(cluster: Cluster, name: str) -> supervision.UnitState:
    service = cluster.service(name)
    return supervision.unit_state(cluster, service, supervision.unit_of(cluster, service))


def _wait_healthy(cluster: Cluster, timeout: float = 120.0) -> None:
    with CephAdmin(cluster.client["conf"]) as admin:
        ceph_setup.wait_healthy(admin, timeout)


def _num_up_osds(cluster: Cluster) -> int:
    with CephAdmin(cluster.client["conf"]) as admin:
        return admin.state().num_up_osds


def test_up_reaches_health_ok_with_each_daemon_under_its_stock_unit(reef_cluster):
    with CephAdmin(reef_cluster.client["conf"]) as admin:
        state = admin.state()
        versions = admin.command("versions")
    assert state.health == "HEALTH_OK"
    assert state.num_osds == state.num_up_osds == state.num_in_osds == 4
    assert list(versions["overall"]) == [next(iter(versions["overall"]))]
    assert "18.2." in next(iter(versions["overall"])) and "reef" in next(iter(versions["overall"]))
    for service in reef_cluster.services:
        assert _unit(reef_cluster, service.name).running, service.name
    osd = reef_cluster.service("osd.1")
    policy = supervision.services.run(reef_cluster, osd, "systemctl show -p Restart,RestartUSec "
                                                         "ceph-osd@1.service").stdout.split()
    assert policy == ["Restart=on-failure", "RestartUSec=10s"]


def test_a_crash_is_restarted_by_systemd_and_the_restore_says_when(reef_cluster):
    before = _unit(reef_cluster, "osd.1")
    killed = kill_osd(osd_id=1, intent="crash", configuration=CONFIGURATION)
    assert (killed["intent"], killed["pid"], killed["unit"]) == ("crash", before.main_pid,
                                                                   "ceph-osd@1.service")
    # systemd brings it back after RestartSec; the restore waits for it and reports it
    restored = start_osd(osd_id=1, configuration=CONFIGURATION)
    [outcome] = restored["daemons"]
    print(f"\ncrash: {outcome}")
    assert restored["started"] == [] and restored["deviations"] == []
    assert outcome["restarts"] == 1
    assert RESTART_SEC - 1 <= outcome["came_back_after_s"] <= RESTART_SEC + 20
    after = _unit(reef_cluster, "osd.1")
    assert after.n_restarts == before.n_restarts + 1 and after.main_pid != before.main_pid
    _wait_healthy(reef_cluster)


def test_a_down_osd_brought_back_behind_the_faults_back_is_a_deviation(reef_cluster):
    kill_osd(osd_id=3, intent="down", configuration=CONFIGURATION)
    # an operator (or another supervisor) unmasks and starts it during the fault
    supervision.services.run(reef_cluster, reef_cluster.service("osd.3"),
                             "systemctl unmask --runtime ceph-osd@3 && systemctl start ceph-osd@3")
    restored = start_osd(osd_id=3, configuration=CONFIGURATION)
    [deviation] = restored["deviations"]
    assert deviation.startswith("osd.3 was brought back while the fault wanted it down "
                                "(running as PID ")
    _wait_healthy(reef_cluster)


KILL_AND_HANG = """
import sys
from actions.ceph import kill_osd
print(kill_osd(osd_id=2, configuration={"faultline_cluster": "lab-ceph-reef"})["intent"],
      flush=True)
sys.stdin.read()  # until the test SIGKILLs this run
"""


def test_a_down_osd_stays_down_past_restart_sec_and_heal_undoes_it_after_a_sigkill(
        reef_cluster, env):
    before = _unit(reef_cluster, "osd.2")
    run = subprocess.Popen([sys.executable, "-c", KILL_AND_HANG], env=env, cwd=REPO,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert run.stdout.readline().strip() == "down"  # the default intent
    finally:
        os.kill(run.pid, signal.SIGKILL)  # the run dies with its fault in place
        run.wait()
    time.sleep(RESTART_SEC + 5)  # systemd would have restarted a crashed one by now
    state = _unit(reef_cluster, "osd.2")
    assert (state.running, state.load_state) == (False, "masked"), state
    assert state.n_restarts == before.n_restarts
    assert _num_up_osds(reef_cluster) == 3
    healed = subprocess.run(["faultline", "heal", "--cluster", ceph_reef.CLUSTER_NAME],
                            env=env, capture_output=True, text=True, timeout=300)
    assert healed.returncode == 0, healed.stdout + healed.stderr
    assert ("restored: osd.2 killed (SIGKILL) and kept down (ceph-osd@2.service masked) "
            "on node3") in healed.stdout
    state = _unit(reef_cluster, "osd.2")
    assert (state.running, state.load_state) == (True, "loaded"), state
    _wait_healthy(reef_cluster)


def _reef_env(env: dict) -> dict:
    return {**env, "FAULTLINE_CLUSTER": ceph_reef.CLUSTER_NAME}


def _run(path: Path, env: dict) -> tuple[subprocess.CompletedProcess, Run]:
    done = subprocess.run(["faultline", "run", str(path)], env=_reef_env(env), cwd=path.parent,
                          capture_output=True, text=True, timeout=900)
    with Session(create_engine(env["DATABASE_URL"])) as session:
        run = session.execute(select(Run).order_by(Run.id.desc()).limit(1)).scalar_one()
        run.events  # noqa: B018 - load them before the session closes
    return done, run


def _kill(intent: str) -> dict:
    return {"type": "action", "name": "kill-osd", "provider": {
        "type": "python", "module": "actions.ceph", "func": "kill_osd",
        "arguments": {"osd_id": 1, "intent": intent}}}


START_OSD = {"type": "action", "name": "start-osd", "provider": {
    "type": "python", "module": "actions.ceph", "func": "start_osd",
    "arguments": {"osd_id": 1}}}


def _bring_back_by_hand(cluster: Cluster, timeout_s: float = 300) -> threading.Thread:
    """An operator who unmasks and starts the OSD in the middle of the fault: from this test,
    since the allow-list keeps a `process` step out of the experiment itself."""
    node, ssh = cluster.node("node2"), cluster.node("node2").ssh
    command = ["ssh", "-i", ssh.key_file, "-o", f"UserKnownHostsFile={ssh.known_hosts}",
               "-o", "BatchMode=yes", f"root@{node.address}",
               "systemctl unmask --runtime ceph-osd@1 && systemctl start ceph-osd@1"]

    def operator() -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            state = _unit(cluster, "osd.1")
            if state.load_state == "masked" and not state.running:  # the fault is in place
                subprocess.run(command, capture_output=True, timeout=60, check=True)
                return
            time.sleep(0.5)

    thread = threading.Thread(target=operator, daemon=True)
    thread.start()
    return thread


def test_a_run_whose_down_osd_came_back_is_invalid_not_successful(reef_cluster, env,
                                                                  tmp_path):
    path = tmp_path / "down-undone.json"
    # the operator steps in within a second of the mask (_bring_back_by_hand) and the
    # restore watch sees the daemon back at the restore: 10 s is room enough
    held = {**_kill("down"), "pauses": {"after": 10}}
    path.write_text(json.dumps(short_experiment(
        "down, undone by an operator", [held, START_OSD], [START_OSD], restore="start-osd")))
    operator = _bring_back_by_hand(reef_cluster)
    done, run = _run(path, env)
    operator.join(timeout=60)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert run.status == "invalid"
    assert run.error.startswith("the fault's intent was not kept: osd.1 was brought back "
                                "while the fault wanted it down (running as PID ")
    assert run.figures["fault_intent"]["kept"] is False
    assert run.figures["cluster_release"] == "reef"
    report = subprocess.run(["faultline", "report", str(run.id)], env=env, capture_output=True,
                            text=True, timeout=60)
    assert f"cluster {ceph_reef.CLUSTER_NAME} (ceph, reef), status invalid" in report.stdout, \
        report.stdout + report.stderr
    assert "intent_not_kept" in [e.kind for e in run.events]
    _wait_healthy(reef_cluster)


@pytest.mark.full
def test_a_down_run_keeps_the_osd_down_a_minute_while_ceph_re_replicates(reef_cluster, env,
                                                                        tmp_path):
    # the catalogue's experiment as written (kill_osd's default intent: down), held 60 s
    before = _unit(reef_cluster, "osd.1")
    path = shortened(REPO / "experiments" / "ceph-kill-osd.json", tmp_path, fault_hold_s=60)
    done, run = _run(path, env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    f = run.figures
    assert run.status == "completed", (run.status, run.error)
    assert f["restore_at_s"] >= 60 and f["fault_intent"]["kept"] is True
    assert f["time_to_full_redundancy_s"] is not None, f["reasons"]
    assert f["lost_objects"] == 0
    # the restore's outcome (the rollback's, for every OSD, finds nothing to undo)
    [outcome] = [o for o in f["fault_intent"]["daemons"] if o["intent"] == "down"]
    assert (outcome["intent"], outcome["started_by_restore"]) == ("down", True)
    # systemd never restarted it: the restore started it after the hold
    assert _unit(reef_cluster, "osd.1").n_restarts == before.n_restarts == 0


@pytest.mark.full
def test_a_crash_run_reports_when_systemd_brought_the_osd_back(reef_cluster, env, tmp_path):
    path = tmp_path / "crash.json"
    path.write_text(json.dumps(short_experiment(
        "crash osd.1 under systemd", [_kill("crash"), START_OSD], [START_OSD],
        restore="start-osd")))
    done, run = _run(path, env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert run.status == "completed", (run.status, run.error)
    [restarted] = [e for e in run.events if e.kind == "daemon_restarted"]
    assert restarted.detail["daemon"] == "osd.1" and restarted.detail["restarts"] == 1
    assert RESTART_SEC - 1 <= restarted.detail["after_s"] <= RESTART_SEC + 20
    assert run.figures["fault_intent"]["kept"] is True
    # the settings it ran under, from Reef's own daemons and defaults: mClock schedules
    settings = {s["name"]: s for s in run.recovery_settings["settings"]}
    assert run.recovery_settings["errors"] == [] and "18.2." in run.recovery_settings["release"]
    assert settings["osd_op_queue"]["value"] == settings["osd_op_queue"]["default"] \
        == "mclock_scheduler"
    assert settings["osd_mclock_profile"]["value"] in ("balanced", "high_client_ops",
                                                       "high_recovery_ops", "custom")
    _wait_healthy(reef_cluster)


# make test takes the Reef lab down and checks it left nothing in the fixture's teardown
# (CI starts it), and bench P5 times its warm up: this pair of steps is the full selection's
@pytest.mark.full
def test_down_leaves_nothing_behind_and_a_warm_up_is_quick(reef_cluster):
    assert_nothing_left(ceph_reef.down())
    info = ceph_reef.up()
    print(f"\nreef lab warm up: HEALTH_OK after {info['seconds_to_health_ok']} s")
    assert info["mode"] == "warm" and info["state"]["health"] == "HEALTH_OK"
