"""The dashboard and API behind gunicorn, a production WSGI server, not Flask's own.

One process with threads by default: the pages are light database reads and the live run
page polls every 2 s, so threads suffice, and every request sees one process's state.
gunicorn handles SIGTERM (finish the requests under way, then stop) and restarts a worker
that dies."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask
from gunicorn.app.base import BaseApplication
from werkzeug.serving import make_server

from .app import create_app


class DashboardServer(BaseApplication):
    def __init__(self, options: dict):
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        return create_app()


def serve(host: str, port: int, workers: int = 1, threads: int = 8,
          certfile: str | None = None, keyfile: str | None = None) -> None:
    """With a certificate and its key, over HTTPS (gunicorn's TLS): the session cookie is
    then Secure (service.web.cookies)."""
    tls = {"certfile": certfile, "keyfile": keyfile} if certfile else {}
    DashboardServer({"bind": f"{host}:{port}", "workers": workers, "threads": threads,
                     "worker_class": "gthread", "accesslog": "-",
                     "graceful_timeout": 10, **tls}).run()


@contextmanager
def served(app: Flask) -> Iterator[str]:
    """Serve `app` on a free loopback port from a thread until the block ends; yields its
    base URL. For the tests and the benchmarks, which drive the real app over HTTP."""
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}"
    finally:
        httpd.shutdown()
        thread.join()
