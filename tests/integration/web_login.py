"""Logging a test client or a browser in through the real login form."""

from __future__ import annotations

import re

from flask.testing import FlaskClient

SECRET = "a secret key for the tests only"  # so no test writes $FAULTLINE_HOME/secret_key
CSRF_TOKEN = re.compile(r'name="csrf_token" (?:type="hidden" )?value="([^"]+)"')


def csrf_token(html: str) -> str:
    """The CSRF token of the first form of a page."""
    match = CSRF_TOKEN.search(html)
    assert match, "the page has no form with a CSRF token"
    return match.group(1)


def log_in(client: FlaskClient, name: str, password: str):
    """Post the login form as a browser would: the token from the form, the cookie kept."""
    form = client.get("/login").get_data(as_text=True)
    return client.post("/login", data={"name": name, "password": password,
                                       "csrf_token": csrf_token(form)})


def log_in_browser(page, server: str, name: str, password: str) -> None:
    page.goto(f"{server}/login")
    page.fill("#name", name)
    page.fill("#password", password)
    page.click("#login button[type='submit']")
    page.wait_for_selector("#user [data-field='user']")
