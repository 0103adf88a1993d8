"""`faultline monitoring up|down|status`: the embedded Prometheus and Alertmanager
(service.monitoring.embedded), registered on the main group in service.cli."""

from __future__ import annotations

import secrets

import click

from service.accounts import services as accounts
from service.accounts.exceptions import InvalidToken
from service.monitoring import embedded as monitoring
from service.store import db
from service.web.secret import alert_token

PROMETHEUS_USER = "prometheus"


@click.group("monitoring")
def monitoring_group() -> None:
    """The embedded Prometheus and Alertmanager (loopback, data in $FAULTLINE_HOME)."""


@monitoring_group.command("up")
@click.option("--service-url", default=monitoring.DEMO_SERVICE_URL, show_default=True,
              help="Where `faultline serve` listens: scraped, and Alertmanager's webhook.")
def up_cmd(service_url: str) -> None:
    """Start them (or reload their configs) and print their URLs. The clusters scraped are
    those of the service's inventory, asked every 5 s."""
    urls = monitoring.up(service_url, _prometheus_token(), alert_token())
    click.echo(f"Prometheus: {urls['prometheus']}   Alertmanager: {urls['alertmanager']}")


@monitoring_group.command("down")
@click.option("--purge", is_flag=True, help="Also delete the stored series and silences.")
def down_cmd(purge: bool) -> None:
    """Stop them."""
    for name, outcome in monitoring.down(remove_data=purge).items():
        click.echo(f"{name}: {outcome}")


@monitoring_group.command("status")
def status_cmd() -> None:
    for name, pid in monitoring.status().items():
        click.echo(f"{name}: {'running, pid ' + str(pid) if pid else 'not running'}")


def _prometheus_token() -> str:
    """The API token Prometheus scrapes with: the one it has if still valid, else a new one
    of the viewer `prometheus` (made on first use)."""
    path = monitoring.home() / "config" / "secrets" / "prometheus-token"
    sessions = db.session_factory()
    with sessions.begin() as session:
        if path.exists():
            token = path.read_text().strip()
            try:
                accounts.user_for_token(session, token)
                return token
            except InvalidToken:
                pass
        if PROMETHEUS_USER not in {u.name for u in accounts.list_users(session)}:
            accounts.create_user(session, PROMETHEUS_USER, "viewer", secrets.token_urlsafe(24))
        return accounts.create_token(session, PROMETHEUS_USER, "embedded prometheus")[1]
