"""Who may do what on the web app: login, logout, roles, CSRF, API tokens (Flask test client,
real PostgreSQL, every test rolled back)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from web_login import csrf_token, log_in

from service.accounts import services
from service.web.access import NOT_LOGGED_IN


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def logged_in(app, rolled_back_user):
    """A test client logged in with a new user of the given role."""
    def logged_in(role: str):
        client = app.test_client()
        name, password = rolled_back_user(role)
        assert log_in(client, name, password).status_code == 302
        client.user_name = name
        return client
    return logged_in


@pytest.fixture
def token_of(rolled_back, rolled_back_user):
    """A new API token of a new user of the given role."""
    def token_of(role: str) -> str:
        name, _ = rolled_back_user(role)
        with rolled_back.begin() as session:
            return services.create_token(session, name, "ci")[1]
    return token_of


def post_form(client, url: str, **fields):
    """A form post as the dashboard sends it: with the CSRF token of the session's pages."""
    token = csrf_token(client.get("/").get_data(as_text=True))
    return client.post(url, data={"csrf_token": token, **fields})


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_anonymous_page_request_redirects_to_login_and_back(client):
    response = client.get("/compare?runs=1,2")

    assert response.status_code == 302
    location = urlsplit(response.headers["Location"])
    assert location.path == "/login"
    assert parse_qs(location.query)["next"] == ["/compare?runs=1,2"]


@pytest.mark.parametrize(("path", "headers"), [
    ("/runs/1/series.json", {}),
    ("/", {"Accept": "application/json"}),
    ("/api/runs", {}),
])
def test_anonymous_json_request_gets_401_json(client, path, headers):
    response = client.get(path, headers=headers)

    assert response.status_code == 401
    assert response.json == {"error": NOT_LOGGED_IN}
    assert response.headers["WWW-Authenticate"] == 'Bearer realm="faultline"'


def test_health_check_login_form_and_vendor_files_need_no_login(client):
    assert client.get("/healthz").json == {"status": "ok"}
    assert client.get("/login").status_code == 200
    assert client.get("/vendor/unknown.js").status_code == 404  # not a redirect to /login


def test_login_opens_a_session_that_shows_the_user_and_role(client, rolled_back_user):
    name, password = rolled_back_user("operator")

    response = log_in(client, name, password)

    assert (response.status_code, response.headers["Location"]) == (302, "/")
    page = client.get("/").get_data(as_text=True)
    assert f'<span data-field="user">{name}</span>' in page
    assert '<span data-field="role">operator</span>' in page
    assert 'action="/logout"' in page


def test_login_returns_to_the_page_asked_for(client, rolled_back_user):
    name, password = rolled_back_user("viewer")
    form = client.get("/login?next=/compare%3Fruns%3D1,2").get_data(as_text=True)

    response = client.post("/login?next=/compare%3Fruns%3D1,2", data={
        "name": name, "password": password, "csrf_token": csrf_token(form)})

    assert response.headers["Location"] == "/compare?runs=1,2"


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/", "/\\evil.example",
                                    "javascript:alert(1)"])
def test_login_never_redirects_to_another_site(client, rolled_back_user, target):
    name, password = rolled_back_user("viewer")
    form = client.get("/login").get_data(as_text=True)

    response = client.post("/login", query_string={"next": target}, data={
        "name": name, "password": password, "csrf_token": csrf_token(form)})

    assert response.headers["Location"] == "/"


def test_wrong_password_is_refused_and_opens_no_session(client, rolled_back_user):
    name, password = rolled_back_user("operator")

    response = log_in(client, name, password + "x")

    assert response.status_code == 401
    assert "wrong user name or password" in response.get_data(as_text=True)
    assert client.get("/").status_code == 302


def test_login_form_without_its_csrf_token_is_refused(client, rolled_back_user):
    name, password = rolled_back_user("operator")

    response = client.post("/login", data={"name": name, "password": password})

    assert response.status_code == 400
    assert "The CSRF token is missing." in response.get_data(as_text=True)
    assert client.get("/").status_code == 302


def test_logout_ends_the_session(logged_in):
    client = logged_in("viewer")

    response = post_form(client, "/logout")

    assert (response.status_code, response.headers["Location"]) == (302, "/login")
    assert client.get("/").status_code == 302


def test_viewer_reads_pages_and_json(logged_in):
    client = logged_in("viewer")

    assert client.get("/").status_code == 200
    assert client.get("/runs/987654/series.json").status_code == 404  # past the auth


def test_viewer_post_gets_403_and_changes_nothing(logged_in, probe_calls):
    client = logged_in("viewer")

    response = post_form(client, "/probe/operate")

    assert response.status_code == 403
    assert (f"this needs the operator role; {client.user_name} is a viewer"
            in response.get_data(as_text=True))
    assert probe_calls == []


def test_operator_session_post_with_the_csrf_token_is_accepted(logged_in, probe_calls):
    response = post_form(logged_in("operator"), "/probe/operate")

    assert response.status_code == 200
    assert probe_calls == ["operate"]


def test_operator_session_post_without_the_csrf_token_is_refused(logged_in, probe_calls):
    response = logged_in("operator").post("/probe/operate")

    assert response.status_code == 400
    assert "The CSRF token is missing." in response.get_data(as_text=True)
    assert probe_calls == []


def test_csrf_token_of_another_session_is_refused(logged_in, probe_calls):
    other_token = csrf_token(logged_in("operator").get("/").get_data(as_text=True))

    response = logged_in("operator").post("/probe/operate", data={"csrf_token": other_token})

    assert response.status_code == 400
    assert probe_calls == []


def test_bearer_token_acts_as_its_user_without_csrf_token_or_cookie(client, token_of,
                                                                    probe_calls):
    response = client.post("/probe/operate", headers=bearer(token_of("operator")))

    assert response.status_code == 200
    assert probe_calls == ["operate"]
    assert "Set-Cookie" not in response.headers


def test_viewer_bearer_post_gets_403_json(client, token_of, probe_calls):
    response = client.post("/probe/operate", headers=bearer(token_of("viewer")))

    assert response.status_code == 403
    assert response.json["error"].startswith("this needs the operator role; ")
    assert probe_calls == []


def test_revoked_token_gets_401(client, rolled_back, rolled_back_user, probe_calls):
    name, _ = rolled_back_user("operator")
    with rolled_back.begin() as session:
        row, token = services.create_token(session, name, "ci")
        services.revoke_token(session, row.id)

    response = client.post("/probe/operate", headers=bearer(token))

    assert response.status_code == 401
    assert response.json == {"error": "invalid or revoked API token"}
    assert probe_calls == []


def test_other_authorization_schemes_get_401(client):
    response = client.get("/", headers={"Authorization": "Basic YWxpY2U6c2VjcmV0"})

    assert response.status_code == 401
    assert response.json == {"error": "send the API token as 'Authorization: Bearer <token>'"}


def test_admin_route_refuses_an_operator_and_accepts_an_admin(logged_in, probe_calls):
    operator = logged_in("operator")
    refused = post_form(operator, "/probe/administer")

    accepted = post_form(logged_in("admin"), "/probe/administer")

    assert refused.status_code == 403
    assert (f"this needs the admin role; {operator.user_name} is an operator"
            in refused.get_data(as_text=True))
    assert accepted.status_code == 200
    assert probe_calls == ["administer"]


def test_a_role_change_ends_the_open_session_and_the_new_login_has_the_role(
        app, logged_in, rolled_back, rolled_back_user, probe_calls):
    client = logged_in("viewer")
    with rolled_back.begin() as session:
        services.set_role(session, client.user_name, "operator")

    assert client.get("/").status_code == 302  # back to the login form
    name, password = rolled_back_user("viewer")
    again = app.test_client()
    assert log_in(again, name, password).status_code == 302
    with rolled_back.begin() as session:
        services.set_role(session, name, "operator")
    assert log_in(again, name, password).status_code == 302
    assert post_form(again, "/probe/operate").status_code == 200


def test_a_disabled_user_is_logged_out_at_the_next_request(logged_in, rolled_back):
    client = logged_in("operator")
    with rolled_back.begin() as session:
        services.set_disabled(session, client.user_name, True)

    assert client.get("/").status_code == 302
