"""The S3 API driver: Ceph RGW (and Swift's s3api) over HTTP keep-alive, path-style.

The worker pool, the queue and the error classes are loadgen/http_driver.py's; each
worker's connection is a libcurl handle (loadgen/curl_http.py) that signs every request
with Signature V4 itself, in C: botocore's signer alone cost 0.18 ms of Python per
request, and a boto3 client retries, pools and parses through its event system at several
times the CPU per operation, where the load must see each failure exactly once. Over
plain HTTP the payload is signed too (its SHA-256), as botocore does.

libcurl percent-encodes the access key in the signature's Credential, so a key with any
other character than letters, digits and `-._~` would never match: Swift's tempauth keys
are "account:user". Such a key's requests are signed by loadgen/sigv4.py (botocore's
signature, checked against it, at a fraction of its CPU) and sent on the same libcurl
connections, unsigned by libcurl (`signing` says which signs).

An S3 error's class is its HTTP status and the error code of its XML body
("404 NoSuchKey", "503 SlowDown"); a HEAD has no body: its status alone.

A write larger than `multipart_above` is a multipart upload on one worker's connection:
initiate, one PUT per `part_size` part, complete (whose 200 may still carry an S3 error);
a part or a completion that fails aborts the upload (best effort) and is the write's
error class, so a failed write leaves no parts behind for the bucket to keep.

A list is ListObjectsV2, a page of up to 1,000 keys at a time. Its XML is parsed by the
standard library's expat, which refuses entity expansion bombs since expat 2.4 (Debian 12
ships 2.5); a page that does not parse is the class "bad listing".
"""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ElementTree
from urllib.parse import quote
from xml.sax.saxutils import escape

from clusters.access.credentials import S3Credentials

from .curl_http import CurlConnection
from .exceptions import DriverError
from .http_driver import LIST, HttpDriver, Request
from .sigv4 import Signer
from .swift_http import (
    Endpoint,
    RequestFailure,
    Response,
    describe,
    status_class,
)

log = logging.getLogger(__name__)
_CODE = re.compile(rb"<Code>([A-Za-z0-9.]{1,64})</Code>")
# a bucket name S3 accepts (path style): 3-63 of lowercase letters, digits, dots, hyphens
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_CURL_SAFE_KEY = re.compile(r"^[A-Za-z0-9._~-]+$")  # what libcurl sends unencoded
LISTING_PAGE = 1000  # keys per ListObjectsV2 page: S3's largest
MULTIPART = "MULTIPART"  # a Request's method for a multipart upload (several requests)


def error_class(status: int, body: bytes) -> str | None:
    """None for a 2xx; else the status, and the S3 error code if the body names one."""
    error = status_class(status)
    if error is None:
        return None
    code = _CODE.search(body[:4096])
    return f"{error} {code.group(1).decode()}" if code else error


def _text_of(body: bytes, tag: str) -> str | None:
    """The text of the first `tag` element of an S3 XML answer (None if it has none)."""
    try:
        return ElementTree.fromstring(body).findtext(f".//{{*}}{tag}")
    except ElementTree.ParseError:
        return None


def _error_after_200(response: Response) -> str | None:
    """A completion can fail after its 200 is sent: the error is then in the body ("200
    InternalError": of unknown outcome, as a 5xx)."""
    head = response.body[:4096]
    if b"<Error>" not in head:
        return None
    code = _CODE.search(head)
    return f"{response.status} {code.group(1).decode() if code else 'Error'}"


class S3Driver(HttpDriver):
    """Asynchronous S3 operations on a fixed pool of keep-alive workers."""

    api_name = "S3"
    compound = (LIST, MULTIPART)
    listing_page = LISTING_PAGE  # a test lists in small pages

    def __init__(self, credentials: S3Credentials, containers: list[str],
                 concurrency: int = 32, connect_timeout_s: float = 10.0,
                 read_timeout_s: float = 30.0, multipart_above: int | None = None,
                 part_size: int = 8 * 1024 ** 2):
        bad = [c for c in containers if not _BUCKET.match(c) or ".." in c]
        if bad:
            raise DriverError(f"S3 refuses the bucket name {bad[0]!r}: 3 to 63 lowercase "
                              "letters, digits, dots or hyphens")
        super().__init__(containers, concurrency, connect_timeout_s, read_timeout_s)
        try:
            self.endpoint = Endpoint.parse(credentials.endpoint)
        except ValueError as exc:
            raise DriverError(f"unusable S3 endpoint: {exc}") from None
        self.multipart_above = multipart_above
        self.part_size = part_size
        self._credentials = credentials
        self._signer = None if _CURL_SAFE_KEY.match(credentials.access_key) else Signer(
            credentials.access_key, credentials.secret_key, credentials.region)

    @property
    def signing(self) -> str:
        """Who signs the requests: "libcurl", or "sigv4" (loadgen/sigv4.py) for a key
        libcurl would mangle."""
        return "libcurl" if self._signer is None else "sigv4"

    def connect(self) -> None:
        """Check the key pair and create the buckets; raise DriverError on any failure."""
        self._check_connectable()
        self.check_access()
        conn = self._new_connection()
        try:
            for bucket in self.containers:
                response = self._request(conn, "PUT", bucket, None, b"")
                error = error_class(response.status, response.body)
                # RGW says a bucket of ours exists with BucketAlreadyOwnedByYou; Swift's
                # s3api says BucketAlreadyExists, as S3 does of another account's bucket,
                # which this key pair could not then read
                if error == "409 BucketAlreadyExists" and self._readable(conn, bucket):
                    continue
                if error and error != "409 BucketAlreadyOwnedByYou":
                    raise DriverError(f"cannot create bucket {bucket!r} at "
                                      f"{self.endpoint.url}: {error}")
        finally:
            conn.close()
        self._start_workers()

    def check_access(self) -> None:
        """List the buckets (changes nothing); DriverError if refused or unreachable."""
        conn = self._new_connection()
        try:
            response = self._request(conn, "GET", None, None, None)
        except Exception as exc:
            raise DriverError(f"cannot reach S3 at {self.endpoint.url}: "
                              f"{describe(exc)}") from None
        finally:
            conn.close()
        error = error_class(response.status, response.body)
        if error:
            raise DriverError(f"S3 at {self.endpoint.url} refused the key pair: {error}")

    def _readable(self, conn: CurlConnection, bucket: str) -> bool:
        response = self._request(conn, "HEAD", bucket, None, None)
        return response.status == 200

    def _error_of(self, response: Response) -> str | None:
        return error_class(response.status, response.body)

    def _send(self, conn: CurlConnection, request: Request) -> Response:
        return self._request(conn, request.method, request.container, request.name,
                             request.body)

    def write(self, container: str, name: str, data: bytes, done) -> None:
        big = self.multipart_above is not None and len(data) > self.multipart_above
        self._submit(Request(MULTIPART if big else "PUT", container, name, data, done))

    def _serve_compound(self, conn: CurlConnection, request: Request) -> None:
        if request.method == MULTIPART:
            self._serve_multipart(conn, request)
        else:
            super()._serve_compound(conn, request)

    def _serve_multipart(self, conn: CurlConnection, request: Request) -> None:
        bucket, key, data = request.container, request.name, request.body or b""
        response = self._request(conn, "POST", bucket, key, b"", "uploads")
        error = self._error_of(response)
        if error:
            self._finish(request.done, False, 0, error, None)
            return
        upload = _text_of(response.body, "UploadId")
        if not upload:
            raise RequestFailure("bad multipart answer", f"no UploadId for {bucket}/{key}")
        try:
            error = self._upload_parts(conn, bucket, key, data, quote(upload, safe=""))
        except BaseException:
            self._abort_upload(bucket, key, upload)
            raise
        if error:
            self._abort_upload(bucket, key, upload)
            self._finish(request.done, False, 0, error, None)
        else:
            self._finish(request.done, True, len(data), None, None)

    def _upload_parts(self, conn: CurlConnection, bucket: str, key: str, data: bytes,
                      upload: str) -> str | None:
        """Every part, then the completion; the error class of the first that failed."""
        parts = []
        for number, offset in enumerate(range(0, len(data), self.part_size), start=1):
            response = self._request(conn, "PUT", bucket, key,
                                     data[offset:offset + self.part_size],
                                     f"partNumber={number}&uploadId={upload}")
            error = self._error_of(response)
            if error:
                return error
            etag = escape(response.headers.get("ETag", ""))
            parts.append(f"<Part><PartNumber>{number}</PartNumber><ETag>{etag}</ETag></Part>")
        body = f"<CompleteMultipartUpload>{''.join(parts)}</CompleteMultipartUpload>".encode()
        response = self._request(conn, "POST", bucket, key, body, f"uploadId={upload}")
        return self._error_of(response) or _error_after_200(response)

    def _abort_upload(self, bucket: str, key: str, upload: str) -> None:
        """Best effort, on a connection of its own (the worker's may be broken)."""
        conn = self._new_connection()
        try:
            self._request(conn, "DELETE", bucket, key, None, f"uploadId={quote(upload, safe='')}")
        except Exception as exc:  # the upload stays for the bucket's lifecycle to end
            log.warning(f"S3 abort of the multipart upload of {bucket}/{key}: {describe(exc)}")
        finally:
            conn.close()

    def _list_page(self, conn: CurlConnection, container: str,
                   marker: str | None) -> tuple[Response, list[str], str | None]:
        """A ListObjectsV2 page; `marker` is the continuation token."""
        query = f"list-type=2&max-keys={self.listing_page}" + (
            "" if marker is None else f"&continuation-token={quote(marker, safe='')}")
        response = self._request(conn, "GET", container, None, None, query)
        if status_class(response.status):
            return response, [], None
        try:
            root = ElementTree.fromstring(response.body)
        except ElementTree.ParseError as exc:
            raise RequestFailure("bad listing", f"an S3 listing of {container!r} that does "
                                 f"not parse: {exc}") from None
        names = [key.text or "" for key in root.iterfind("{*}Contents/{*}Key")]
        truncated = (root.findtext("{*}IsTruncated") or "").strip().lower() == "true"
        token = root.findtext("{*}NextContinuationToken")
        return response, names, token if truncated and token else None

    def _request(self, conn: CurlConnection, method: str, bucket: str | None, key: str | None,
                 body: bytes | None, query: str = "") -> Response:
        path = self.endpoint.path if bucket is None else self.endpoint.path_to(bucket, key)
        path += f"?{query}" if query else ""
        if self._signer is None:
            return conn.request(self.endpoint, method, path, {}, body)
        return conn.request(self.endpoint, method, path,
                            self._signer.headers(method, self.endpoint.host_header, path, body),
                            body)

    def _make_connection(self) -> CurlConnection:
        return CurlConnection(self.connect_timeout_s, self.read_timeout_s,
                              self._credentials if self._signer is None else None)
