"""POST /alerts: Alertmanager's webhook (dashboards/alertmanager/alertmanager.yml).

Authenticated by the shared alert token (service.web.secret.alert_token), not by a user:
Alertmanager sends it as `Authorization: Bearer <token>`. The alerts go on the runs going
on on their cluster (service.monitoring.alerts)."""

from __future__ import annotations

import hmac

from flask import request

from service.monitoring import alerts
from service.web.access import shared_token_endpoint
from service.web.secret import alert_token

from .blueprint import bp
from .context import sessions
from .errors import BadRequest
from .params import json_body


@bp.post("/alerts")
@shared_token_endpoint
def receive_alerts():
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(),
                                                              alert_token().encode()):
        return {"error": "send the shared alert token as 'Authorization: Bearer <token>'"}, 401
    try:
        stored = alerts.record(sessions(), json_body())
    except alerts.AlertPayloadError as exc:
        raise BadRequest(str(exc)) from None
    return {"stored": stored}
