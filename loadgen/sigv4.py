"""AWS Signature V4 headers for the S3 driver's requests that libcurl cannot sign: Swift's
tempauth access keys are "account:user", and libcurl 8 percent-encodes the key in the
Credential ("test%3Atester"), which s3api refuses (403 SignatureDoesNotMatch, checked
against the Swift lab). botocore's S3SigV4Auth signs them right, at 0.18 ms of Python a
request, more than the S3 load's whole CPU budget per operation (bench/p1_s3, 0.3 ms); so
these requests are signed here, for the driver's one shape of request (path-style, the
payload's SHA-256 signed, no other header signed), with the day's signing key derived once
a day, and sent on libcurl's connections like the others. tests/unit/test_sigv4.py checks
each signature against botocore's for the same request and time.
"""

from __future__ import annotations

import hashlib
import hmac
import time

ALGORITHM = "AWS4-HMAC-SHA256"
SIGNED_HEADERS = "host;x-amz-content-sha256;x-amz-date"


class Signer:
    def __init__(self, access_key: str, secret_key: str, region: str, service: str = "s3"):
        self._access_key = access_key
        self._secret = ("AWS4" + secret_key).encode()
        self._region = region
        self._service = service
        self._day: tuple[str, bytes] | None = None  # (yyyymmdd, its signing key)

    def headers(self, method: str, host: str, path: str, body: bytes | None,
                now: float | None = None) -> dict[str, str]:
        """X-Amz-Date, X-Amz-Content-SHA256 and Authorization for a request to `host`
        ("address:port", as the Host header gives it) of `path` (percent-encoded, with its
        query after "?")."""
        amz_date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
        payload = hashlib.sha256(body or b"").hexdigest()
        uri, _, query = path.partition("?")
        canonical = (f"{method}\n{uri}\n{_canonical_query(query)}\nhost:{host}\n"
                     f"x-amz-content-sha256:{payload}\nx-amz-date:{amz_date}\n\n"
                     f"{SIGNED_HEADERS}\n{payload}")
        scope = f"{amz_date[:8]}/{self._region}/{self._service}/aws4_request"
        to_sign = (f"{ALGORITHM}\n{amz_date}\n{scope}\n"
                   f"{hashlib.sha256(canonical.encode()).hexdigest()}")
        signature = hmac.new(self._key(amz_date[:8]), to_sign.encode(),
                             hashlib.sha256).hexdigest()
        return {"X-Amz-Date": amz_date, "X-Amz-Content-SHA256": payload,
                "Authorization": f"{ALGORITHM} Credential={self._access_key}/{scope}, "
                                 f"SignedHeaders={SIGNED_HEADERS}, Signature={signature}"}

    def _key(self, day: str) -> bytes:
        if self._day is None or self._day[0] != day:
            key = self._secret
            for part in (day, self._region, self._service, "aws4_request"):
                key = hmac.new(key, part.encode(), hashlib.sha256).digest()
            self._day = (day, key)
        return self._day[1]


def _canonical_query(query: str) -> str:
    """The query's parameters sorted, each "key=value" (an "uploads" alone is "uploads=");
    the driver's values are already percent-encoded."""
    if not query:
        return ""
    pairs = []
    for pair in query.split("&"):
        key, _, value = pair.partition("=")
        pairs.append((key, value))
    return "&".join(f"{k}={v}" for k, v in sorted(pairs))
