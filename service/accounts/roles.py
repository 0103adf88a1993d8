"""The roles, weakest first: each one may do everything the ones before it may.

viewer reads; operator also starts, cancels, changes and heals; admin also manages users
and API tokens and reads the audit trail (GET /api/v1/audit, /audit, /api/v1/users...).
"""

from __future__ import annotations

from .exceptions import InvalidRole

ROLES = ("viewer", "operator", "admin")


def check_role(role: str) -> str:
    if role not in ROLES:
        raise InvalidRole(f"unknown role {role!r}: use {', '.join(ROLES[:-1])} or {ROLES[-1]}")
    return role


def role_at_least(role: str, minimum: str) -> bool:
    """Whether `role` may do what `minimum` may."""
    return ROLES.index(check_role(role)) >= ROLES.index(check_role(minimum))
