"""The audit trail: who uploaded, queued, cancelled, healed, overrode a guard, or changed
users and tokens, from which address, and when. Admins read it (GET /api/v1/audit, /audit).

`record` adds a row in the caller's session (the caller commits, so a change and its record
are one transaction where the caller can make them so); `events` reads a page of them,
newest first. Actors are user names, `cli:<local account>` for the command line, or
`anonymous` for a lock of the login throttle (`login.lock`: which user or address, for how
long).

Actions: experiment.upload, experiment.delete, run.queue, run.cancel, cluster.heal,
schedule.create/change/enable/disable/delete, user.create/role/password/disable/enable,
token.create/revoke, login.lock; others add their own (a guard override) with `record`.
"""

from __future__ import annotations

import getpass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from service.store.paging import Page

from .exceptions import InvalidAuditQuery
from .models import AuditEvent

MAX_PER_PAGE = 200
MAX_TEXT = {"actor": 200, "action": 50, "subject": 300, "address": 64}


def local_actor() -> str:
    """The actor of a command-line change: the local account that ran it."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no name for this uid (a container's)
        return "cli:unknown"


def record(session: Session, actor: str, action: str, subject: str,
           detail: dict | None = None, address: str | None = None) -> AuditEvent:
    """Add one event (cut to the columns' lengths: an audit record is never refused)."""
    event = AuditEvent(actor=_cut(actor or "unknown", "actor"), action=_cut(action, "action"),
                       subject=_cut(subject, "subject"), detail=detail or None,
                       address=_cut(address, "address") if address else None)
    session.add(event)
    session.flush()
    return event




def events(session: Session, actor: str | None = None, action: str | None = None,
           since: datetime | None = None, page: int = 1, per_page: int = 50) -> Page:
    """Newest first; `actor` and `action` match exactly; `since` keeps events at or after it.
    `page` counts from 1; a page past the last is empty (with the total)."""
    if page < 1:
        raise InvalidAuditQuery(f"page must be 1 or more, not {page}")
    if not 1 <= per_page <= MAX_PER_PAGE:
        raise InvalidAuditQuery(f"per_page must be from 1 to {MAX_PER_PAGE}, not {per_page}")
    if since is not None and since.tzinfo is None:
        raise InvalidAuditQuery("since needs a time zone, e.g. 2026-11-27T03:00:00Z")
    query = select(AuditEvent)
    if actor is not None:
        query = query.where(AuditEvent.actor == actor)
    if action is not None:
        query = query.where(AuditEvent.action == action)
    if since is not None:
        query = query.where(AuditEvent.at >= since)
    total = session.execute(select(func.count()).select_from(query.subquery())).scalar_one()
    rows = session.execute(query.order_by(AuditEvent.at.desc(), AuditEvent.id.desc())
                           .offset((page - 1) * per_page).limit(per_page)).scalars()
    return Page([as_dict(e) for e in rows], page, per_page, total)


def parse_since(text: str) -> datetime:
    """An ISO 8601 time with its zone (`2026-11-27T03:00:00Z` or `...+01:00`)."""
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InvalidAuditQuery(f"since must be an ISO 8601 time such as "
                                f"2026-11-27T03:00:00Z, not {text[:60]!r}") from None
    if when.tzinfo is None:
        raise InvalidAuditQuery(f"since needs a time zone (Z or +01:00), not {text[:60]!r}")
    return when


def as_dict(event: AuditEvent) -> dict[str, Any]:
    return {"id": event.id, "at": event.at.isoformat(), "actor": event.actor,
            "action": event.action, "subject": event.subject, "detail": event.detail,
            "address": event.address}


def _cut(text: str, column: str) -> str:
    return text[:MAX_TEXT[column]]
