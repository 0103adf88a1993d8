"""The roles are ordered: each may do what the weaker ones may."""

from __future__ import annotations

import pytest

from service.accounts.exceptions import InvalidRole
from service.accounts.roles import role_at_least


@pytest.mark.parametrize(("role", "minimum", "allowed"), [
    ("viewer", "viewer", True),
    ("viewer", "operator", False),
    ("viewer", "admin", False),
    ("operator", "viewer", True),
    ("operator", "operator", True),
    ("operator", "admin", False),
    ("admin", "viewer", True),
    ("admin", "operator", True),
    ("admin", "admin", True),
])
def test_roles_are_ordered_viewer_operator_admin(role, minimum, allowed):
    assert role_at_least(role, minimum) is allowed


def test_an_unknown_role_is_refused_with_the_known_ones():
    with pytest.raises(InvalidRole, match="^unknown role 'root': use viewer, operator or admin$"):
        role_at_least("root", "viewer")
