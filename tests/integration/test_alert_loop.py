"""The loop closed on the labs: a real fault makes the cluster's degraded alert fire in the
embedded Prometheus, Alertmanager posts it to the service, the run measures its time to
alert, and the run's abort condition on that alert stops it within 10 s, its rollbacks
leaving the cluster healthy. One Ceph fault and one Swift fault; the figures go to
tests/artifacts/alert-loop.json (the closing note quotes them)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from catalogue import ceph_osds_up, swift_fault_seen, wait_for
from short_runs import shortened
from sqlalchemy import func, select

from clusters.access.inventory import load_cluster
from clusters.paths import default_inventory
from service.store.fault_ledger import PgFaultLedger
from service.store.models import Alert, Run

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts" / "alert-loop.json"

pytestmark = pytest.mark.lab

CASES = {
    "lab-ceph": ("ceph-kill-osd.json", "CephClusterDegraded"),
    "lab-swift": ("swift-kill-object-server.json", "SwiftClusterDegraded"),
}


def _experiment(tmp_path: Path, cluster: str) -> Path:
    """The catalogue's process-kill experiment, aborted as soon as its cluster's degraded
    alert fires (no grace: the test wants the abort, not the recovery)."""
    name, alertname = CASES[cluster]
    return shortened(REPO / "experiments" / name, tmp_path, tail_s=3,
                     abort_on=[{"alertname": alertname, "labels": {"cluster": cluster}}])


def _healthy(cluster: str) -> bool:
    target = load_cluster(default_inventory(), cluster)
    if cluster == "lab-ceph":
        return ceph_osds_up(target) == len([d for d in target.disks if d.osd is not None])
    return not swift_fault_seen(target)


# one system is enough for make test: the alert loop is the same code for both
@pytest.mark.parametrize("cluster", [pytest.param(c, marks=[pytest.mark.full] if c == "lab-swift"
                                                  else []) for c in CASES])
def test_the_degraded_alert_times_the_fault_and_its_abort_condition_stops_the_run(
        cluster, stack, sessions, tmp_path):
    alertname = CASES[cluster][1]
    with sessions() as session:
        before = session.execute(select(func.coalesce(func.max(Run.id), 0))).scalar()
    done = subprocess.run(["faultline", "run", str(_experiment(tmp_path, cluster)),
                           "--cluster", cluster, "--inventory", str(default_inventory())],
                          env=stack, cwd=REPO, capture_output=True, text=True, timeout=900)
    log = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 1, log  # not completed: interrupted

    with sessions() as session:
        run = session.execute(select(Run).where(Run.id > before, Run.cluster == cluster)
                              ).scalars().one()
        events = {e.kind: e for e in reversed(run.events)}  # the first of each kind
        alert = session.execute(select(Alert).where(
            Alert.run_id == run.id, Alert.alertname == alertname, Alert.status == "firing")
            .order_by(Alert.received_at)).scalars().first()
        status, error, figures = run.status, run.error, run.figures
        fault_ts = run.fault_ts
    assert status == "interrupted", log
    assert error.startswith(f"aborted: alert {alertname} matched the abort condition"), error
    assert alert is not None, "the degraded alert never reached the run"
    assert "abort_requested" in events and "restored" in events, sorted(events)
    # the abort: from the alert reaching the service to the rollback (the restore) beginning
    abort_s = events["restored"].ts - alert.received_at.timestamp()
    assert 0 <= abort_s < 10, abort_s
    assert events["abort_requested"].ts <= events["restored"].ts
    # the time to alert: Prometheus' `for: 10s` comes on top of the scrape and evaluation
    assert figures["time_to_alert_s"] is not None, figures["reasons"]
    assert 10 <= figures["time_to_alert_s"] < 90
    assert figures["time_to_alert_s"] == round(alert.starts_at.timestamp() - fault_ts, 3)

    wait_for(f"{cluster} to be whole again", lambda: _healthy(cluster), 120, every_s=2)
    assert not PgFaultLedger(sessions).outstanding(cluster), "a fault outlived the run"
    record = json.loads(ARTIFACTS.read_text()) if ARTIFACTS.exists() else {}
    record[cluster] = {
        "run_id": run.id, "alert": alertname, "time_to_alert_s": figures["time_to_alert_s"],
        "alert_received_after_fault_s": round(alert.received_at.timestamp() - fault_ts, 3),
        "abort_latency_s": round(abort_s, 3),
        "watch_latency_s": events["abort_requested"].detail.get("latency_s"),
        "time_to_detect_s": figures["time_to_detect_s"], "errors": figures["errors"],
        "lost_objects": figures["lost_objects"]}
    ARTIFACTS.parent.mkdir(exist_ok=True)
    ARTIFACTS.write_text(json.dumps(record, indent=2))
