"""Who may do what: default deny, checked before every request, whatever blueprint serves it.

- Public (no login): the endpoints in PUBLIC_ENDPOINTS (the login form, the health check,
  static and vendor files). A view marked `@shared_token_endpoint` checks a machine's
  shared token itself (Alertmanager's webhook).
- Everything else needs a logged-in user (a session cookie, or an API token sent as
  `Authorization: Bearer <token>`): a viewer for GET/HEAD/OPTIONS, an operator for any
  other method, or the role a view declares with `@require_role(...)`.
- Without a user: a page redirects to /login; JSON, API and mutating requests get 401.
  With too weak a role: 403. Either way the view does not run.
- Session-authenticated mutating requests (and the login form) need the CSRF token; a
  request authenticated by a bearer token carries no cookie a third site could ride on,
  so it needs none.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from flask import Flask, current_app, g, jsonify, redirect, request, url_for
from flask_login import current_user
from flask_wtf.csrf import CSRFError, CSRFProtect
from werkzeug.exceptions import default_exceptions

from service.accounts.roles import check_role, role_at_least

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PUBLIC_ENDPOINTS = frozenset({"auth.login", "health.healthz", "static", "vendor"})
NOT_LOGGED_IN = "log in first, or send an API token as 'Authorization: Bearer <token>'"


def require_role(role: str) -> Callable:
    """The role a view needs, whatever the method: `@require_role("admin")`. Put it under
    the route decorator, so the route registers the marked view."""
    check_role(role)

    def decorate(view: Callable) -> Callable:
        @functools.wraps(view)
        def checked(*args: Any, **kwargs: Any):
            return refusal(role) or view(*args, **kwargs)  # also when called without the hook

        checked.required_role = role  # type: ignore[attr-defined]
        return checked

    return decorate


def shared_token_endpoint(view: Callable) -> Callable:
    """A view for a machine that holds a shared token, not a user's (Alertmanager's
    webhook): no role and no CSRF check here; the view checks the token itself."""
    view.shared_token = True  # type: ignore[attr-defined]
    return view


def required_role(endpoint: str | None, method: str) -> str | None:
    """The role a request needs; None for a public endpoint."""
    if endpoint in PUBLIC_ENDPOINTS:
        return None
    view = current_app.view_functions.get(endpoint) if endpoint else None
    declared = getattr(view, "required_role", None)
    if declared:
        return declared
    return "viewer" if method in SAFE_METHODS else "operator"


def refusal(role: str):
    """The response refusing the current request, or None if its user has `role`."""
    if not current_user.is_authenticated:
        return _unauthenticated()
    if not role_at_least(current_user.role, role):
        message = (f"this needs the {role} role; {current_user.name} is "
                   f"{'an' if current_user.role[0] in 'aeiou' else 'a'} {current_user.role}")
        return _error(403, message)
    return None


def wants_json() -> bool:
    """A script's request (API, JSON, Prometheus), answered 401 rather than sent to login."""
    return (request.path.startswith(("/api/", "/prometheus/")) or request.path.endswith("/metrics")
            or request.path.endswith(".json")
            or "Authorization" in request.headers
            or request.accept_mimetypes.best_match(["text/html", "application/json"])
            == "application/json")


def _enforce():
    if request.routing_exception is not None and current_user.is_authenticated:
        return None  # no such page or method: let it be the 404 or 405 it is
    view = current_app.view_functions.get(request.endpoint) if request.endpoint else None
    if getattr(view, "shared_token", False):
        return None
    role = required_role(request.endpoint, request.method)
    if role is not None:
        refused = refusal(role)
        if refused is not None:
            return refused
    if (request.method not in SAFE_METHODS and current_app.config["WTF_CSRF_ENABLED"]
            and not getattr(current_user, "by_token", False)):
        current_app.extensions["csrf"].protect()  # raises CSRFError (400)
    return None


def _unauthenticated():
    if not wants_json() and request.method in SAFE_METHODS:
        return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))
    response = _error(401, g.get("auth_error") or NOT_LOGGED_IN)
    response.headers["WWW-Authenticate"] = 'Bearer realm="faultline"'
    return response


def _error(status: int, message: str):
    if wants_json():
        response = jsonify(error=message)
        response.status_code = status
        return response
    return default_exceptions[status](description=message).get_response()


def _csrf_error(exc: CSRFError):
    if wants_json():
        return jsonify(error=exc.description), 400
    return exc


def init_app(app: Flask) -> None:
    app.config["WTF_CSRF_CHECK_DEFAULT"] = False  # _enforce checks it, after the role
    app.config.setdefault("WTF_CSRF_TIME_LIMIT", None)  # valid as long as the session
    CSRFProtect(app)
    app.before_request(_enforce)
    app.register_error_handler(CSRFError, _csrf_error)
