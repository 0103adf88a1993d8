"""Errors of the API, and the one handler that turns any error under /api/ into JSON
`{"error": "<one line>"}` with its status: never a traceback, never an HTML page.

    ApiError                    raised by the views themselves
     +-- BadRequest         400 an invalid body, field or query parameter
     +-- NotFound           404 the resource of the path does not exist
     +-- Conflict           409 the resource is not in a state that allows it
     +-- UnsupportedMedia   415 a body that is not sent as JSON

The services raise their own domain exceptions; STATUS maps them (first match wins):
400 for what a request got wrong (an invalid experiment, workload, cron, suite; an unknown
cluster named in a body), 404 for a missing run, schedule, experiment or journal, 409
for a state conflict (a duplicate name, nothing to cancel, deleting a file experiment).
A missing experiment named in a body is a 400: views wrap such lookups in `named_in_body`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask, jsonify, request
from sqlalchemy.exc import OperationalError
from werkzeug.exceptions import HTTPException

from clusters.exceptions import ClusterError, InventoryError, UnknownCluster
from loadgen.exceptions import LoadError

from ..compare import CompareError
from ..experiment_store import ExperimentExists, ExperimentNotFound, NotAnUpload
from ..experiments import ExperimentError
from ..figures import RunNotFound
from ..heal_job import HealJobNotFound
from ..preflight import PreflightError
from ..run_queries import JournalNotRecorded, RunQueryError
from ..run_queue import QueueError
from ..schedule_slots import ScheduleError
from ..schedules import ScheduleExists, ScheduleNotFound
from ..suite import SuiteError
from .blueprint import bp

logger = logging.getLogger(__name__)


class ApiError(Exception):
    status = 400

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class BadRequest(ApiError):
    status = 400


class NotFound(ApiError):
    status = 404


class Conflict(ApiError):
    status = 409


class UnsupportedMedia(ApiError):
    status = 415


STATUS: tuple[tuple[type[BaseException], int], ...] = (
    (UnknownCluster, 400),
    (InventoryError, 500),  # the server's inventory file is missing or broken
    (ClusterError, 400),
    (ExperimentNotFound, 404),
    (ExperimentExists, 409),
    (NotAnUpload, 409),
    (ExperimentError, 400),
    (LoadError, 400),  # WorkloadError: a workload out of range
    (PreflightError, 400),
    (SuiteError, 400),
    (ScheduleExists, 409),
    (ScheduleError, 400),  # an invalid cron or time zone, experiment and suite both, ...
    (ScheduleNotFound, 404),
    (RunNotFound, 404),
    (JournalNotRecorded, 404),
    (RunQueryError, 400),
    (CompareError, 400),
    (QueueError, 409),
    (HealJobNotFound, 404),
)


@contextmanager
def named_in_body() -> Iterator[None]:
    """A thing named in the body that does not exist is a bad request, not a missing page."""
    try:
        yield
    except (ExperimentNotFound, RunNotFound, ScheduleNotFound) as exc:
        raise BadRequest(str(exc)) from None


def status_of(exc: BaseException) -> int | None:
    if isinstance(exc, ApiError):
        return exc.status
    for kind, status in STATUS:
        if isinstance(exc, kind):
            return status
    return None


def error(status: int, message: str):
    response = jsonify(error=message)
    response.status_code = status
    return response


def handle(exc: Exception):
    """Any exception of an API view (or an HTTP error under /api/) as a JSON error."""
    if isinstance(exc, HTTPException):
        return error(exc.code or 500, exc.description or exc.name)
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
