"""Errors on the web, in one place: the web's own errors, and the one table that gives any
error its HTTP status (the API's JSON errors, the dashboard's forms).

    WebError                        raised by the views themselves
     +-- FormError              400 what is wrong with a submitted form
     +-- ApiError
          +-- BadRequest        400 an invalid body, field or query parameter
          +-- ApiNotFound       404 the resource of the path does not exist
          +-- ApiConflict       409 the resource is not in a state that allows it
          +-- UnsupportedMedia  415 a body that is not sent as JSON

The services raise their own errors, each of a kind (service.exceptions): 400 for what a
request got wrong (an invalid experiment, workload, cron, suite; an unknown cluster named in
a body), 403 for a fault on a protected cluster (`chaos: protected`) and for what needs a
stronger role (a guard override from an operator), 404 for what the path names and does not
exist, 409 for a state conflict (a duplicate name, nothing to cancel, deleting a file
experiment). A missing thing named in a
body is a 400: API views wrap such lookups in `named_in_body` (service.web.api.errors).

Errors of a JSON request come back as JSON: `{"error": "run 42 does not exist"}` with the
status, whatever view aborted; pages keep Flask's HTML error pages.
"""

from __future__ import annotations

from chaoslib.exceptions import ChaosException
from flask import Flask, jsonify
from werkzeug import exceptions as werkzeug_exceptions
from werkzeug.exceptions import HTTPException
from werkzeug.routing import IntegerConverter

from clusters.exceptions import ClusterError, InventoryError, ProtectedCluster, UnknownCluster
from loadgen.exceptions import LoadError
from service.exceptions import Conflict, FaultlineError, Forbidden, InvalidInput, NotFound
from service.store.models import PG_INT_MAX

from .access import wants_json


class WebError(FaultlineError):
    """Root of the errors the web's views raise themselves."""


class FormError(WebError, InvalidInput):
    """What is wrong with the submitted form."""


class ApiError(WebError):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class BadRequest(ApiError, InvalidInput):
    pass


class ApiNotFound(ApiError, NotFound):
    pass


class ApiConflict(ApiError, Conflict):
    pass


class UnsupportedMedia(ApiError):
    pass


STATUS: tuple[tuple[type[BaseException], int], ...] = (
    (UnsupportedMedia, 415),
    (UnknownCluster, 400),
    (ProtectedCluster, 403),  # a fault on a cluster that says chaos: protected
    (InventoryError, 500),  # the server's inventory file is missing or broken
    (ClusterError, 400),
    (LoadError, 400),  # WorkloadError: a workload out of range
    (ChaosException, 400),  # chaoslib found the experiment invalid
    (Forbidden, 403),  # a guard override from someone not an admin
    (NotFound, 404),
    (Conflict, 409),  # before InvalidInput: a duplicate schedule's name is both
    (InvalidInput, 400),
)
# what a request can get wrong: a form shows it again with the message
REQUEST_ERRORS = (FaultlineError, ClusterError, LoadError, ChaosException)


def form_status(exc: BaseException) -> int:
    """The status of a form shown again with its error: 403 for a fault on a protected
    cluster, else 400 (what the form got wrong)."""
    return 403 if isinstance(exc, ProtectedCluster) else 400


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of an error a request caused, or None for one it did not."""
    for kind, status in STATUS:
        if isinstance(exc, kind):
            return status
    return None


class DatabaseInt(IntegerConverter):
    """The `int` of every route, bounded to PostgreSQL's integer (ids are that type): a
    larger number is a 404 and never reaches the database."""

    def to_python(self, value: str) -> int:
        # a 404 raised here, not a failed match: a failed match would let Werkzeug answer
        # 405 for the other methods of the same path
        number = int(value)
        if number > PG_INT_MAX:
            raise werkzeug_exceptions.NotFound(f"no resource has id {number}")
        return number


def json_http_error(exc: HTTPException):
    """An HTTP error as JSON `{"error": ...}`, with the headers it needs (Allow for a 405)."""
    response = jsonify(error=exc.description or exc.name)
    response.status_code = exc.code or 500
    for name, value in exc.get_headers():
        if name.lower() != "content-type":
            response.headers[name] = value
    return response


def _http_error(exc: HTTPException):
    if not wants_json() or exc.code is None or exc.code < 400:
        return exc
    return json_http_error(exc)


def init_app(app: Flask) -> None:
    app.register_error_handler(HTTPException, _http_error)
