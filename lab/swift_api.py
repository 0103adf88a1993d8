"""A real Swift API round trip over plain HTTP, the readiness check of both labs.

Auth v1, PUT a container, PUT/GET/DELETE one object (comparing its content and
ETag), DELETE the container: the account is left as it was found. Used by the
Swift lab (through its proxy) and the Ceph lab (through RGW).
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid

from clusters.access.http import request

from .exceptions import LabError, SwiftCallFailed

SMOKE_CONTAINER = "faultline-lab-smoke"  # RGW refuses names shorter than 3 characters



def call(method: str, url: str, headers: dict[str, str], body: bytes | None = None,
          expect: tuple[int, ...] = (200,), timeout: float = 10.0
          ) -> tuple[dict[str, str], bytes]:
    try:
        status, response_headers, data = request(url, method, headers, body, timeout)
    except OSError as exc:  # refused, reset, timed out: the gateway is not serving yet
        raise SwiftCallFailed(f"{method} {url}: {exc}", retryable=True) from None
    if status not in expect:
        raise SwiftCallFailed(f"{method} {url} answered {status}", retryable=status >= 500)
    return response_headers, data


def swift_round_trip(auth_url: str, user: str, key: str) -> None:
    """Auth v1, PUT a container, PUT/GET/DELETE one object (comparing its content), then
    DELETE the container: the account is left as it was found."""
    headers, _ = call("GET", auth_url, {"X-Auth-User": user, "X-Auth-Key": key},
                       expect=(200, 204))
    token, storage_url = headers.get("x-auth-token"), headers.get("x-storage-url")
    if not token or not storage_url:
        raise SwiftCallFailed(f"auth at {auth_url} gave no token or storage URL",
                              retryable=False)
    auth = {"X-Auth-Token": token}
    container = f"{storage_url}/{SMOKE_CONTAINER}"
    call("PUT", container, auth, expect=(201, 202))
    name = f"{container}/smoke-{uuid.uuid4().hex}"
    content = os.urandom(4096)
    put_headers, _ = call("PUT", name, auth, content, expect=(201,))
    if put_headers.get("etag", "").strip('"') != hashlib.md5(content).hexdigest():
        raise SwiftCallFailed(f"PUT {name}: ETag {put_headers.get('etag')!r} is not the MD5 "
                              "of what was sent", retryable=False)
    _, got = call("GET", name, auth)
    if got != content:
        raise SwiftCallFailed(f"GET {name} returned {len(got)} bytes that differ from the "
                              f"{len(content)} bytes written", retryable=False)
    call("DELETE", name, auth, expect=(204,))
    call("DELETE", container, auth, expect=(204,))


def wait_for_round_trip(what: str, auth_url: str, user: str, key: str, timeout: float,
                        retry_client_errors: bool = False) -> float:
    """Poll the round trip until it succeeds; return the seconds waited. A client error
    (4xx, wrong content) fails at once unless `retry_client_errors` (a Swift proxy may
    refuse a token while memcached is still starting)."""
    started = time.monotonic()
    while True:
        try:
            swift_round_trip(auth_url, user, key)
            return round(time.monotonic() - started, 1)
        except SwiftCallFailed as exc:
            waited = time.monotonic() - started
            if (not exc.retryable and not retry_client_errors) or waited > timeout:
                raise LabError(
                    f"waited {waited:.0f} s (of {timeout:.0f} s) for {what} to serve a Swift "
                    f"auth + PUT/GET/DELETE as {user}; last: {exc}") from None
        time.sleep(0.5)
