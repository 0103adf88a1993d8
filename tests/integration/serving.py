"""The real app served on loopback from a thread of the test, for Chromium and for
Prometheus and Alertmanager to reach; and a Chromium page to look at it with."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask
from playwright.sync_api import Page, sync_playwright
from werkzeug.serving import make_server

CHROMIUM = "/usr/bin/chromium"


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


@contextmanager
def chromium_page(**page_options) -> Iterator[Page]:
    """A page of Debian's Chromium driven by Playwright, closed when the block ends."""
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            yield browser.new_page(**page_options)
        finally:
            browser.close()
