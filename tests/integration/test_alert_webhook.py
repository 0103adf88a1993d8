"""Alertmanager's webhook on the real app and PostgreSQL: the shared token and nothing else
lets an alert in, a firing alert lands on the running run of its cluster (stored and on the
timeline), and a body that is not a notification stores nothing."""

from __future__ import annotations

import uuid

import pytest
from factories import make_run
from sqlalchemy import delete, func, select

from service.store.models import Alert, Event, Run

TOKEN = "a shared alert token for the tests"


@pytest.fixture
def webhook(api_app, monkeypatch, sessions):
    monkeypatch.setenv("FAULTLINE_ALERT_TOKEN", TOKEN)
    cluster = f"alerts-{uuid.uuid4().hex[:8]}"
    yield api_app.test_client(), cluster
    with sessions.begin() as session:
        session.execute(delete(Alert).where(Alert.labels["cluster"].astext == cluster))
        session.execute(delete(Run).where(Run.cluster == cluster))


def _notification(cluster: str, status: str = "firing") -> dict:
    return {"version": "4", "status": status, "receiver": "faultline", "alerts": [{
        "status": status, "fingerprint": "0123abcd",
        "labels": {"alertname": "CephClusterDegraded", "cluster": cluster,
                   "severity": "ticket"},
        "annotations": {"summary": f"Ceph cluster {cluster} is not HEALTH_OK"},
        "startsAt": "2026-11-23T17:00:05.5Z", "endsAt": "0001-01-01T00:00:00Z"}]}


def _count(sessions, cluster: str) -> int:
    with sessions() as session:
        return session.execute(select(func.count()).select_from(Alert).where(
            Alert.labels["cluster"].astext == cluster)).scalar_one()


def test_a_firing_alert_lands_on_the_running_run_of_its_cluster(webhook, sessions):
    client, cluster = webhook
    with sessions() as session:
        running = make_run(session, cluster=cluster, status="running")
        make_run(session, cluster=cluster)  # finished: not concerned
    answer = client.post("/api/v1/alerts", json=_notification(cluster),
                         headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["stored"] == [
        {"alertname": "CephClusterDegraded", "status": "firing", "run_id": running.id}]
    with sessions() as session:
        alert = session.execute(select(Alert).where(Alert.run_id == running.id)).scalar_one()
        event = session.execute(select(Event).where(Event.run_id == running.id,
                                                    Event.kind == "alert")).scalar_one()
    assert alert.starts_at.timestamp() == 1795453205.5
    assert alert.ends_at is None
    assert event.ts == 1795453205.5 and event.detail["name"] == "CephClusterDegraded"


def test_an_alert_with_no_run_is_kept_without_one(webhook, sessions):
    client, cluster = webhook
    answer = client.post("/api/v1/alerts", json=_notification(cluster, "resolved"),
                         headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.get_json()["stored"] == [
        {"alertname": "CephClusterDegraded", "status": "resolved", "run_id": None}]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"},
                                     {"Authorization": f"Basic {TOKEN}"}])
def test_without_the_shared_token_nothing_is_stored(webhook, sessions, headers):
    client, cluster = webhook
    answer = client.post("/api/v1/alerts", json=_notification(cluster), headers=headers)
    assert answer.status_code == 401
    assert "shared alert token" in answer.get_json()["error"]
    assert _count(sessions, cluster) == 0


@pytest.mark.parametrize("role", ["viewer", "operator", "admin"])
def test_a_users_api_token_is_not_the_alert_token(webhook, sessions, api_token, role):
    client, cluster = webhook
    _, token = api_token(role)
    answer = client.post("/api/v1/alerts", json=_notification(cluster),
                         headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 401
    assert _count(sessions, cluster) == 0


@pytest.mark.parametrize(("body", "message"), [
    ({"alerts": "none"}, "an object with 'alerts'"),
    ({"alerts": [{"status": "firing", "labels": {}}]}, "alerts[1] has no labels.alertname"),
    ({"alerts": [{"status": "odd", "labels": {"alertname": "X"}}]}, "firing or resolved"),
    ({"alerts": [{"status": "firing", "labels": {"alertname": "X"}, "startsAt": "noon"}]},
     "not an RFC 3339 time"),
])
def test_a_body_that_is_not_a_notification_is_refused_whole(webhook, sessions, body, message):
    client, cluster = webhook
    body = {"alerts": [_notification(cluster)["alerts"][0], *body["alerts"]]} \
        if isinstance(body["alerts"], list) else body
    answer = client.post("/api/v1/alerts", json=body,
                         headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 400
    assert message in answer.get_json()["error"]
    assert _count(sessions, cluster) == 0
