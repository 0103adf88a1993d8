"""`faultline user ...` and `faultline token ...`: thin wrappers over service.accounts.

Their errors (service.accounts.exceptions) are user errors: one `error:` line, exit 2.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import timedelta

import click

from service.accounts import audit, services
from service.accounts.exceptions import InvalidTokenLifetime
from service.accounts.roles import ROLES
from service.store import db


@click.group("user")
def user_group() -> None:
    """Users of the dashboard and the API: viewer reads; operator also starts, cancels,
    changes and heals; admin may do everything."""


@user_group.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(ROLES), required=True)
@click.option("--password-stdin", is_flag=True,
              help="Read the password from the first line of standard input.")
def user_add(name: str, role: str, password_stdin: bool) -> None:
    """Add a user (asks for the password twice, unless --password-stdin)."""
    sessions = db.session_factory()
    with sessions() as session:
        services.check_new_user(session, name, role)  # before asking for a password in vain
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    with sessions.begin() as session:
        services.create_user(session, name, role, password)
        audit.record(session, audit.local_actor(), "user.create", f"user {name}",
                     {"role": role})
    click.echo(f"user {name} added, role {role}")


@user_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def user_list(as_json: bool) -> None:
    """List the users and their roles."""
    with db.session_factory()() as session:
        rows = [{"name": u.name, "role": u.role, "created_at": u.created_at.isoformat(),
                 "disabled": u.disabled} for u in services.list_users(session)]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no user yet: faultline user add NAME --role operator")
    for r in rows:
        click.echo(f"{r['name']:<20} {r['role']:<9} {r['created_at'][:19]}"
                   + ("  disabled" if r["disabled"] else ""))


@user_group.command("set-role")
@click.argument("name")
@click.argument("role", type=click.Choice(ROLES))
def user_set_role(name: str, role: str) -> None:
    """Change a user's role (their open sessions end: they log in again)."""
    with db.session_factory().begin() as session:
        services.set_role(session, name, role)
        audit.record(session, audit.local_actor(), "user.role", f"user {name}", {"role": role})
    click.echo(f"user {name} now has the role {role}")


@user_group.command("disable")
@click.argument("name")
def user_disable(name: str) -> None:
    """Stop a user from logging in and using their tokens; ends their open sessions."""
    with db.session_factory().begin() as session:
        services.set_disabled(session, name, True)
        audit.record(session, audit.local_actor(), "user.disable", f"user {name}")
    click.echo(f"user {name} disabled")


@user_group.command("enable")
@click.argument("name")
def user_enable(name: str) -> None:
    """Let a disabled user in again."""
    with db.session_factory().begin() as session:
        services.set_disabled(session, name, False)
        audit.record(session, audit.local_actor(), "user.enable", f"user {name}")
    click.echo(f"user {name} enabled")


@user_group.command("set-password")
@click.argument("name")
@click.option("--password-stdin", is_flag=True,
              help="Read the password from the first line of standard input.")
def user_set_password(name: str, password_stdin: bool) -> None:
    """Set a user's password (asks twice, unless --password-stdin); ends their sessions."""
    sessions = db.session_factory()
    with sessions() as session:
        services.user_named(session, name)  # before asking for a password in vain
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    with sessions.begin() as session:
        services.set_password(session, name, password)
        audit.record(session, audit.local_actor(), "user.password", f"user {name}")
    click.echo(f"user {name}: password changed, open sessions ended")


@click.group("token")
def token_group() -> None:
    """API tokens for scripts and CI: send `Authorization: Bearer <token>`."""


DURATION = re.compile(r"([1-9][0-9]{0,6})([dhm])")
UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def parse_duration(text: str) -> timedelta:
    """`90d`, `12h` or `30m`; InvalidTokenLifetime (an `error:` line, exit 2) otherwise."""
    match = DURATION.fullmatch(text.strip())
    if not match:
        raise InvalidTokenLifetime(f"--expires-in {text!r} is not a duration such as 90d, "
                                   f"12h or 30m")
    return timedelta(**{UNITS[match.group(2)]: int(match.group(1))})


@token_group.command("create")
@click.argument("name")
@click.option("--user", "user_name", required=True, help="The user the token acts as.")
@click.option("--expires-in", "expires_in", metavar="DURATION",
              help="Refuse the token after this long: 90d, 12h or 30m (default: never).")
def token_create(name: str, user_name: str, expires_in: str | None) -> None:
    """Make a token and print it on standard output, once: only its hash is kept."""
    lifetime = parse_duration(expires_in) if expires_in is not None else None
    with db.session_factory().begin() as session:
        row, token = services.create_token(session, user_name, name, lifetime)
        token_id, expires_at = row.id, row.expires_at
        audit.record(session, audit.local_actor(), "token.create",
                     f"token {token_id} of user {user_name}",
                     {"name": name, "expires_at": expires_at and expires_at.isoformat()})
    until = (f"expires {expires_at.isoformat(timespec='seconds')}" if expires_at
             else "never expires")
    click.echo(f"token {token_id} ({name!r}, acts as {user_name}, {until}); it is shown only "
               f"now", err=True)
    click.echo(token)


@token_group.command("list")
@click.option("--user", "user_name", help="Only this user's tokens.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def token_list(user_name: str | None, as_json: bool) -> None:
    """List tokens (their first characters only: the tokens themselves are not kept)."""
    with db.session_factory()() as session:
        rows = [{"id": t.id, "name": t.name, "user": t.user.name, "prefix": t.prefix,
                 "created_at": t.created_at.isoformat(),
                 "expires_at": t.expires_at and t.expires_at.isoformat(),
                 "last_used_at": t.last_used_at and t.last_used_at.isoformat(),
                 "revoked_at": t.revoked_at and t.revoked_at.isoformat()}
                for t in services.list_tokens(session, user_name)]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no token")
    for r in rows:
        state = f"revoked {r['revoked_at'][:19]}" if r["revoked_at"] else (
            f"last used {r['last_used_at'][:19]}" if r["last_used_at"] else "never used")
        if r["expires_at"] and not r["revoked_at"]:
            state += f", expires {r['expires_at'][:19]}"
        click.echo(f"{r['id']:>5}  {r['prefix']}…  {r['user']:<16} {r['name']:<20} {state}")


@token_group.command("revoke")
@click.argument("token_id", type=int)
def token_revoke(token_id: int) -> None:
    """Revoke a token for good."""
    with db.session_factory().begin() as session:
        row = services.revoke_token(session, token_id)
        text = f"token {row.id} ({row.prefix}…, {row.name!r} of {row.user.name}) revoked"
        audit.record(session, audit.local_actor(), "token.revoke",
                     f"token {row.id} of user {row.user.name}")
    click.echo(text)
