"""`faultline serve`: the dashboard and the API."""

from __future__ import annotations

import click

from service.web.server import serve

from .group import fail


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True)
@click.option("--workers", default=1, show_default=True, help="gunicorn worker processes")
@click.option("--threads", default=8, show_default=True, help="threads per worker")
@click.option("--certfile", type=click.Path(exists=True, dir_okay=False),
              help="TLS certificate (PEM): serve over HTTPS; needs --keyfile.")
@click.option("--keyfile", type=click.Path(exists=True, dir_okay=False),
              help="The certificate's private key (PEM).")
def serve_cmd(host: str, port: int, workers: int, threads: int, certfile: str | None,
              keyfile: str | None) -> None:
    """Serve the dashboard and the API (gunicorn); over HTTPS with --certfile and --keyfile,
    which makes the session cookie Secure."""
    if bool(certfile) != bool(keyfile):
        fail("--certfile and --keyfile go together: give both to serve over HTTPS")
    serve(host, port, workers, threads, certfile, keyfile)
