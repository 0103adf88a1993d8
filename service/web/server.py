"""The dashboard and API behind gunicorn, a production WSGI server, not Flask's own.

One process with threads by default: the pages are light database reads and the live run
page polls every 2 s, so threads suffice, and every request sees one process's state.
gunicorn handles SIGTERM (finish the requests under way, then stop) and restarts a worker
that dies."""

from __future__ import annotations

from gunicorn.app.base import BaseApplication

from . import create_app


class DashboardServer(BaseApplication):
    def __init__(self, options: dict):
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        return create_app()


def serve(host: str, port: int, workers: int = 1, threads: int = 8) -> None:
    DashboardServer({"bind": f"{host}:{port}", "workers": workers, "threads": threads,
                     "worker_class": "gthread", "accesslog": "-",
                     "graceful_timeout": 10}).run()
