"""Who may call the API: every mutating endpoint refuses an anonymous request (401) and a
viewer's token (403) and changes nothing, with real resources in place that an operator
would have changed; every endpoint refuses an anonymous request."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from sqlalchemy import text

from service.web.access import NOT_LOGGED_IN

REPO = Path(__file__).resolve().parents[2]
KILL_OSD = json.loads((REPO / "experiments" / "ceph-kill-osd.json").read_text())
SAFE = {"GET", "HEAD", "OPTIONS"}

# every mutating endpoint of the API, with a body an operator would get a 2xx for
MUTATIONS = [
    ("POST", "/api/v1/runs", {"experiment": "ceph-kill-osd", "cluster": "lab-ceph"}),
    ("POST", "/api/v1/runs/{run_id}/cancel", None),
    ("POST", "/api/v1/experiments", {"name": "refused-upload", "experiment": KILL_OSD}),
    ("DELETE", "/api/v1/experiments/{upload}", None),
    ("POST", "/api/v1/schedules", {"name": "refused", "cron": "0 2 * * *",
                                   "experiment": "ceph-kill-osd", "clusters": ["lab-ceph"]}),
    ("PATCH", "/api/v1/schedules/{schedule_id}", {"cron": "0 3 * * *"}),
    ("DELETE", "/api/v1/schedules/{schedule_id}", None),
    ("POST", "/api/v1/heal", {"cluster": "lab-ceph"}),
    ("POST", "/api/v1/users", {"name": "refused-user", "role": "admin",
                               "password": "a long enough password"}),
    ("PATCH", "/api/v1/users/{user}", {"role": "admin"}),
    ("POST", "/api/v1/users/{user}/tokens", {"name": "refused"}),
    ("DELETE", "/api/v1/tokens/{token_id}", None),
]
# the routes that need an admin: users, tokens (the audit trail is a GET, tested elsewhere)
ADMIN_ONLY = {path for _, path, _ in MUTATIONS if path.startswith(("/api/v1/users",
                                                                   "/api/v1/tokens"))}
# Alertmanager's webhook takes the shared alert token, never a user's (test_alert_webhook)
SHARED_TOKEN = {("POST", "/api/v1/alerts")}


def _state(sessions) -> dict:
    """Everything the API can change."""
    queries = {
        "runs": "SELECT id, status FROM runs ORDER BY id",
        "jobs": "SELECT id, status FROM procrastinate_jobs ORDER BY id",
        "schedules": "SELECT id, name, cron, enabled FROM schedules ORDER BY id",
        "uploads": "SELECT id, name FROM uploaded_experiments ORDER BY id",
        "users": "SELECT id, name, role, disabled, password_hash FROM users ORDER BY id",
        "tokens": "SELECT id, revoked_at FROM api_tokens ORDER BY id",
        "audit": "SELECT count(*) FROM audit_events",
    }
    with sessions() as session:
        return {name: session.execute(text(sql)).all() for name, sql in queries.items()}


@pytest.fixture
def resources(api_as, api_token):
    """A queued run, an upload and a schedule, made by an operator; a user with a token."""
    operator = api_as("operator")
    user, _ = api_token("viewer")
    upload = f"kept-{uuid.uuid4().hex[:8]}"
    assert operator.post("/api/v1/experiments", json={
        "name": upload, "experiment": KILL_OSD}).status_code == 201
    run = operator.post("/api/v1/runs", json={"experiment": "ceph-kill-osd",
                                              "cluster": "lab-ceph"})
    schedule = operator.post("/api/v1/schedules", json={
        "name": f"kept-{upload}", "cron": "0 2 * * *", "experiment": "ceph-kill-osd",
        "clusters": ["lab-ceph"]})
    assert (run.status_code, schedule.status_code) == (202, 201)
    with operator.application.extensions["faultline.sessions"]() as session:
        token_id = session.execute(text("SELECT t.id FROM api_tokens t JOIN users u "
                                        "ON u.id = t.user_id WHERE u.name = :name"),
                                   {"name": user}).scalar_one()
    return {"run_id": run.json["run_id"], "upload": upload, "schedule_id": schedule.json["id"],
            "user": user, "token_id": token_id}


def _call(client, method: str, path: str, body, resources):
    url = path.format(**resources)
    if body is None:
        return client.open(url, method=method)
    return client.open(url, method=method, json=body)


def test_the_table_holds_every_mutating_route_of_the_api(api_app):
    routes = {(method, rule.rule) for rule in api_app.url_map.iter_rules()
              if rule.rule.startswith("/api/") for method in rule.methods - SAFE}
    table = {(method, path.replace("{run_id}", "<int:run_id>")
              .replace("{upload}", "<name>").replace("{schedule_id}", "<int:schedule_id>")
              .replace("{user}", "<name>").replace("{token_id}", "<int:token_id>"))
             for method, path, _ in MUTATIONS}

    assert routes == table | SHARED_TOKEN


@pytest.mark.parametrize(("method", "path", "body"), MUTATIONS)
def test_an_anonymous_mutation_is_401_and_changes_nothing(api_as, resources, sessions, method,
                                                          path, body):
    before = _state(sessions)

    response = _call(api_as(None), method, path, body, resources)

    assert (response.status_code, response.json) == (401, {"error": NOT_LOGGED_IN})
    assert _state(sessions) == before


@pytest.mark.parametrize(("method", "path", "body"), MUTATIONS)
def test_a_viewer_mutation_is_403_and_changes_nothing(api_as, resources, sessions, method, path,
                                                      body):
    viewer = api_as("viewer")
    before = _state(sessions)

    response = _call(viewer, method, path, body, resources)

    role = "admin" if path in ADMIN_ONLY else "operator"
    assert (response.status_code, response.json) == (
        403, {"error": f"this needs the {role} role; {viewer.user_name} is a viewer"})
    assert _state(sessions) == before


@pytest.mark.parametrize(("method", "path", "body"),
                         [m for m in MUTATIONS if m[1] in ADMIN_ONLY])
def test_an_operator_changing_users_or_tokens_is_403_and_changes_nothing(
        api_as, resources, sessions, method, path, body):
    operator = api_as("operator")
    before = _state(sessions)

    response = _call(operator, method, path, body, resources)

    assert (response.status_code, response.json) == (
        403, {"error": f"this needs the admin role; {operator.user_name} is an operator"})
    assert _state(sessions) == before


def test_every_api_read_refuses_an_anonymous_request(api_app):
    adapter = api_app.url_map.bind("localhost")
    urls = [adapter.build(rule.endpoint, dict.fromkeys(rule.arguments, 1))
            for rule in api_app.url_map.iter_rules()
            if rule.rule.startswith("/api/") and "GET" in rule.methods]
    client = api_app.test_client()

    answered = {url: client.get(url).status_code for url in urls}

    assert len(answered) == 18
    assert answered == dict.fromkeys(answered, 401)


def test_a_revoked_or_made_up_token_is_401(api_app):
    response = api_app.test_client().get("/api/v1/runs",
                                         headers={"Authorization": "Bearer made-up"})

    assert (response.status_code, response.json) == (
        401, {"error": "invalid or revoked API token"})
