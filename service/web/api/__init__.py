"""The REST API under /api/v1, described by openapi.yaml (served as /api/v1/openapi.json).

Views read the request (params), call a service, and return JSON; the services own their
sessions and raise domain exceptions, which errors.py turns into `{"error": ...}` with the
right status. Who may call what is the app's default-deny policy (service.web.access):
GET needs a viewer, any other method an operator, the audit trail, users and tokens an
admin (`@require_role("admin")`); scripts send an API token as
`Authorization: Bearer <token>`. The web process only queues work (runs, heals) for the
workers; it never runs an experiment or a restore itself.
"""

from __future__ import annotations

from flask import Flask

from . import (  # noqa: F401  (each module adds its routes to the blueprint)
    alerts,
    audit,
    clusters,
    comparisons,
    context,
    errors,
    experiments,
    heal,
    openapi,
    runs,
    schedules,
    users,
)
from .blueprint import bp
from .params import refuse_nul

bp.before_request(refuse_nul)


def init_app(app: Flask) -> None:
    context.init_app(app)
    errors.init_app(app)
    app.register_blueprint(bp)
