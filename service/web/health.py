"""`/healthz`: public, for load balancers and docker-compose; 503 when the database is not
reachable."""

from __future__ import annotations

from flask import Blueprint, Flask, current_app, jsonify
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():
    try:
        with current_app.extensions["faultline.sessions"]() as session:
            session.execute(text("SELECT 1"))
    except OperationalError:
        return jsonify(status="database unreachable"), 503
    return jsonify(status="ok")


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
