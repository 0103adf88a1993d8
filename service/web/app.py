"""The Flask app: an app factory; each area is a blueprint registered here, the REST API
(service.web.api, /api/v1) among them.

The web process never runs an experiment: it reads what runs recorded, and queues runs for
the workers (service.jobs.run_queue). Every request but a few public ones needs a logged-in user
(service.web.access). Config keys beyond Flask's: DATABASE_URL, INVENTORY, EXPERIMENTS_DIR
(service.web.context); the session, proxy and login-throttle settings (service.web.cookies).
"""

from __future__ import annotations

from typing import Any

from flask import Flask, abort, send_from_directory

from service.results import formatting
from service.runs.reaper import interrupt_dead_runs
from service.store import db

from . import (
    access,
    api,
    audit,
    auth,
    calibrations,
    catalogue,
    clusters,
    compare,
    context,
    cookies,
    errors,
    health,
    prometheus,
    reports,
    runs,
    schedules,
    studies,
)
from .assets import ASSETS, VENDOR_FILES
from .secret import secret_key

MAX_BODY_BYTES = 1024 * 1024  # the largest experiment is about 5 KiB; an alert batch, less


def create_app(config: dict[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    # before any route: an id past PostgreSQL's integer is no such page, not a database error
    app.url_map.converters["int"] = errors.DatabaseInt
    # a request body past this is refused before it is read: 413 (JSON under /api/)
    app.config.update(DATABASE_URL=None, SESSION_COOKIE_SAMESITE="Lax",
                      MAX_CONTENT_LENGTH=MAX_BODY_BYTES)
    app.config.update(config or {})
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = secret_key()
    app.extensions["faultline.sessions"] = db.session_factory(app.config["DATABASE_URL"])
    # every page and export prints a figure as the CLI does (service.results.formatting)
    app.jinja_env.globals.update(format_value=formatting.format_value,
                                 label_of=formatting.label_of,
                                 with_reason=formatting.with_reason,
                                 count_rows=formatting.count_rows)

    cookies.init_app(app)
    access.init_app(app)
    auth.init_app(app)
    audit.init_app(app)
    context.init_app(app)
    errors.init_app(app)
    health.init_app(app)
    prometheus.init_app(app)
    runs.init_app(app)
    compare.init_app(app)
    studies.init_app(app)
    reports.init_app(app)
    clusters.init_app(app)
    catalogue.init_app(app)
    schedules.init_app(app)
    calibrations.init_app(app)
    api.init_app(app)
    # runs whose process died while the service was down (or since) are marked interrupted
    interrupt_dead_runs(app.extensions["faultline.sessions"], "the service, as it started")

    @app.get("/vendor/<name>")
    def vendor(name: str):
        # Chart libraries come from npm (installed by `make setup`), never from this repo.
        if name not in VENDOR_FILES:
            abort(404)
        path = ASSETS / VENDOR_FILES[name]
        return send_from_directory(path.parent, path.name)

    return app
