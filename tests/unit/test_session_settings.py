"""The session, proxy and login-throttle settings (service.web.cookies) and the CLI's token
lifetimes: defaults, overrides, and every bad value reported at once."""

from __future__ import annotations

from datetime import timedelta

import pytest
from flask import Flask

from service.accounts.exceptions import InvalidTokenLifetime
from service.accounts.sessions import SessionLifetimes
from service.accounts.throttle import LoginLimits
from service.cli.accounts import parse_duration
from service.web import cookies


def _app(monkeypatch, env=None, **config) -> Flask:
    for key in cookies.SETTINGS:
        monkeypatch.delenv(f"FAULTLINE_{key}", raising=False)
    for key, value in (env or {}).items():
        monkeypatch.setenv(key, value)
    app = Flask(__name__)
    app.config.update(config)
    cookies.init_app(app)
    return app


def test_the_defaults_are_30_minutes_idle_12_hours_and_5_failures_in_15_minutes(monkeypatch):
    app = _app(monkeypatch)

    assert cookies.lifetimes(app) == SessionLifetimes(timedelta(minutes=30), timedelta(hours=12))
    assert cookies.login_limits(app) == LoginLimits(5, 20, timedelta(minutes=15),
                                                    timedelta(minutes=15))
    assert app.config["PERMANENT_SESSION_LIFETIME"] == timedelta(hours=12)
    assert (app.config["SESSION_COOKIE_HTTPONLY"], app.config["SESSION_COOKIE_SAMESITE"]) == (
        True, "Lax")


def test_the_environment_sets_them_and_the_config_wins_over_it(monkeypatch):
    app = _app(monkeypatch, {"FAULTLINE_SESSION_IDLE_MINUTES": "10",
                             "FAULTLINE_LOGIN_LIMIT": "3"}, LOGIN_LIMIT=7)

    assert cookies.lifetimes(app).idle == timedelta(minutes=10)
    assert cookies.login_limits(app).limit == 7


def test_every_bad_setting_is_reported_at_once(monkeypatch):
    with pytest.raises(ValueError) as refused:
        _app(monkeypatch, {"FAULTLINE_SESSION_HOURS": "forever", "FAULTLINE_PROXIES": "-1"})

    assert str(refused.value) == (
        "FAULTLINE_PROXIES must be a whole number of at least 0, not '-1'; "
        "FAULTLINE_SESSION_HOURS must be a whole number of at least 1, not 'forever'")


def test_proxy_headers_are_trusted_only_when_proxies_are_configured(monkeypatch):
    assert _app(monkeypatch).wsgi_app.__class__.__name__ != "ProxyFix"
    assert _app(monkeypatch, PROXIES=1).wsgi_app.__class__.__name__ == "ProxyFix"


@pytest.mark.parametrize(("text", "lifetime"), [
    ("90d", timedelta(days=90)), ("12h", timedelta(hours=12)), ("30m", timedelta(minutes=30))])
def test_a_token_lifetime_is_days_hours_or_minutes(text, lifetime):
    assert parse_duration(text) == lifetime


@pytest.mark.parametrize("text", ["0d", "-1d", "1y", "d", "1.5d", "", "12"])
def test_another_token_lifetime_is_refused(text):
    with pytest.raises(InvalidTokenLifetime, match="is not a duration such as 90d, 12h or 30m"):
        parse_duration(text)
