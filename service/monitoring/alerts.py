"""Alerts from Alertmanager's webhook, written down on the runs they concern.

An alert concerns the runs going on on the cluster its `cluster` label names (every run
going on if it names none: an alert about the whole system). Each is stored once per run
(or once with no run), and a firing alert also becomes an `alert` event on the run's
timeline. A payload that is not Alertmanager's webhook format (version 4) is refused
whole: nothing is stored.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from service.store.models import Alert, Event, Run

from .exceptions import AlertPayloadError

STATUSES = ("firing", "resolved")


def parse(payload: Any) -> list[dict[str, Any]]:
    """The alerts of a webhook body, checked; AlertPayloadError says what is wrong."""
    if not isinstance(payload, dict) or not isinstance(payload.get("alerts"), list):
        raise AlertPayloadError("expected Alertmanager's webhook body: an object with 'alerts'")
    alerts = []
    for i, alert in enumerate(payload["alerts"]):
        where = f"alerts[{i}]"
        if not isinstance(alert, dict):
            raise AlertPayloadError(f"{where} is not an object")
        labels = alert.get("labels")
        if not isinstance(labels, dict) or not isinstance(labels.get("alertname"), str):
            raise AlertPayloadError(f"{where} has no labels.alertname")
        if alert.get("status") not in STATUSES:
            raise AlertPayloadError(f"{where}.status must be firing or resolved")
        alerts.append({
            "alertname": labels["alertname"], "status": alert["status"],
            "labels": {str(k): str(v) for k, v in labels.items()},
            "annotations": {str(k): str(v) for k, v in (alert.get("annotations") or {}).items()},
            "fingerprint": str(alert.get("fingerprint") or ""),
            "starts_at": _time(alert.get("startsAt"), f"{where}.startsAt"),
            "ends_at": _ends(alert),
        })
    return alerts


def _time(value: Any, where: str) -> datetime:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise AlertPayloadError(f"{where} is not an RFC 3339 time: {value!r}") from None


def _ends(alert: dict[str, Any]) -> datetime | None:
    """Alertmanager sends 0001-01-01 for an alert with no end yet."""
    if alert.get("status") != "resolved" or not alert.get("endsAt"):
        return None
    return _time(alert["endsAt"], "endsAt")


def record(sessions: sessionmaker[Session], payload: Any) -> list[dict[str, Any]]:
    """Store the payload's alerts on the runs they concern; returns what was stored."""
    alerts = parse(payload)
    stored = []
    with sessions.begin() as session:
        running = session.execute(select(Run.id, Run.cluster)
                                  .where(Run.status == "running")).all()
        for alert in alerts:
            cluster = alert["labels"].get("cluster")
            runs = [run_id for run_id, c in running if cluster is None or c == cluster]
            for run_id in runs or [None]:
                session.add(Alert(run_id=run_id, **alert))
                if run_id is not None and alert["status"] == "firing":
                    session.add(Event(run_id=run_id, ts=alert["starts_at"].timestamp(),
                                      kind="alert", detail={
                                          "name": alert["alertname"],
                                          "status": "firing", "labels": alert["labels"],
                                          "summary": alert["annotations"].get("summary")}))
                stored.append({"alertname": alert["alertname"], "status": alert["status"],
                               "run_id": run_id})
    return stored
