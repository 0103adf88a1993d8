"""The one handler that turns any error under /api/ into JSON `{"error": "<one line>"}`
with its status (service.web.errors.status_of): never a traceback, never an HTML page.

The errors and their statuses are service.web.errors'; the API's views raise its
BadRequest, ApiNotFound and UnsupportedMedia.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask, jsonify, request
from sqlalchemy.exc import OperationalError
from werkzeug.exceptions import HTTPException

from service.experiments.exceptions import ExperimentNotFound
from service.results.exceptions import RunNotFound
from service.schedules.exceptions import ScheduleNotFound

from ..errors import (  # noqa: F401  (the API's views raise these)
    ApiNotFound,
    BadRequest,
    UnsupportedMedia,
    json_http_error,
    status_of,
)
from .blueprint import bp

logger = logging.getLogger(__name__)


@contextmanager
def named_in_body() -> Iterator[None]:
    """A thing named in the body that does not exist is a bad request, not a missing page."""
    try:
        yield
    except (ExperimentNotFound, RunNotFound, ScheduleNotFound) as exc:
        raise BadRequest(str(exc)) from None


def error(status: int, message: str):
    response = jsonify(error=message)
    response.status_code = status
    return response


def handle(exc: Exception):
    """Any exception of an API view (or an HTTP error under /api/) as a JSON error."""
    if isinstance(exc, HTTPException):
        return json_http_error(exc)
    status = status_of(exc)
    if status is not None:
        return error(status, str(exc))
    if isinstance(exc, OperationalError):
        logger.error(f"{request.method} {request.path}: database: {exc}")
        return error(503, "cannot use the database: "
                     + (str(exc.orig).strip().splitlines() or ["unreachable"])[0])
    logger.exception(f"{request.method} {request.path} failed")
    return error(500, f"internal error ({type(exc).__name__}); see the server's log")


bp.register_error_handler(Exception, handle)  # once, before the blueprint is registered


def init_app(app: Flask) -> None:
    """Routing errors under /api/ (no such path or method) never reach the blueprint's
    handler: the app's own (service.web.errors) answers them in JSON, as it does every
    JSON request."""
