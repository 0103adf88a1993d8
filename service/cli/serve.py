"""`faultline serve`: the dashboard and the API."""

from __future__ import annotations

import click

from service.web.server import serve


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True)
@click.option("--workers", default=1, show_default=True, help="gunicorn worker processes")
@click.option("--threads", default=8, show_default=True, help="threads per worker")
def serve_cmd(host: str, port: int, workers: int, threads: int) -> None:
    """Serve the dashboard and the API (gunicorn)."""
    serve(host, port, workers, threads)
