"""The session cookie, the login throttle's limits, and what the web trusts about the
connection a request came on.

- The cookie carries only the id of a session kept on the server (service.accounts.sessions);
  it is HttpOnly, SameSite=Lax, and Secure whenever the request came over HTTPS: served by
  `faultline serve --certfile ... --keyfile ...` (gunicorn's TLS), or behind a reverse proxy
  that sets X-Forwarded-Proto and is trusted with FAULTLINE_PROXIES. SESSION_COOKIE_SECURE
  (config) makes it Secure always.
- FAULTLINE_PROXIES (config PROXIES): how many reverse proxies in front of the service set
  X-Forwarded-For and X-Forwarded-Proto. 0 by default: trusted without a proxy, those headers
  would let any client pick the address the login throttle counts.
- Lifetimes (service.accounts.sessions.SessionLifetimes): FAULTLINE_SESSION_IDLE_MINUTES (30)
  and FAULTLINE_SESSION_HOURS (12); the cookie itself expires after the absolute one.
- Login throttle (service.accounts.throttle.LoginLimits): FAULTLINE_LOGIN_LIMIT (5),
  FAULTLINE_LOGIN_ADDRESS_LIMIT (20), FAULTLINE_LOGIN_WINDOW_MINUTES (15),
  FAULTLINE_LOGIN_LOCK_MINUTES (15).
Each also as a config key without the FAULTLINE_ prefix (tests set them so).
"""

from __future__ import annotations

import os
from datetime import timedelta

from flask import Flask, has_request_context, request
from flask.sessions import SecureCookieSessionInterface
from werkzeug.middleware.proxy_fix import ProxyFix

from service.accounts.sessions import SessionLifetimes
from service.accounts.throttle import LoginLimits

SETTINGS = {  # config key: default
    "PROXIES": 0, "SESSION_IDLE_MINUTES": 30, "SESSION_HOURS": 12, "LOGIN_LIMIT": 5,
    "LOGIN_ADDRESS_LIMIT": 20, "LOGIN_WINDOW_MINUTES": 15, "LOGIN_LOCK_MINUTES": 15,
}
LIFETIMES = "faultline.session_lifetimes"
LIMITS = "faultline.login_limits"


class SessionCookies(SecureCookieSessionInterface):
    """Flask's signed cookie, Secure per request: when this request came over HTTPS."""

    def get_cookie_secure(self, app: Flask) -> bool:
        return bool(app.config["SESSION_COOKIE_SECURE"]
                    or (has_request_context() and request.is_secure))


def lifetimes(app: Flask) -> SessionLifetimes:
    return app.extensions[LIFETIMES]


def login_limits(app: Flask) -> LoginLimits:
    return app.extensions[LIMITS]


def _settings(app: Flask) -> dict[str, int]:
    """Every setting as a whole number of at least 0 (1 for the others than PROXIES);
    every bad one reported at once."""
    values, problems = {}, []
    for key, default in SETTINGS.items():
        raw = app.config.get(key, os.environ.get(f"FAULTLINE_{key}", default))
        minimum = 0 if key == "PROXIES" else 1
        try:
            values[key] = int(raw)
            if values[key] < minimum:
                raise ValueError
        except (TypeError, ValueError):
            problems.append(f"FAULTLINE_{key} must be a whole number of at least {minimum}, "
                            f"not {raw!r}")
    if problems:
        raise ValueError("; ".join(problems))
    return values


def init_app(app: Flask) -> None:
    settings = _settings(app)
    app.extensions[LIFETIMES] = SessionLifetimes(
        idle=timedelta(minutes=settings["SESSION_IDLE_MINUTES"]),
        absolute=timedelta(hours=settings["SESSION_HOURS"]))
    app.extensions[LIMITS] = LoginLimits(
        limit=settings["LOGIN_LIMIT"], address_limit=settings["LOGIN_ADDRESS_LIMIT"],
        window=timedelta(minutes=settings["LOGIN_WINDOW_MINUTES"]),
        lock=timedelta(minutes=settings["LOGIN_LOCK_MINUTES"]))
    app.config.update(SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Lax",
                      PERMANENT_SESSION_LIFETIME=app.extensions[LIFETIMES].absolute,
                      REMEMBER_COOKIE_HTTPONLY=True)
    app.session_interface = SessionCookies()
    if settings["PROXIES"]:
        n = settings["PROXIES"]
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n)  # type: ignore
