"""Every route that accepts a method other than GET refuses an anonymous request (401) and a
viewer (403): found by walking the app's URL map, so a new route cannot be forgotten."""

from __future__ import annotations

from web_login import csrf_token, log_in

from service.accounts import services

SAFE = {"GET", "HEAD", "OPTIONS"}
# Mutating routes a viewer may use, and why; each has a test of its own.
VIEWER_MAY = {
    "auth.login": "the login form is public (test_auth_web: its CSRF token is required)",
    "auth.logout": "anyone logged in may end their own session",
}
# Mutating routes for a machine's shared token, not a user's: a user's session or token is
# refused with 401 like no token at all (test_alert_webhook covers the shared token).
SHARED_TOKEN = {"api.receive_alerts": "Alertmanager's webhook"}


def mutating_requests(app) -> list[tuple[str, str, str]]:
    """(endpoint, method, url) of every rule with a non-GET method; 1 for each URL part."""
    adapter = app.url_map.bind("localhost")
    return [(rule.endpoint, method,
             adapter.build(rule.endpoint, dict.fromkeys(rule.arguments, 1), method=method))
            for rule in app.url_map.iter_rules() for method in sorted(rule.methods - SAFE)]


def test_the_walk_sees_the_routes_it_must(app):
    endpoints = {endpoint for endpoint, _, _ in mutating_requests(app)}

    assert {"auth.login", "auth.logout", "probe.operate", "probe.administer"} <= endpoints
    assert {"api.create_run", "api.cancel_run", "api.upload_experiment",
            "api.delete_experiment", "api.create_schedule", "api.change_schedule",
            "api.delete_schedule", "api.heal_cluster", "api.receive_alerts"} <= endpoints


def test_every_mutating_route_refuses_anonymous_requests_with_401(app, probe_calls):
    anonymous = app.test_client()

    answered = {(endpoint, method): anonymous.open(url, method=method).status_code
                for endpoint, method, url in mutating_requests(app)
                if endpoint != "auth.login"}

    assert answered == dict.fromkeys(answered, 401)
    assert probe_calls == []


def test_every_mutating_route_refuses_a_viewer_session_with_403(app, rolled_back_user,
                                                                 probe_calls):
    viewer = app.test_client()
    assert log_in(viewer, *rolled_back_user("viewer")).status_code == 302
    token = csrf_token(viewer.get("/").get_data(as_text=True))  # so CSRF is not what refuses

    answered = {(endpoint, method): viewer.open(url, method=method,
                                                data={"csrf_token": token}).status_code
                for endpoint, method, url in mutating_requests(app)
                if endpoint not in VIEWER_MAY}

    assert answered == {key: 401 if key[0] in SHARED_TOKEN else 403 for key in answered}
    assert probe_calls == []


def test_every_mutating_route_refuses_a_viewer_token_with_403(app, rolled_back,
                                                               rolled_back_user, probe_calls):
    name, _ = rolled_back_user("viewer")
    with rolled_back.begin() as session:
        _, token = services.create_token(session, name, "ci")
    client = app.test_client()

    answered = {(endpoint, method): client.open(
                    url, method=method, headers={"Authorization": f"Bearer {token}"}
                ).status_code
                for endpoint, method, url in mutating_requests(app)
                if endpoint not in VIEWER_MAY}

    assert answered == {key: 401 if key[0] in SHARED_TOKEN else 403 for key in answered}
    assert probe_calls == []
