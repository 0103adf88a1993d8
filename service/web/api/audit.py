"""GET /audit: the audit trail (service.accounts.audit), newest first, for admins only."""

from __future__ import annotations

from service.accounts import audit
from service.web.access import require_role

from .blueprint import bp
from .context import sessions
from .params import check_query, query_int, query_str


@bp.get("/audit")
@require_role("admin")
def list_audit_events():
    check_query(("actor", "action", "since", "page", "per_page"))
    since = query_str("since")
    with sessions()() as session:
        return audit.events(session, actor=query_str("actor"), action=query_str("action"),
                            since=audit.parse_since(since) if since is not None else None,
                            page=query_int("page", 1, minimum=1),
                            per_page=query_int("per_page", 50, minimum=1)).as_dict()
