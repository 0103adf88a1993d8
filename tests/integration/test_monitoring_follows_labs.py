"""Monitoring follows the labs: the embedded Prometheus learns the inventory's clusters from
the service every 5 s, so a lab brought up after it (the Reef lab, its mgr exporter in node1)
is scraped with no reload, a real health warning on it reaches the service as an alert on
the lab's running run, and a lab taken down (out of the inventory) is no longer scraped.

In the main stream after the side stream (the `stack` fixture): the Reef lab is free then,
and the ports of the monitoring stack are the machine's."""

from __future__ import annotations

import pytest
import requests
from catalogue import wait_for
from factories import make_run
from reef_lab import assert_nothing_left, nodes_running
from sqlalchemy import delete, select
from streams import lab_changes

from clusters.ceph.admin import CephAdmin
from lab import ceph_reef
from service.monitoring import embedded as monitoring
from service.store.models import Alert, Run

pytestmark = pytest.mark.lab
REEF = ceph_reef.CLUSTER_NAME


def _query(expr: str) -> list[dict]:
    answer = requests.get(f"{monitoring.prometheus_url()}/api/v1/query",
                          params={"query": expr}, timeout=10).json()
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


def _cluster_targets() -> dict[tuple[str, str], dict]:
    answer = requests.get(f"{monitoring.prometheus_url()}/api/v1/targets",
                          params={"state": "active"}, timeout=10).json()
    return {(t["labels"]["job"], t["labels"].get("cluster")): t
            for t in answer["data"]["activeTargets"] if t["labels"]["job"] in ("ceph", "swift")}


def _reef_scraped() -> bool:
    target = _cluster_targets().get(("ceph", REEF))
    return bool(target and target["health"] == "up")


def _stored_alerts(sessions, run_id: int, alertname: str) -> list[Alert]:
    with sessions() as session:
        return session.execute(select(Alert).where(
            Alert.run_id == run_id, Alert.alertname == alertname,
            Alert.status == "firing")).scalars().all()


def test_a_lab_brought_up_after_prometheus_is_scraped_alerts_and_is_dropped_when_down(
        stack, sessions):
    wait_for("both Pacific labs to be scraped", lambda: {
        key for key, t in _cluster_targets().items() if t["health"] == "up"} >= {
        ("ceph", "lab-ceph"), ("swift", "lab-swift")}, 60)
    reloaded = _last_reload()
    assert ("ceph", REEF) not in _cluster_targets() or nodes_running()

    with lab_changes():
        was_up = nodes_running()
        ceph_reef.up()
    down = False
    try:
        wait_for("Prometheus to scrape the Reef lab's mgr", _reef_scraped, 60)
        assert _query(f'ceph_health_status{{cluster="{REEF}"}}')
        assert _last_reload() == reloaded  # found by discovery: no restart, no reload

        # a real health warning that touches no data: the noout flag (OSDMAP_FLAGS)
        with sessions() as session:
            run = make_run(session, cluster=REEF, status="running")
        try:
            with CephAdmin(str(ceph_reef.lab_at(None).conf)) as admin:
                admin.command("osd set", key="noout")
                try:
                    wait_for("CephClusterDegraded about the Reef lab to reach its run",
                             lambda: _stored_alerts(sessions, run.id, "CephClusterDegraded"),
                             120)
                finally:
                    admin.command("osd unset", key="noout")
            alert = _stored_alerts(sessions, run.id, "CephClusterDegraded")[0]
            assert alert.labels["cluster"] == REEF
        finally:
            with sessions.begin() as session:
                session.execute(delete(Run).where(Run.id == run.id))

        with lab_changes():
            left = ceph_reef.down(purge=not was_up)
        down = True
        # out of the inventory, out of Prometheus: no stale target to fail or alert on
        wait_for("the Reef lab's target to be dropped",
                 lambda: ("ceph", REEF) not in _cluster_targets(), 30)
        if not was_up:
            assert_nothing_left(left)
    finally:
        with lab_changes():
            if was_up and down:  # the session fixture's lab: back as it was
                ceph_reef.up()
            elif not was_up and not down:
                ceph_reef.down(purge=True)


def _last_reload() -> list[str]:
    return [r["value"][1] for r in
            _query("prometheus_config_last_reload_success_timestamp_seconds")]
