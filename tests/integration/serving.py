"""The real app served on loopback from a thread of the test, for Chromium and for
Prometheus and Alertmanager to reach; and a Chromium page to look at it with."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Page, sync_playwright

from service.web.server import served  # noqa: F401 (the tests import it from here)

CHROMIUM = "/usr/bin/chromium"


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


def painted_pixels(page: Page, canvas_id: str) -> int:
    """How many pixels of a canvas something was drawn on (a blank chart has none)."""
    return page.evaluate("""(id) => {
        const c = document.getElementById(id);
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
        return n; }""", canvas_id)
