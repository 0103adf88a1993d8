"""The audit trail on the web: `note` records what the current request changed (its user,
its client address), and /audit shows the trail to admins only.

`note` records in the transaction of the change where the view holds it (users, tokens);
the services that upload, queue, cancel and heal own their sessions, so there it commits its
own transaction right after the change (a change that failed raised before its note).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, abort, render_template, request
from flask_login import current_user
from sqlalchemy.orm import Session

from service.accounts import audit
from service.accounts.exceptions import InvalidAuditQuery

from .access import require_role
from .context import sessions

bp = Blueprint("audit", __name__)
PER_PAGE = 50


def note(action: str, subject: str, detail: dict[str, Any] | None = None,
         session: Session | None = None) -> None:
    """Record, in `session` (one transaction with the change) or else in a transaction of
    its own."""
    if session is not None:
        audit.record(session, current_user.name, action, subject, detail, request.remote_addr)
        return
    with sessions().begin() as own:
        audit.record(own, current_user.name, action, subject, detail, request.remote_addr)


@bp.get("/audit")
@require_role("admin")
def index():
    filters = {k: request.args.get(k, "").strip() for k in ("actor", "action", "since")}
    page = request.args.get("page", "1")
    try:
        if not page.isdigit() or int(page) < 1:
            raise InvalidAuditQuery(f"page must be a number from 1, not {page[:60]!r}")
        with sessions()() as session:
            found = audit.events(session, actor=filters["actor"] or None,
                                 action=filters["action"] or None,
                                 since=(audit.parse_since(filters["since"])
                                        if filters["since"] else None),
                                 page=int(page), per_page=PER_PAGE)
    except InvalidAuditQuery as exc:
        abort(400, description=str(exc))
    pages = max(1, -(-found.total // PER_PAGE))
    return render_template("audit.html", found=found, filters=filters, pages=pages)


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
