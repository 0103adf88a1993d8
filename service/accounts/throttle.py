"""Failed logins, counted in PostgreSQL so that every web process throttles alike.

`limit` failures of one account within `window` lock that account for `lock` after the last
of them, whatever address tries it; `address_limit` failures from one client address (any
names) lock that address the same way, so one address cannot try name after name. A refused
attempt while locked is not counted again: the lock ends on time rather than being kept up
for ever by whoever keeps knocking. A successful login clears its account's failures.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from .models import LoginFailure

KEPT = timedelta(days=1)  # failures older than this are deleted as new ones come


@dataclass(frozen=True)
class LoginLimits:
    """5 failures in 15 minutes lock an account for 15 minutes: a user who mistypes a few
    times is not stopped, a guesser gets 20 tries an hour. An address gets more (20), since
    several users may share one (a NAT, a proxy)."""

    limit: int = 5
    address_limit: int = 20
    window: timedelta = timedelta(minutes=15)
    lock: timedelta = timedelta(minutes=15)


def locks(session: Session, name: str, address: str, limits: LoginLimits) -> list[str]:
    """What is locked of the two: `user NAME`, `address ADDRESS`; empty if neither."""
    now = datetime.now(UTC)
    return ([f"user {name}"] if _locked(session, LoginFailure.name == name, limits.limit,
                                        limits, now) else []) + (
        [f"address {address}"] if _locked(session, LoginFailure.address == address,
                                          limits.address_limit, limits, now) else [])


def record_failure(session: Session, name: str, address: str) -> None:
    session.execute(delete(LoginFailure).where(LoginFailure.at < datetime.now(UTC) - KEPT))
    session.add(LoginFailure(name=name[:200], address=address[:64]))
    session.flush()


def clear_account(session: Session, name: str) -> None:
    session.execute(delete(LoginFailure).where(LoginFailure.name == name))


def _locked(session: Session, which, limit: int, limits: LoginLimits, now: datetime) -> bool:
    """Whether the last `limit` failures fell within the window, the last of them less than
    the lock's length ago."""
    times = list(session.execute(select(LoginFailure.at).where(which)
                                 .order_by(LoginFailure.at.desc()).limit(limit)).scalars())
    return (len(times) >= limit and times[0] - times[-1] <= limits.window
            and now - times[0] < limits.lock)
