"""The real app served on loopback from a thread of the test, for Chromium and for
Prometheus and Alertmanager to reach."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask
from werkzeug.serving import make_server


@contextmanager
def served(app: Flask) -> Iterator[str]:
    """Serve `app` on a free port until the block ends; yields its base URL."""
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}"
    finally:
        httpd.shutdown()
        thread.join()
