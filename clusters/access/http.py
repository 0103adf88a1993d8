"""One plain HTTP request on a connection of its own: what the admin side (recon, fills,
lab readiness) needs, where the load drivers keep their own keep-alive connections."""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit


def request(url: str, method: str = "GET", headers: dict[str, str] | None = None,
            body: bytes | None = None, timeout: float = 60.0) -> tuple[int, dict[str, str], bytes]:
    """Send one request; return the status, the headers (lower-case names) and the body.
    Connection errors (refused, reset, timed out) are raised as OSError."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request(method, parts.path + (f"?{parts.query}" if parts.query else ""),
                     body=body, headers=headers or {})
        response = conn.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        conn.close()
