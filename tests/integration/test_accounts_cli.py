"""`faultline user ...` and `faultline token ...` through the CLI runner, on the real
PostgreSQL (the commands commit; the users they made are deleted afterwards)."""

from __future__ import annotations

import getpass
import uuid

import pytest
from sqlalchemy import delete, select

from service.accounts import services
from service.accounts import sessions as server_sessions
from service.accounts.exceptions import InvalidToken
from service.accounts.models import ApiToken, AuditEvent, LoginSession, User

PASSWORD = "correct horse battery"


@pytest.fixture
def name(sessions):
    """A user name of this test only; that user is deleted afterwards."""
    name = f"cli-{uuid.uuid4().hex[:10]}"
    yield name
    with sessions.begin() as session:
        session.execute(delete(User).where(User.name == name))
        session.execute(delete(AuditEvent).where(AuditEvent.subject.like(f"% {name}")))


def add(invoke, name: str, role: str = "operator"):
    return invoke("user", "add", name, "--role", role, "--password-stdin", input=PASSWORD + "\n")


def test_user_add_creates_a_user_whose_password_works(invoke, name, sessions):
    result = add(invoke, name)

    assert result.exit_code == 0, result.output
    assert result.stdout == f"user {name} added, role operator\n"
    with sessions() as session:
        assert services.authenticate(session, name, PASSWORD).role == "operator"


def test_user_add_asks_for_the_password_twice_without_password_stdin(invoke, name, sessions):
    result = invoke("user", "add", name, "--role", "viewer",
                    input=f"{PASSWORD}\n{PASSWORD}\n")

    assert result.exit_code == 0, result.output
    with sessions() as session:
        assert services.authenticate(session, name, PASSWORD).role == "viewer"


def test_user_add_refuses_an_existing_name_with_one_line_and_exit_2(invoke, name):
    add(invoke, name)

    result = add(invoke, name, role="admin")

    assert result.exit_code == 2
    assert result.output == f"error: user {name} exists already\n"


def test_user_add_refuses_a_short_password_and_adds_nobody(invoke, name, sessions):
    result = invoke("user", "add", name, "--role", "viewer", "--password-stdin",
                    input="short\n")

    assert (result.exit_code, result.output) == (
        2, "error: a password needs at least 8 characters\n")
    with sessions() as session:
        assert session.execute(select(User).where(User.name == name)).first() is None


def test_user_list_shows_names_and_roles(invoke, name):
    add(invoke, name, role="viewer")

    result = invoke("user", "list")

    assert result.exit_code == 0, result.output
    assert [line.split()[:2] for line in result.stdout.splitlines()
            if line.startswith(name)] == [[name, "viewer"]]


def test_user_set_role_changes_the_role(invoke, name, sessions):
    add(invoke, name, role="viewer")

    result = invoke("user", "set-role", name, "admin")

    assert (result.exit_code, result.stdout) == (0, f"user {name} now has the role admin\n")
    with sessions() as session:
        assert services.authenticate(session, name, PASSWORD).role == "admin"


def test_user_set_role_of_an_unknown_user_fails_with_one_line(invoke):
    result = invoke("user", "set-role", "nobody-at-all", "admin")

    assert (result.exit_code, result.output) == (2, "error: user nobody-at-all does not exist\n")


def test_token_create_prints_the_token_once_and_stores_its_hash(invoke, name, sessions):
    add(invoke, name)

    result = invoke("token", "create", "ci", "--user", name)

    assert result.exit_code == 0, result.output
    token = result.stdout.strip()
    assert token.startswith("fl_")
    assert "shown only now" in result.stderr
    with sessions.begin() as session:
        assert services.user_for_token(session, token).name == name


def test_token_revoke_makes_the_token_useless(invoke, name, sessions):
    add(invoke, name)
    token = invoke("token", "create", "ci", "--user", name).stdout.strip()
    with sessions() as session:
        token_id = session.execute(select(ApiToken.id).join(User)
                                   .where(User.name == name)).scalar_one()

    result = invoke("token", "revoke", str(token_id))

    assert result.exit_code == 0, result.output
    assert result.stdout == f"token {token_id} ({token[:9]}…, 'ci' of {name}) revoked\n"
    with sessions() as session, pytest.raises(InvalidToken):
        services.user_for_token(session, token)


def test_user_set_password_changes_it_and_ends_the_users_sessions(invoke, name, sessions):
    add(invoke, name)
    with sessions.begin() as session:
        server_sessions.open_session(session, services.user_named(session, name))

    result = invoke("user", "set-password", name, "--password-stdin",
                    input="a new long password\n")

    assert result.exit_code == 0, result.output
    assert result.stdout == f"user {name}: password changed, open sessions ended\n"
    with sessions() as session:
        assert services.authenticate(session, name, "a new long password").name == name
        assert session.execute(select(LoginSession.revoked_at).join(User)
                               .where(User.name == name)).scalar_one() is not None


def test_user_commands_go_on_the_audit_trail_as_the_local_account(invoke, name, sessions):
    add(invoke, name)
    invoke("user", "set-role", name, "admin")
    invoke("user", "disable", name)
    invoke("user", "enable", name)

    with sessions() as session:
        events = session.execute(select(AuditEvent.actor, AuditEvent.action, AuditEvent.detail)
                                 .where(AuditEvent.subject == f"user {name}")
                                 .order_by(AuditEvent.id)).all()
    assert [(action, detail) for _, action, detail in events] == [
        ("user.create", {"role": "operator"}), ("user.role", {"role": "admin"}),
        ("user.disable", None), ("user.enable", None)]
    assert {actor for actor, _, _ in events} == {f"cli:{getpass.getuser()}"}
