"""Errors of a JSON request come back as JSON: `{"error": "run 42 does not exist"}` with the
status, whatever view aborted; pages keep Flask's HTML error pages."""

from __future__ import annotations

from flask import Flask, jsonify
from werkzeug.exceptions import HTTPException

from .access import wants_json


def _http_error(exc: HTTPException):
    if not wants_json() or exc.code is None or exc.code < 400:
        return exc
    response = jsonify(error=exc.description)
    response.status_code = exc.code
    return response


def init_app(app: Flask) -> None:
    app.register_error_handler(HTTPException, _http_error)
