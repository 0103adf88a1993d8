"""The service's /metrics and its service discovery, from a real PostgreSQL: what they say
follows the database (runs, their last results and verdicts, faults left in the ledger) and
the inventory (the clusters to scrape), promtool finds the exposition clean, and none
answers without a token."""

from __future__ import annotations

import subprocess
import time
import uuid

import pytest
from factories import make_run

from service.store.models import FaultRecord


@pytest.fixture
def cluster(own_cluster):
    return own_cluster


def _value(text: str, prefix: str) -> float:
    lines = [line for line in text.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1, (prefix, lines)
    return float(lines[0].rsplit(" ", 1)[1])


def test_metrics_give_the_last_result_of_each_series_and_the_faults_left(
        api_as, sessions, cluster):
    with sessions() as session:
        old = make_run(session, cluster=cluster, figures={"throughput_drop": 0.5, "errors": 9})
        old.experiment_path = "/srv/experiments/ceph-kill-osd.json"
        new = make_run(session, cluster=cluster, figures={
            "throughput_drop": 0.25, "errors": 3, "time_to_detect_s": 1.5,
            "time_to_full_redundancy_s": 36.4, "lost_objects": 0})
        new.experiment_path = "/srv/experiments/ceph-kill-osd.json"
        new.verdict = {"status": "regression", "summary": "slower", "findings": []}
        other = make_run(session, cluster=cluster, status="failed", figures={"errors": 1})
        other.experiment_path = "experiments/ceph-power-off-node.json"
        running = make_run(session, cluster=cluster, status="running", figures=None)
        running.experiment_path = "experiments/ceph-fail-disk.json"
        session.commit()
        # a fault of the running run, and one whose run died
        for owner in (running.id, old.id):
            session.add(FaultRecord(id=uuid.uuid4().hex, cluster=cluster, key=f"k{owner}",
                                    description="osd.1 killed", restore="actions.ceph.start_osd",
                                    arguments={}, injected_at=time.time(), owner_pid=1,
                                    owner_host="here", run_id=owner))
        session.commit()
    response = api_as("viewer").get("/metrics")
    assert response.status_code == 200
    assert response.content_type.startswith("text/plain")
    text = response.get_data(as_text=True)
    series = f'cluster="{cluster}",experiment="ceph-kill-osd"'
    assert _value(text, f"faultline_last_throughput_drop_ratio{{{series}}}") == 0.25
    assert _value(text, f"faultline_last_errors{{{series}}}") == 3
    assert _value(text, f"faultline_last_time_to_full_redundancy_seconds{{{series}}}") == 36.4
    assert _value(text, f"faultline_last_regression{{{series}}}") == 1
    assert _value(text, f"faultline_last_run_failed{{{series}}}") == 0
    failed = f'cluster="{cluster}",experiment="ceph-power-off-node"'
    assert _value(text, f"faultline_last_run_failed{{{failed}}}") == 1
    assert _value(text, f"faultline_last_regression{{{failed}}}") == 0
    assert _value(text, f'faultline_faults_active{{cluster="{cluster}"}}') == 2
    assert _value(text, f'faultline_faults_orphaned{{cluster="{cluster}"}}') == 1
    assert _value(text, f'faultline_run_active{{cluster="{cluster}",experiment="ceph-fail-disk"'
                        f',run_id="{running.id}",state="running"}}') == 1
    check = subprocess.run(["promtool", "check", "metrics"], input=text, text=True,
                           capture_output=True, timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr


def test_service_discovery_lists_the_drivers_of_running_runs(api_as, sessions, cluster):
    with sessions() as session:
        running = make_run(session, cluster=cluster, status="running", figures=None)
        running.experiment_path = "experiments/ceph-kill-osd.json"
        running.metrics_url = "http://127.0.0.1:40123/metrics"
        ended = make_run(session, cluster=cluster)
        ended.metrics_url = "http://127.0.0.1:40124/metrics"
        session.commit()
    groups = api_as("viewer").get("/prometheus/targets").get_json()
    mine = [g for g in groups if g["labels"]["cluster"] == cluster]
    assert mine == [{"targets": ["127.0.0.1:40123"], "labels": {
        "run_id": str(running.id), "cluster": cluster, "experiment": "ceph-kill-osd"}}]


def test_cluster_discovery_lists_each_cluster_of_the_inventory_where_it_is_scraped(api_as):
    viewer = api_as("viewer")

    ceph = viewer.get("/prometheus/clusters?kind=ceph")
    swift = viewer.get("/prometheus/clusters?kind=swift", base_url="http://faultline.example:8080")
    unknown = viewer.get("/prometheus/clusters?kind=rgw")

    assert ceph.get_json() == [{"targets": ["192.0.2.1:9283"], "labels": {
        "cluster": "lab-ceph", "__scheme__": "http", "__metrics_path__": "/metrics"}}]
    assert swift.get_json() == [{"targets": ["faultline.example:8080"], "labels": {
        "cluster": "lab-swift", "__scheme__": "http",
        "__metrics_path__": "/clusters/lab-swift/metrics"}}]
    assert unknown.status_code == 400
    assert "kind must be one of ceph, swift, not 'rgw'" in unknown.get_data(as_text=True)


@pytest.mark.parametrize("path", ["/metrics", "/prometheus/targets",
                                  "/prometheus/clusters?kind=ceph"])
def test_prometheus_endpoints_need_a_token(api_as, path):
    assert api_as(None).get(path).status_code == 401
