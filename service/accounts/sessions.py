"""Dashboard sessions kept on the server. The cookie carries only the session's random id;
each request checks its row, so a session ends for good at logout, on its user's password
change, role change or disable (all of that user's sessions), after its idle lifetime
without a request, and after its absolute lifetime whatever it does.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import update
from sqlalchemy.orm import Session

from .models import LoginSession, User

# last_seen_at is written at most this often, not at each of the live page's polls
TOUCH_EVERY = timedelta(seconds=60)


@dataclass(frozen=True)
class SessionLifetimes:
    """30 minutes idle: a dashboard left open on a shared screen ends soon (the live run page
    polls, so watching a run keeps its session); 12 hours absolute: one working day, then a
    new login, so a stolen cookie is not good for long."""

    idle: timedelta = timedelta(minutes=30)
    absolute: timedelta = timedelta(hours=12)


def open_session(session: Session, user: User, address: str | None = None) -> str:
    """A new session for the user; returns its id (256 random bits)."""
    session_id = secrets.token_urlsafe(32)
    now = datetime.now(UTC)
    session.add(LoginSession(id=session_id, user_id=user.id, created_at=now, last_seen_at=now,
                             address=address[:64] if address else None))
    session.flush()
    return session_id


def user_of_session(session: Session, session_id: str,
                    lifetimes: SessionLifetimes) -> User | None:
    """The session's user, or None if the session is unknown, revoked, idle or too old, or
    its user disabled; records that it was seen."""
    row = session.get(LoginSession, session_id) if session_id else None
    if row is None or row.revoked_at is not None or row.user.disabled:
        return None
    now = datetime.now(UTC)
    if now - row.last_seen_at > lifetimes.idle or now - row.created_at > lifetimes.absolute:
        row.revoked_at = now
        session.flush()
        return None
    if now - row.last_seen_at > TOUCH_EVERY:
        row.last_seen_at = now
        session.flush()
    return row.user


def end_session(session: Session, session_id: str) -> None:
    session.execute(update(LoginSession).where(LoginSession.id == session_id,
                                               LoginSession.revoked_at.is_(None))
                    .values(revoked_at=datetime.now(UTC)))


def end_user_sessions(session: Session, user: User) -> None:
    """Revoke every open session of the user."""
    session.execute(update(LoginSession).where(LoginSession.user_id == user.id,
                                               LoginSession.revoked_at.is_(None))
                    .values(revoked_at=datetime.now(UTC)))
