"""The embedded Prometheus and Alertmanager (Debian's), started by `faultline monitoring up`
against the real app, the test database and the labs: promtool and amtool accept the
configs of dashboards/, Prometheus scrapes the service, Ceph's mgr and Swift's recon, and
an alert sent to Alertmanager reaches the service's webhook and lands on the running run
of its cluster."""

from __future__ import annotations

import json
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests
from catalogue import wait_for
from factories import make_run
from short_runs import pause, short_experiment
from sqlalchemy import delete, select

from clusters.paths import default_inventory
from service.monitoring import embedded as monitoring
from service.store.models import Alert, Run

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.lab


def test_the_rules_and_routes_of_dashboards_pass_promtool_and_amtool():
    rules = sorted(str(p) for p in (REPO / "dashboards" / "prometheus" / "rules").glob("*.yml"))
    checked = subprocess.run(["promtool", "check", "rules", *rules], capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0 and "SUCCESS: 8 rules found" in checked.stdout, checked
    routes = REPO / "dashboards" / "alertmanager" / "alertmanager.yml"
    checked = subprocess.run(["amtool", "check-config", str(routes)], capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _query(expr: str) -> list[dict]:
    answer = requests.get(f"{monitoring.prometheus_url()}/api/v1/query",
                          params={"query": expr}, timeout=10).json()
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


def test_prometheus_scrapes_the_service_and_both_labs_and_alerts_reach_the_run(
        stack, sessions):
    wait_for("every target to be scraped once", lambda: {
        (r["metric"]["job"], r["value"][1]) for r in _query("up")} >= {
        ("faultline", "1"), ("ceph", "1"), ("swift", "1")}, 60)
    assert _query('ceph_health_status{cluster="lab-ceph"}')
    assert _query('faultline_swift_up{cluster="lab-swift"}')[0]["value"][1] == "1"
    assert _query('faultline_runs{status="completed"}')

    with sessions() as session:
        run = make_run(session, cluster="lab-ceph", status="running")
    try:
        now = datetime.now(UTC).isoformat()
        sent = requests.post(f"{monitoring.alertmanager_url()}/api/v2/alerts", json=[{
            "labels": {"alertname": "FaultlineMonitoringTest", "cluster": "lab-ceph",
                       "severity": "ticket"},
            "annotations": {"summary": "sent by the monitoring test"}, "startsAt": now}],
            timeout=10)
        assert sent.status_code == 200, sent.text
        sent_at = time.monotonic()

        def stored() -> list[Alert]:
            with sessions() as session:
                return session.execute(select(Alert).where(Alert.run_id == run.id)
                                       ).scalars().all()

        wait_for("Alertmanager to post the alert to the webhook", stored, 30)
        assert time.monotonic() - sent_at < 15  # group_wait 0s: at once, not batched
        alert = stored()[0]
        assert (alert.alertname, alert.status) == ("FaultlineMonitoringTest", "firing")
        assert alert.annotations["summary"] == "sent by the monitoring test"
    finally:
        with sessions.begin() as session:
            session.execute(delete(Run).where(Run.id == run.id))


def _short_run(tmp_path: Path) -> Path:
    """A real run on the Ceph lab: 20 s of light load (four scrapes of its metrics after the
    baseline), a harmless activity as its 'fault'."""
    experiment = short_experiment("monitoring test load", [pause(10)], rate=20, baseline_s=8,
                                  fault="hold", tail_s=3)
    path = tmp_path / "monitoring-load.json"
    path.write_text(json.dumps(experiment))
    return path


def _grafana_queries() -> list[tuple[str, str, str]]:
    """(board, panel or annotation, expr) of every PromQL expression of dashboards/grafana."""
    out = []
    for board in sorted((REPO / "dashboards" / "grafana").glob("*.json")):
        data = json.loads(board.read_text())
        for panel in data["panels"]:
            out += [(board.name, panel["title"], t["expr"]) for t in panel["targets"]]
        out += [(board.name, a["name"], a["expr"]) for a in data["annotations"]["list"]]
        for variable in data["templating"]["list"]:
            if variable["type"] == "query":
                out.append((board.name, variable["name"], variable["query"]["query"]))
    return out


def _cluster_for(expr: str) -> str:
    return "lab-swift" if "faultline_swift_" in expr else "lab-ceph"


def test_every_grafana_query_returns_data_after_a_real_run(stack, sessions, env, tmp_path):
    with sessions() as session:  # the trend board's figures: one finished run, every figure
        finished = make_run(session, cluster="lab-ceph", figures={
            "throughput_drop": 0.1, "errors": 2, "time_to_detect_s": 1.2,
            "time_to_client_recovery_s": 30.0, "time_to_full_redundancy_s": 40.0,
            "time_to_full_redundancy_after_restore_s": 9.0, "lost_objects": 0})
        finished.experiment_path = "experiments/monitoring-trend.json"
        session.commit()
    try:
        done = subprocess.run(["faultline", "run", str(_short_run(tmp_path)),
                               "--cluster", "lab-ceph", "--inventory", str(default_inventory())],
                              env=stack, cwd=REPO,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        time.sleep(6)  # one more evaluation of the last scrape
        end = time.time()
        empty = []
        for board, where, expr in _grafana_queries():
            if expr.startswith("label_values("):
                metric, label = expr[len("label_values("):-1].split(", ")
                values = requests.get(f"{monitoring.prometheus_url()}/api/v1/label/{label}"
                                      "/values", params={"match[]": metric}, timeout=10).json()
                assert values["status"] == "success", values
                if not values["data"]:
                    empty.append((board, where, expr))
                continue
            query = (expr.replace("$cluster", _cluster_for(expr))
                     .replace("$__rate_interval", "20s"))
            answer = requests.get(f"{monitoring.prometheus_url()}/api/v1/query_range", params={
                "query": query, "start": end - 600, "end": end, "step": "5s"}, timeout=20).json()
            assert answer["status"] == "success", (board, where, query, answer)
            if not answer["data"]["result"]:
                empty.append((board, where, query))
        assert empty == [], empty
    finally:
        with sessions.begin() as session:
            session.execute(delete(Run).where(Run.id == finished.id))
