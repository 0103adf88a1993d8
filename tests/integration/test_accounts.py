"""Users, roles and API tokens on the real PostgreSQL (service.accounts.services); every test
runs in a transaction rolled back afterwards."""

from __future__ import annotations

import hashlib
import re

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select, text
from sqlalchemy.exc import IntegrityError

from service.accounts import services
from service.accounts.exceptions import (
    BadCredentials,
    InvalidName,
    InvalidRole,
    InvalidToken,
    UnknownToken,
    UnknownUser,
    UserDisabled,
    UserExists,
    WeakPassword,
)
from service.accounts.models import ApiToken, User

PASSWORD = "correct horse battery"


@pytest.fixture
def session(rolled_back):
    with rolled_back() as session:
        yield session


@pytest.fixture
def alice(session) -> User:
    return services.create_user(session, "alice", "operator", PASSWORD)


def test_password_is_stored_hashed_with_argon2_and_verifies(session, alice):
    stored = session.execute(text("SELECT password_hash FROM users WHERE name = 'alice'"))
    password_hash = stored.scalar_one()

    assert PASSWORD not in password_hash
    assert password_hash.startswith("$argon2id$")
    assert services.authenticate(session, "alice", PASSWORD).id == alice.id


def test_wrong_password_is_refused(session, alice):
    with pytest.raises(BadCredentials, match=f"^{re.escape(services.WRONG_CREDENTIALS)}$"):
        services.authenticate(session, "alice", PASSWORD + "!")


def test_unknown_user_gets_the_same_refusal_as_a_wrong_password(session):
    with pytest.raises(BadCredentials, match=f"^{re.escape(services.WRONG_CREDENTIALS)}$"):
        services.authenticate(session, "nobody", PASSWORD)


def test_disabled_user_cannot_log_in_and_the_refusal_does_not_say_so(session, alice):
    services.set_disabled(session, "alice", True)

    with pytest.raises(UserDisabled, match=f"^{re.escape(services.WRONG_CREDENTIALS)}$"):
        services.authenticate(session, "alice", PASSWORD)


def test_a_hash_made_with_weaker_parameters_is_upgraded_at_login(session, alice):
    alice.password_hash = PasswordHasher(time_cost=1, memory_cost=8192).hash(PASSWORD)
    session.flush()

    services.authenticate(session, "alice", PASSWORD)

    assert "m=8192" not in alice.password_hash
    assert services.authenticate(session, "alice", PASSWORD).id == alice.id


def test_a_second_user_of_the_same_name_is_refused(session, alice):
    with pytest.raises(UserExists, match="^user alice exists already$"):
        services.create_user(session, "alice", "viewer", PASSWORD)


@pytest.mark.parametrize(("name", "role", "password", "error", "message"), [
    ("bob", "root", PASSWORD, InvalidRole,
     "unknown role 'root': use viewer, operator or admin"),
    ("bob", "viewer", "short", WeakPassword, "a password needs at least 8 characters"),
    ("", "viewer", PASSWORD, InvalidName, "'' is not a valid user name: up to 100 letters, "
     "digits and . _ - @, starting with a letter or digit"),
    ("bob smith", "viewer", PASSWORD, InvalidName, "'bob smith' is not a valid user name: up "
     "to 100 letters, digits and . _ - @, starting with a letter or digit"),
])
def test_invalid_users_are_refused(session, name, role, password, error, message):
    with pytest.raises(error) as refused:
        services.create_user(session, name, role, password)

    assert str(refused.value) == message
    assert session.execute(select(User).where(User.name == name)).first() is None


def test_the_database_refuses_a_role_outside_the_three(session, alice):
    with pytest.raises(IntegrityError, match="ck_users_role"), session.begin_nested():
        session.execute(text("UPDATE users SET role = 'root' WHERE name = 'alice'"))


def test_set_role_changes_the_role(session, alice):
    services.set_role(session, "alice", "viewer")

    assert services.authenticate(session, "alice", PASSWORD).role == "viewer"


def test_set_role_of_an_unknown_user_is_refused(session):
    with pytest.raises(UnknownUser, match="^user nobody does not exist$"):
        services.set_role(session, "nobody", "admin")


def test_token_is_stored_as_its_sha256_only(session, alice):
    row, token = services.create_token(session, "alice", "ci")

    stored = session.execute(text("SELECT * FROM api_tokens WHERE id = :id"),
                             {"id": row.id}).mappings().one()
    assert token.startswith("fl_") and len(token) == 3 + 43  # 256 random bits
    assert stored["token_hash"] == hashlib.sha256(token.encode()).hexdigest()
    assert token not in {str(v) for v in stored.values()}
    assert stored["prefix"] == token[:9]


def test_token_finds_its_user_and_records_its_use(session, alice):
    row, token = services.create_token(session, "alice", "ci")

    assert services.user_for_token(session, token).id == alice.id
    assert row.last_used_at is not None


def test_revoked_token_is_refused(session, alice):
    row, token = services.create_token(session, "alice", "ci")

    services.revoke_token(session, row.id)

    with pytest.raises(InvalidToken, match="^invalid or revoked API token$"):
        services.user_for_token(session, token)


def test_unknown_token_is_refused(session):
    with pytest.raises(InvalidToken, match="^invalid or revoked API token$"):
        services.user_for_token(session, "fl_" + "x" * 43)


def test_token_of_a_disabled_user_is_refused(session, alice):
    _, token = services.create_token(session, "alice", "ci")

    services.set_disabled(session, "alice", True)

    with pytest.raises(InvalidToken):
        services.user_for_token(session, token)


def test_revoking_a_token_twice_keeps_the_first_time(session, alice):
    row, _ = services.create_token(session, "alice", "ci")
    first = services.revoke_token(session, row.id).revoked_at

    assert services.revoke_token(session, row.id).revoked_at == first


def test_revoking_an_unknown_token_is_refused(session):
    with pytest.raises(UnknownToken, match="^API token 987654 does not exist$"):
        services.revoke_token(session, 987654)


def test_deleting_a_user_deletes_their_tokens(session, alice):
    row, _ = services.create_token(session, "alice", "ci")

    session.execute(text("DELETE FROM users WHERE name = 'alice'"))

    assert session.execute(select(ApiToken).where(ApiToken.id == row.id)).first() is None
