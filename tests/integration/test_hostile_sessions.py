"""Issue 25, "Sessions and logins" and "No route needs the admin role", played as a hostile
user would: guess passwords, replay a cookie after logout, keep a session after a password
change or a disable, use an expired token, read the audit trail without being an admin.
Each is refused; the audit trail records who uploaded, queued, cancelled, healed and
changed users, for admins only.

The Flask test client on the real app and real PostgreSQL: the login and session tests run
in a rolled-back transaction (the conftest's `rolled_back`), each from a client address of
its own so that the per-address throttle of one test never touches another; the API tests
on committed sessions (`api_as`), as an operator's scripts would.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import requests
from serving import chromium_page, served
from sqlalchemy import delete, select, text, update
from web_login import SECRET, csrf_token, log_in, log_in_browser

from service.accounts import audit, services
from service.accounts.models import ApiToken, AuditEvent, LoginFailure, LoginSession, User
from service.web.app import create_app

REFUSED = services.WRONG_CREDENTIALS
ERROR = re.compile(r'<p [^>]*id="login-error"[^>]*>([^<]*)</p>')


@pytest.fixture
def hostile_app(database_url, rolled_back):
    """The real app with these settings, its sessions in the test's rolled-back
    transaction."""
    def hostile_app(**config):
        app = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET, **config})
        app.extensions["faultline.sessions"] = rolled_back
        return app
    return hostile_app


def client_from(app, address: str | None = None):
    """A test client whose requests come from an address of this test only."""
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address or f"198.51.100.{uuid.uuid4().int % 250 + 1}"
    return client


def refusal_text(response) -> str:
    """The message of a refused login form."""
    match = ERROR.search(response.get_data(as_text=True))
    assert match, response.get_data(as_text=True)[:500]
    return match.group(1).replace("&#39;", "'")


def logged_in_ok(client) -> bool:
    """Whether the client's cookie still opens a page (rather than a trip to /login)."""
    return client.get("/").status_code == 200


def _failures(rolled_back, **where) -> int:
    with rolled_back() as session:
        query = select(LoginFailure)
        for column, value in where.items():
            query = query.where(getattr(LoginFailure, column) == value)
        return len(session.execute(query).scalars().all())


# --- logins ---


def test_the_sixth_login_within_the_window_is_refused_even_with_the_right_password(
        hostile_app, rolled_back_user, rolled_back):
    """Exploit: "Login has no attempt limit"."""
    app = hostile_app()
    name, password = rolled_back_user("operator")
    guesser = client_from(app)

    answers = [log_in(guesser, name, f"guess-{i}").status_code for i in range(5)]
    right_from_here = log_in(guesser, name, password)
    right_from_elsewhere = log_in(client_from(app), name, password)

    assert answers == [401] * 5
    assert (right_from_here.status_code, refusal_text(right_from_here)) == (401, REFUSED)
    assert (right_from_elsewhere.status_code,
            refusal_text(right_from_elsewhere)) == (401, REFUSED)
    assert not logged_in_ok(guesser)
    with rolled_back() as session:  # the admins see the lock on the audit trail
        assert audit.events(session, action="login.lock").items[0]["subject"] == f"user {name}"


def test_an_address_that_failed_too_often_is_refused_for_every_account(
        hostile_app, rolled_back_user, rolled_back):
    """Exploit: "Login has no attempt limit" (one address trying name after name)."""
    app = hostile_app(LOGIN_ADDRESS_LIMIT=4)
    name, password = rolled_back_user("viewer")
    sprayer = client_from(app, "203.0.113.77")

    for i in range(4):  # one failure per name: no account reaches its own limit
        assert log_in(sprayer, f"nobody-{uuid.uuid4().hex[:6]}-{i}", "guess").status_code == 401
    refused = log_in(sprayer, name, password)
    elsewhere = log_in(client_from(app), name, password)

    assert (refused.status_code, refusal_text(refused)) == (401, REFUSED)
    assert elsewhere.status_code == 302  # the account itself is not locked
    assert _failures(rolled_back, address="203.0.113.77") == 4  # a locked try is not counted


def test_a_forged_x_forwarded_for_does_not_escape_the_address_lock(hostile_app,
                                                                   rolled_back_user):
    """Exploit: "Login has no attempt limit" (a client naming another address itself)."""
    app = hostile_app(LOGIN_ADDRESS_LIMIT=2)
    name, password = rolled_back_user("viewer")
    sprayer = client_from(app)
    for i in range(2):
        log_in(sprayer, f"nobody-{uuid.uuid4().hex[:6]}-{i}", "guess")

    sprayer.environ_base["HTTP_X_FORWARDED_FOR"] = "192.0.2.200"
    refused = log_in(sprayer, name, password)

    assert (refused.status_code, refusal_text(refused)) == (401, REFUSED)


def test_a_refused_login_says_the_same_whatever_failed(hostile_app, rolled_back_user,
                                                       rolled_back):
    """Exploit: "A disabled account gets 'user X is disabled' only after a right password,
    so the message confirms the password"."""
    app = hostile_app()
    name, password = rolled_back_user("operator")
    disabled, disabled_password = rolled_back_user("operator")
    locked, locked_password = rolled_back_user("operator")
    with rolled_back.begin() as session:
        services.set_disabled(session, disabled, True)
    for _ in range(5):
        log_in(client_from(app), locked, "guess")

    answers = {
        "unknown user": log_in(client_from(app), f"nobody-{uuid.uuid4().hex[:8]}", password),
        "wrong password": log_in(client_from(app), name, password + "!"),
        "disabled, right password": log_in(client_from(app), disabled, disabled_password),
        "locked, right password": log_in(client_from(app), locked, locked_password),
    }

    shown = {case: (r.status_code, refusal_text(r)) for case, r in answers.items()}
    assert shown == dict.fromkeys(answers, (401, REFUSED))
    assert "disabled" not in REFUSED


def test_an_account_lock_ends_after_its_time(hostile_app, rolled_back_user, rolled_back):
    """Exploit: "Login has no attempt limit" (the lock is for 15 minutes, not for ever)."""
    app = hostile_app()
    name, password = rolled_back_user("viewer")
    for _ in range(5):
        log_in(client_from(app), name, "guess")
    assert log_in(client_from(app), name, password).status_code == 401

    with rolled_back.begin() as session:  # as if the failures were 16 minutes old
        session.execute(update(LoginFailure).where(LoginFailure.name == name)
                        .values(at=LoginFailure.at - timedelta(minutes=16)))

    assert log_in(client_from(app), name, password).status_code == 302
    assert _failures(rolled_back, name=name) == 0  # a login clears the account's failures


# --- sessions ---


def _session_cookie(client) -> str:
    cookie = client.get_cookie("session")
    assert cookie is not None
    return cookie.value


def _logged_in(app, rolled_back_user, role: str = "operator"):
    client = client_from(app)
    name, password = rolled_back_user(role)
    assert log_in(client, name, password).status_code == 302
    client.user_name, client.password = name, password
    return client


def test_a_session_cookie_replayed_after_logout_is_refused(hostile_app, rolled_back_user):
    """Exploit: "Session cookies ... stay valid after logout"."""
    app = hostile_app()
    client = _logged_in(app, rolled_back_user)
    stolen = _session_cookie(client)
    token = csrf_token(client.get("/").get_data(as_text=True))

    assert client.post("/logout", data={"csrf_token": token}).status_code == 302
    replay = client_from(app)
    replay.set_cookie("session", stolen)

    assert replay.get("/").status_code == 302
    assert replay.get("/api/v1/runs").status_code == 401


def test_the_cookie_carries_only_the_id_of_a_session_kept_on_the_server(
        hostile_app, rolled_back_user, rolled_back):
    """Exploit: "Session cookies live 31 days in the browser, stay valid after logout"."""
    app = hostile_app()
    client = _logged_in(app, rolled_back_user)

    content = app.session_interface.get_signing_serializer(app).loads(_session_cookie(client))
    with rolled_back() as session:
        row = session.execute(select(LoginSession).join(User)
                              .where(User.name == client.user_name)).scalar_one()
        user_id = row.user_id

    assert content["_user_id"] == row.id
    assert len(row.id) >= 40 and row.id != str(user_id)


def test_the_session_cookie_is_httponly_lax_and_lasts_no_longer_than_the_session(
        hostile_app, rolled_back_user):
    """Exploit: "Session cookies live 31 days in the browser ... and have no Secure flag"."""
    app = hostile_app()
    client = client_from(app)
    name, password = rolled_back_user("viewer")
    form = client.get("/login").get_data(as_text=True)

    response = client.post("/login", data={"name": name, "password": password,
                                           "csrf_token": csrf_token(form)})

    [cookie] = [c for c in response.headers.getlist("Set-Cookie") if c.startswith("session=")]
    attributes = {a.strip().split("=")[0].lower(): a.strip().partition("=")[2]
                  for a in cookie.split(";")[1:]}
    assert {"httponly", "samesite"} <= set(attributes) and attributes["samesite"] == "Lax"
    assert "secure" not in attributes  # served over plain HTTP here
    expires = datetime.strptime(attributes["expires"], "%a, %d %b %Y %H:%M:%S GMT")
    lasts = expires.replace(tzinfo=UTC) - datetime.now(UTC)
    assert timedelta(hours=11, minutes=59) < lasts <= timedelta(hours=12)
    assert not any(c.startswith("remember_token") for c in
                   response.headers.getlist("Set-Cookie"))


def test_the_session_cookie_is_secure_when_served_over_https(hostile_app, rolled_back_user):
    """Exploit: "Session cookies ... have no Secure flag"."""
    direct = hostile_app()
    behind_proxy = hostile_app(PROXIES=1)
    name, password = rolled_back_user("viewer")

    over_tls = direct.test_client()  # as gunicorn with --certfile serves a request
    over_tls.environ_base.update(REMOTE_ADDR="198.51.100.251")
    over_tls.base_url = "https://localhost"
    proxied = behind_proxy.test_client()
    proxied.environ_base.update(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_PROTO="https",
                                HTTP_X_FORWARDED_FOR="198.51.100.252")
    forged = direct.test_client()  # no proxy trusted: the header is the client's own word
    forged.environ_base.update(REMOTE_ADDR="198.51.100.253", HTTP_X_FORWARDED_PROTO="https")

    def cookie_of(client) -> str:
        base = getattr(client, "base_url", "http://localhost")
        form = client.get("/login", base_url=base).get_data(as_text=True)
        response = client.post("/login", base_url=base, data={
            "name": name, "password": password, "csrf_token": csrf_token(form)},
            headers={"Referer": "https://localhost/login"})  # as a browser sends over TLS
        assert response.status_code == 302
        return next(c for c in response.headers.getlist("Set-Cookie")
                    if c.startswith("session="))

    assert "; Secure" in cookie_of(over_tls)
    assert "; Secure" in cookie_of(proxied)
    assert "; Secure" not in cookie_of(forged)


@pytest.mark.parametrize("change", ["password", "disable", "role"])
def test_a_session_is_refused_after_a_password_change_a_disable_or_a_role_change(
        hostile_app, rolled_back_user, rolled_back, change):
    """Exploit: sessions outlive what should end them (issue 25 item 5)."""
    app = hostile_app()
    client = _logged_in(app, rolled_back_user)
    other_browser = client_from(app)
    assert log_in(other_browser, client.user_name, client.password).status_code == 302

    with rolled_back.begin() as session:
        {"password": lambda: services.set_password(session, client.user_name,
                                                   "a brand new password"),
         "disable": lambda: services.set_disabled(session, client.user_name, True),
         "role": lambda: services.set_role(session, client.user_name, "viewer")}[change]()

    assert not logged_in_ok(client)
    assert not logged_in_ok(other_browser)
    with rolled_back() as session:
        assert session.execute(select(LoginSession).join(User).where(
            User.name == client.user_name, LoginSession.revoked_at.is_(None))).all() == []


@pytest.mark.parametrize(("column", "age"), [("last_seen_at", timedelta(minutes=31)),
                                             ("created_at", timedelta(hours=12, minutes=1))])
def test_a_session_past_its_idle_or_absolute_lifetime_is_refused(
        hostile_app, rolled_back_user, rolled_back, column, age):
    """Exploit: "Session cookies live 31 days in the browser"."""
    app = hostile_app()
    client = _logged_in(app, rolled_back_user)
    assert logged_in_ok(client)

    with rolled_back.begin() as session:  # as if that long had passed
        session.execute(update(LoginSession)
                        .where(LoginSession.user_id == select(User.id).where(
                            User.name == client.user_name).scalar_subquery())
                        .values({column: datetime.now(UTC) - age}))

    assert not logged_in_ok(client)


def test_a_session_in_use_stays_open_within_its_idle_lifetime(hostile_app, rolled_back_user,
                                                              rolled_back):
    app = hostile_app(SESSION_IDLE_MINUTES=5)
    client = _logged_in(app, rolled_back_user)
    with rolled_back.begin() as session:  # 4 minutes idle: within 5
        session.execute(update(LoginSession)
                        .where(LoginSession.user_id == select(User.id).where(
                            User.name == client.user_name).scalar_subquery())
                        .values(last_seen_at=datetime.now(UTC) - timedelta(minutes=4)))

    assert logged_in_ok(client)
    with rolled_back() as session:
        seen = session.execute(select(LoginSession.last_seen_at).join(User)
                               .where(User.name == client.user_name)).scalar_one()
    assert datetime.now(UTC) - seen < timedelta(minutes=1)  # the request was recorded


# --- API tokens ---


def test_an_expired_token_is_refused_with_a_401_that_says_it_expired(api_app, sessions,
                                                                      make_user):
    """Exploit: "API tokens never expire"."""
    name, _ = make_user("operator")
    with sessions.begin() as session:
        row, token = services.create_token(session, name, "ci", timedelta(days=1))
        token_id, prefix = row.id, row.prefix
    client = api_app.test_client()
    bearer = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/v1/runs", headers=bearer).status_code == 200

    expired_at = datetime.now(UTC) - timedelta(seconds=1)
    with sessions.begin() as session:  # as if the day had passed
        session.execute(update(ApiToken).where(ApiToken.id == token_id)
                        .values(expires_at=expired_at))
    response = client.post("/api/v1/heal", headers=bearer, json={"cluster": "lab-ceph"})

    assert response.status_code == 401
    assert response.json == {"error": f"API token {prefix}… expired at "
                                      f"{expired_at.isoformat(timespec='seconds')}"}


def test_a_call_records_when_its_token_was_last_used(api_app, sessions, make_user):
    """Tokens "record when they were last used" (issue 25 item 5), committed by the call."""
    name, _ = make_user("viewer")
    with sessions.begin() as session:
        row, token = services.create_token(session, name, "ci")
        token_id = row.id
    before = datetime.now(UTC)

    api_app.test_client().get("/api/v1/runs", headers={"Authorization": f"Bearer {token}"})

    with sessions() as session:  # a connection of its own: what the call committed
        used = session.get(ApiToken, token_id).last_used_at
    assert used is not None and before <= used <= datetime.now(UTC)


def test_the_cli_makes_a_token_that_expires_and_refuses_a_bad_duration(invoke, make_user,
                                                                       sessions):
    """Exploit: "API tokens never expire" (the CLI's --expires-in)."""
    name, _ = make_user("viewer")

    made = invoke("token", "create", "ci", "--user", name, "--expires-in", "30d")
    bad = invoke("token", "create", "ci", "--user", name, "--expires-in", "forever")

    assert made.exit_code == 0, made.output
    with sessions() as session:
        [row] = session.execute(select(ApiToken).join(User).where(User.name == name)).scalars()
        expiry = row.expires_at - row.created_at
        events = session.execute(select(AuditEvent.action, AuditEvent.actor).where(
            AuditEvent.subject == f"token {row.id} of user {name}")).all()
    assert timedelta(days=30) - timedelta(seconds=5) < expiry <= timedelta(days=30)
    assert [(action, actor.startswith("cli:")) for action, actor in events] == [
        ("token.create", True)]
    assert (bad.exit_code, bad.output.strip()) == (
        2, "error: --expires-in 'forever' is not a duration such as 90d, 12h or 30m")
    with sessions.begin() as session:
        session.execute(delete(AuditEvent).where(AuditEvent.subject.like(f"% {name}")))


# --- the audit trail, admins only ---


@pytest.mark.parametrize("role", ["viewer", "operator"])
def test_the_audit_api_is_refused_to_an_operator_and_a_viewer(api_as, role):
    """Exploit: "No route needs the admin role"; the audit trail is the admins'."""
    client = api_as(role)

    response = client.get("/api/v1/audit")

    assert (response.status_code, response.json) == (
        403, {"error": f"this needs the admin role; {client.user_name} is "
                       f"{'an' if role == 'operator' else 'a'} {role}"})


def test_the_audit_api_lists_an_upload_a_queue_a_cancel_a_heal_and_a_user_change(
        api_as, make_user, sessions):
    """Issue 25 item 4: who uploaded, queued, cancelled, healed, or changed users, and when,
    made through the API, shown to an admin."""
    operator, admin = api_as("operator"), api_as("admin")
    since = datetime.now(UTC).isoformat()
    target, _ = make_user("viewer")
    upload = f"audited-{uuid.uuid4().hex[:8]}"
    kill_osd = operator.get("/api/v1/experiments/ceph-kill-osd").json["experiment"]

    assert operator.post("/api/v1/experiments", json={
        "name": upload, "experiment": kill_osd}).status_code == 201
    run_id = operator.post("/api/v1/runs", json={"experiment": "ceph-kill-osd",
                                                 "cluster": "lab-ceph"}).json["run_id"]
    assert operator.post(f"/api/v1/runs/{run_id}/cancel").status_code == 202
    heal = operator.post("/api/v1/heal", json={"cluster": "lab-ceph"})
    assert operator.delete(f"/api/v1/experiments/{upload}").status_code == 204
    changed = admin.patch(f"/api/v1/users/{target}", json={"role": "operator"})
    try:
        response = admin.get("/api/v1/audit", query_string={"since": since})
    finally:
        with sessions.begin() as session:
            session.execute(text("DELETE FROM procrastinate_jobs WHERE id = :id"),
                            {"id": heal.json["job_id"]})

    assert (heal.status_code, changed.status_code, response.status_code) == (202, 200, 200)
    events = [(e["actor"], e["action"], e["subject"]) for e in reversed(response.json["items"])]
    assert events == [
        (operator.user_name, "experiment.upload", f"experiment {upload}"),
        (operator.user_name, "run.queue", f"run {run_id}"),
        (operator.user_name, "run.cancel", f"run {run_id}"),
        (operator.user_name, "cluster.heal", "cluster lab-ceph"),
        (operator.user_name, "experiment.delete", f"experiment {upload}"),
        (admin.user_name, "user.role", f"user {target}"),
    ]
    assert response.json["items"][0]["detail"] == {"role": "operator"}
    assert response.json["items"][0]["address"] == "127.0.0.1"
    assert response.json["total"] == 6


def test_the_audit_api_filters_by_actor_and_action_and_pages(api_as, make_user):
    """Issue 25 item 4: GET /api/v1/audit?actor=&action=&since=&page=&per_page=."""
    admin = api_as("admin")
    since = datetime.now(UTC).isoformat()
    names = [make_user("viewer")[0] for _ in range(3)]
    for name in names:
        assert admin.patch(f"/api/v1/users/{name}", json={"disabled": True}).status_code == 200
    admin.patch(f"/api/v1/users/{names[0]}", json={"disabled": False})

    page = admin.get("/api/v1/audit", query_string={
        "since": since, "actor": admin.user_name, "action": "user.disable", "per_page": 2,
        "page": 2}).json
    bad = admin.get("/api/v1/audit", query_string={"since": "yesterday"})

    assert (page["total"], page["page"], page["per_page"]) == (3, 2, 2)
    assert [e["subject"] for e in page["items"]] == [f"user {names[0]}"]  # the oldest
    assert bad.status_code == 400
    assert bad.json["error"].startswith("since must be an ISO 8601 time")


def test_an_admin_manages_users_and_tokens_through_the_api(api_as, make_user, sessions):
    """Exploit: "No route needs the admin role": users and tokens are the admins' routes."""
    admin = api_as("admin")
    name, _ = make_user("viewer")

    made = admin.post(f"/api/v1/users/{name}/tokens", json={"name": "ci",
                                                           "expires_in_days": 7})
    used = api_as(None).get("/api/v1/runs",
                            headers={"Authorization": f"Bearer {made.json['token']}"})
    revoked = admin.delete(f"/api/v1/tokens/{made.json['id']}")
    after = api_as(None).get("/api/v1/runs",
                             headers={"Authorization": f"Bearer {made.json['token']}"})

    assert (made.status_code, used.status_code, revoked.status_code,
            after.status_code) == (201, 200, 204, 401)
    assert made.json["expires_at"] is not None and made.json["user"] == name
    too_long = admin.post(f"/api/v1/users/{name}/tokens",
                          json={"name": "ci", "expires_in_days": 10 ** 9})
    assert (too_long.status_code, too_long.json) == (
        400, {"error": "field 'expires_in_days' must be from 1 to 3660, not 1000000000"})


def test_the_audit_page_is_shown_to_an_admin_and_refused_to_an_operator(
        hostile_app, rolled_back_user, rolled_back):
    """Issue 25 item 4: the dashboard shows the trail to admins only, linked in the nav."""
    app = hostile_app()
    with rolled_back.begin() as session:
        audit.record(session, "someone", "run.queue", "run 4242", {"cluster": "lab-ceph"},
                     "192.0.2.9")
    admin = _logged_in(app, rolled_back_user, "admin")
    operator = _logged_in(app, rolled_back_user, "operator")

    page = admin.get("/audit?action=run.queue")
    refused = operator.get("/audit")

    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert re.search(r'<td data-field="actor">someone</td>\s*<td data-field="action">'
                     r'run.queue</td>\s*<td data-field="subject">run 4242</td>', html)
    assert 'href="/audit"' in html
    assert refused.status_code == 403
    assert 'href="/audit"' not in operator.get("/").get_data(as_text=True)


def test_faultline_serve_with_a_certificate_serves_https_and_a_secure_cookie(
        env, make_user, tmp_path):
    """Exploit: "Session cookies ... have no Secure flag" (`faultline serve --certfile
    --keyfile`, gunicorn's TLS, with a self-signed certificate made here)."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    name, password = make_user("viewer")
    server = subprocess.Popen(
        ["faultline", "serve", "--port", str(port), "--threads", "2",
         "--certfile", str(cert), "--keyfile", str(key)],
        env={**env, "FAULTLINE_SECRET_KEY": SECRET, "FAULTLINE_HOME": str(tmp_path)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"https://127.0.0.1:{port}"
    browser = requests.Session()
    browser.trust_env = False  # a CA bundle named in the environment would win over ours
    browser.verify = str(cert)
    try:
        deadline = time.monotonic() + 60
        while True:  # until it answers over TLS
            try:
                assert browser.get(f"{url}/healthz", timeout=2).status_code == 200
                break
            except requests.ConnectionError:
                assert server.poll() is None, server.stderr.read()
                assert time.monotonic() < deadline, "faultline serve never answered over TLS"
                time.sleep(0.2)
        form = browser.get(f"{url}/login").text
        done = browser.post(f"{url}/login", allow_redirects=False,
                            headers={"Referer": f"{url}/login"},
                            data={"name": name, "password": password,
                                  "csrf_token": csrf_token(form)})
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()

    assert done.status_code == 302, done.text[:300]
    [cookie] = [c for c in done.raw.headers.getlist("Set-Cookie") if c.startswith("session=")]
    assert "; Secure" in cookie and "; HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_faultline_serve_refuses_a_certificate_without_its_key(invoke, tmp_path):
    cert = tmp_path / "cert.pem"
    cert.write_text("not used")

    result = invoke("serve", "--certfile", str(cert))

    assert (result.exit_code, result.output.strip()) == (
        2, "error: --certfile and --keyfile go together: give both to serve over HTTPS")


def test_an_admin_follows_the_audit_link_in_chromium_and_a_logged_out_cookie_is_dead(
        database_url, make_user, sessions):
    """Issue 25 items 4 and 5 in a real browser: the admin's nav shows Audit, the page lists
    what was done; after Log out, the old cookie put back in the browser opens nothing."""
    app = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET})
    subject = f"run {uuid.uuid4().int % 10 ** 9}"
    with sessions.begin() as session:
        audit.record(session, "browser-test", "run.queue", subject, {"cluster": "lab-ceph"})
    try:
        with served(app) as url, chromium_page() as page:
            log_in_browser(page, url, *make_user("admin"))
            page.click("nav a:text('Audit')")
            page.wait_for_selector("#audit")
            row = page.locator(f"#audit tr:has(td[data-field='subject']:text-is('{subject}'))")
            shown = [row.locator(f"td[data-field='{f}']").inner_text()
                     for f in ("actor", "action")]
            cookies = page.context.cookies()
            page.click("#user button[type='submit']")  # Log out
            page.wait_for_url(f"{url}/login")
            page.context.add_cookies(cookies)  # the old cookie, replayed
            page.goto(f"{url}/audit")
            replayed_at = page.url
    finally:
        with sessions.begin() as session:
            session.execute(delete(AuditEvent).where(AuditEvent.actor == "browser-test"))

    assert shown == ["browser-test", "run.queue"]
    assert replayed_at.startswith(f"{url}/login")
