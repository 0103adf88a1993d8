"""What the web and the CLI do with users and tokens.

Each function works in the caller's session and flushes; the caller commits, so a request
or a command is one transaction. Errors are the domain exceptions of `exceptions`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from . import audit, passwords, sessions, throttle, tokens
from .exceptions import (
    BadCredentials,
    InvalidName,
    InvalidToken,
    InvalidTokenLifetime,
    TokenExpired,
    UnknownToken,
    UnknownUser,
    UserDisabled,
    UserExists,
)
from .models import ApiToken, User
from .roles import check_role

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,99}")
# never says what failed: an unknown name, a wrong password, a disabled user, a lock
WRONG_CREDENTIALS = "wrong user name or password, or too many failed logins: try again later"
MAX_TOKEN_LIFETIME = timedelta(days=3660)  # ten years; past that, say no expiry


def check_new_user(session: Session, name: str, role: str) -> None:
    """Everything create_user checks before hashing, so the CLI can refuse before it asks
    for a password."""
    if not NAME.fullmatch(name):
        raise InvalidName(f"{name!r} is not a valid user name: up to 100 letters, digits "
                              f"and . _ - @, starting with a letter or digit")
    check_role(role)
    if _find_user(session, name) is not None:
        raise UserExists(f"user {name} exists already")


def create_user(session: Session, name: str, role: str, password: str) -> User:
    check_new_user(session, name, role)
    user = User(name=name, role=role, password_hash=passwords.hash_password(password))
    try:
        with session.begin_nested():
            session.add(user)
    except IntegrityError as exc:  # added by someone else since the check
        raise UserExists(f"user {name} exists already") from exc
    return user


def authenticate(session: Session, name: str, password: str) -> User:
    user = _find_user(session, name)
    if user is None:
        passwords.burn_verify_time(password)
        raise BadCredentials(WRONG_CREDENTIALS)
    if not passwords.verify(user.password_hash, password):
        raise BadCredentials(WRONG_CREDENTIALS)
    if user.disabled:  # told only after the right password, so it must not say so
        raise UserDisabled(WRONG_CREDENTIALS)
    if passwords.needs_rehash(user.password_hash):
        # No strength check: the password was accepted when it was set.
        user.password_hash = passwords.hasher().hash(password)
        session.flush()
    return user


def log_in(session: Session, name: str, password: str, address: str,
           limits: throttle.LoginLimits) -> User:
    """authenticate, throttled: a locked account or address is refused, right password or
    not, with the same message and in the same time; a failure is recorded in `session`,
    so the caller must commit it even as it shows the refusal."""
    if throttle.locks(session, name, address, limits):
        passwords.burn_verify_time(password)
        raise BadCredentials(WRONG_CREDENTIALS)
    try:
        user = authenticate(session, name, password)
    except BadCredentials:
        throttle.record_failure(session, name, address)
        minutes = int(limits.lock.total_seconds() // 60)
        for locked in throttle.locks(session, name, address, limits):  # this failure locked it
            audit.record(session, "anonymous", "login.lock", locked,
                         {"address": address, "for_minutes": minutes}, address)
        raise
    throttle.clear_account(session, name)
    return user


def list_users(session: Session) -> list[User]:
    return list(session.execute(select(User).order_by(User.name)).scalars())


def set_role(session: Session, name: str, role: str) -> User:
    check_role(role)
    user = user_named(session, name)
    if user.role != role:
        user.role = role
        sessions.end_user_sessions(session, user)  # a new role, a new login
    session.flush()
    return user


def set_password(session: Session, name: str, password: str) -> User:
    """A new password; ends every open session of the user."""
    user = user_named(session, name)
    user.password_hash = passwords.hash_password(password)
    sessions.end_user_sessions(session, user)
    session.flush()
    return user


def set_disabled(session: Session, name: str, disabled: bool) -> User:
    """A disabled user can neither log in nor use their tokens; their open sessions are
    revoked."""
    user = user_named(session, name)
    user.disabled = disabled
    if disabled:
        sessions.end_user_sessions(session, user)
    session.flush()
    return user


def create_token(session: Session, user_name: str, token_name: str,
                 expires_in: timedelta | None = None) -> tuple[ApiToken, str]:
    """A new token for the user: its row, and the token itself, which is not stored and
    cannot be shown again. With `expires_in`, it is refused once that time has passed."""
    if not token_name.strip() or len(token_name) > 100:
        raise InvalidName("a token needs a name of 1 to 100 characters")
    if expires_in is not None and not timedelta(0) < expires_in <= MAX_TOKEN_LIFETIME:
        raise InvalidTokenLifetime(f"a token's lifetime must be more than 0 and at most "
                                   f"{MAX_TOKEN_LIFETIME.days} days, not {expires_in}")
    user = user_named(session, user_name)
    token = tokens.new_token()
    now = datetime.now(UTC)
    row = ApiToken(user=user, name=token_name, token_hash=tokens.token_hash(token),
                   prefix=tokens.shown_prefix(token), created_at=now,
                   expires_at=now + expires_in if expires_in else None)
    session.add(row)
    session.flush()
    return row, token


def user_for_token(session: Session, token: str) -> User:
    """The user a bearer token acts as; records when the token was last used."""
    row = session.execute(select(ApiToken)
                          .where(ApiToken.token_hash == tokens.token_hash(token))
                          ).scalar_one_or_none()
    if row is None or row.revoked_at is not None or row.user.disabled:
        raise InvalidToken("invalid or revoked API token")
    now = datetime.now(UTC)
    if row.expires_at is not None and row.expires_at <= now:
        raise TokenExpired(f"API token {row.prefix}… expired at "
                           f"{row.expires_at.isoformat(timespec='seconds')}")
    row.last_used_at = now
    session.flush()
    return row.user


def list_tokens(session: Session, user_name: str | None = None) -> list[ApiToken]:
    query = select(ApiToken).order_by(ApiToken.id)
    if user_name is not None:
        query = query.where(ApiToken.user_id == user_named(session, user_name).id)
    return list(session.execute(query).scalars())


def revoke_token(session: Session, token_id: int) -> ApiToken:
    """Revoke a token for good (revoking it again keeps the first revocation's time)."""
    row = session.get(ApiToken, token_id)
    if row is None:
        raise UnknownToken(f"API token {token_id} does not exist")
    if row.revoked_at is None:
        row.revoked_at = datetime.now(UTC)
        session.flush()
    return row


def _find_user(session: Session, name: str) -> User | None:
    return session.execute(select(User).where(User.name == name)).scalar_one_or_none()


def user_named(session: Session, name: str) -> User:
    """The user of that name; UnknownUser if there is none."""
    user = _find_user(session, name)
    if user is None:
        raise UnknownUser(f"user {name} does not exist")
    return user
