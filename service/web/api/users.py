"""Users and their API tokens, for admins only: list, add, change (role, disabled,
password), make a token (shown once), revoke one. Each change goes on the audit trail; a
password or role change or a disable ends the user's dashboard sessions."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask import url_for

from service.accounts import services
from service.accounts.models import ApiToken, User
from service.web.access import require_role
from service.web.audit import note

from .blueprint import bp
from .context import sessions
from .errors import BadRequest
from .params import fields, json_body

MAX_TOKEN_DAYS = services.MAX_TOKEN_LIFETIME.days


@bp.get("/users")
@require_role("admin")
def list_users():
    with sessions()() as session:
        return {"items": [_user(u) for u in services.list_users(session)]}


@bp.post("/users")
@require_role("admin")
def create_user():
    body = fields(json_body(), required={"name": str, "role": str, "password": str})
    with sessions().begin() as session:
        shown = _user(services.create_user(session, body["name"], body["role"],
                                           body["password"]))
        note("user.create", f"user {body['name']}", {"role": body["role"]}, session)
    url = url_for("api.change_user", name=body["name"])
    return shown, 201, {"Location": url}


@bp.patch("/users/<name>")
@require_role("admin")
def change_user(name: str):
    body = fields(json_body(), optional={"role": str, "disabled": bool, "password": str})
    if not any(v is not None for v in body.values()):
        raise BadRequest("give at least one of 'role', 'disabled', 'password'")
    subject = f"user {name}"
    with sessions().begin() as session:
        if body.get("password") is not None:
            services.set_password(session, name, body["password"])
            note("user.password", subject, None, session)
        if body.get("role") is not None:
            services.set_role(session, name, body["role"])
            note("user.role", subject, {"role": body["role"]}, session)
        if body.get("disabled") is not None:
            services.set_disabled(session, name, body["disabled"])
            note("user.disable" if body["disabled"] else "user.enable", subject, None, session)
        return _user(services.user_named(session, name))


@bp.post("/users/<name>/tokens")
@require_role("admin")
def create_token(name: str):
    body = fields(json_body(), required={"name": str}, optional={"expires_in_days": int})
    days = body.get("expires_in_days")
    if days is not None and not 1 <= days <= MAX_TOKEN_DAYS:
        raise BadRequest(f"field 'expires_in_days' must be from 1 to {MAX_TOKEN_DAYS}, "
                         f"not {days}")
    with sessions().begin() as session:
        row, token = services.create_token(session, name, body["name"],
                                           timedelta(days=days) if days is not None else None)
        shown = {**_token(row), "token": token}
        note("token.create", f"token {row.id} of user {name}",
             {"name": body["name"], "expires_at": shown["expires_at"]}, session)
    return shown, 201


@bp.delete("/tokens/<int:token_id>")
@require_role("admin")
def revoke_token(token_id: int):
    with sessions().begin() as session:
        row = services.revoke_token(session, token_id)
        note("token.revoke", f"token {row.id} of user {row.user.name}", None, session)
    return "", 204


def _user(user: User) -> dict[str, Any]:
    return {"name": user.name, "role": user.role, "disabled": user.disabled,
            "created_at": user.created_at.isoformat() if user.created_at else None}


def _token(row: ApiToken) -> dict[str, Any]:
    return {"id": row.id, "name": row.name, "user": row.user.name, "prefix": row.prefix,
            "created_at": row.created_at.isoformat() if row.created_at else None,
            "expires_at": row.expires_at.isoformat() if row.expires_at else None,
            "last_used_at": row.last_used_at.isoformat() if row.last_used_at else None,
            "revoked_at": row.revoked_at.isoformat() if row.revoked_at else None}
