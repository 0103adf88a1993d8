"""The Ceph lab's RADOS Gateway: its user, the key files, and the check that it serves.

One user, `faultline`, holds an S3 key pair and a subuser `faultline:swift` with full
access and a Swift key. `radosgw-admin` is the only source of truth: `ensure_user`
creates what is missing (so a warm restart creates nothing twice), then writes the
keys it reads back from radosgw-admin's JSON into files (mode 0600) under the lab
home; the inventory names those files, never the keys.

`wait_serving` is the end of `lab up`: it polls, against a deadline, a real Swift
API round trip (auth v1, PUT container, PUT/GET/DELETE object) over plain HTTP.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .ceph_layout import RGW_TIMEOUT, RGW_URL, CephLab, LabError

USER = "faultline"
SUBUSER = f"{USER}:swift"
AUTH_URL = f"{RGW_URL}/auth/1.0"
SMOKE_CONTAINER = "faultline-lab-smoke"  # RGW refuses names shorter than 3 characters
ADMIN_TIMEOUT = 60.0


@dataclass(frozen=True)
class RgwKeys:
    """Where the lab's RGW credentials are kept (one secret per file)."""

    directory: Path

    @property
    def swift_key(self) -> Path:
        return self.directory / "swift.key"

    @property
    def s3_access_key(self) -> Path:
        return self.directory / "s3.access_key"

    @property
    def s3_secret_key(self) -> Path:
        return self.directory / "s3.secret_key"


def keys_of(lab: CephLab) -> RgwKeys:
    return RgwKeys(lab.rgw_dir)


def client_spec(lab: CephLab) -> dict[str, dict[str, str]]:
    """The inventory's `client.swift_api` and `client.s3` entries: endpoints and key files."""
    keys = keys_of(lab)
    return {
        "swift_api": {"auth_url": AUTH_URL, "user": SUBUSER, "key_file": str(keys.swift_key)},
        "s3": {"endpoint": RGW_URL, "access_key_file": str(keys.s3_access_key),
               "secret_key_file": str(keys.s3_secret_key)},
    }


# -- the user, through radosgw-admin --------------------------------------------------


def _admin(lab: CephLab, *args: str) -> Any:
    """Run radosgw-admin (as client.admin: never the running gateway's name, whose admin
    socket it would take over) and return its decoded JSON output."""
    argv = ["radosgw-admin", "-c", str(lab.conf), "--format=json", *args]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=ADMIN_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise LabError(f"`{' '.join(argv)}` did not finish in {ADMIN_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        raise LabError(f"`{' '.join(argv)}` exited {done.returncode}: "
                       f"{done.stderr.strip()[-500:]}")
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        raise LabError(f"`{' '.join(argv)}` printed no JSON: {done.stdout[:200]!r}") from None


def _ensure_rgw_user(lab: CephLab) -> dict[str, Any]:
    """The user's info (JSON), after creating the user and the Swift subuser if missing."""
    if USER in _admin(lab, "user", "list"):
        info = _admin(lab, "user", "info", f"--uid={USER}")
    else:  # generates an S3 key pair with the user
        info = _admin(lab, "user", "create", f"--uid={USER}", "--display-name=Faultline lab")
    if not any(s.get("id") == SUBUSER for s in info.get("subusers", [])):
        info = _admin(lab, "subuser", "create", f"--uid={USER}", f"--subuser={SUBUSER}",
                      "--access=full", "--key-type=swift", "--gen-secret")
    if not any(k.get("user") == SUBUSER for k in info.get("swift_keys", [])):
        info = _admin(lab, "key", "create", f"--subuser={SUBUSER}", "--key-type=swift",
                      "--gen-secret")
    if not any(k.get("user") == USER for k in info.get("keys", [])):
        info = _admin(lab, "key", "create", f"--uid={USER}", "--key-type=s3",
                      "--gen-access-key", "--gen-secret")
    return info


def user_keys(info: dict[str, Any], current_access_key: str | None = None) -> dict[str, str]:
    """The Swift key and the S3 pair from `radosgw-admin user info` JSON (pure).

    With several S3 pairs, the one whose access key is `current_access_key` is kept.
    """
    swift = [k["secret_key"] for k in info.get("swift_keys", []) if k.get("user") == SUBUSER]
    s3 = [k for k in info.get("keys", []) if k.get("user") == USER]
    if not swift or not s3:
        raise LabError(f"RGW user {USER} has no {'Swift key' if not swift else 'S3 key'} "
                       f"after radosgw-admin created it")
    pair = next((k for k in s3 if k["access_key"] == current_access_key), s3[0])
    return {"swift_key": swift[0], "s3_access_key": pair["access_key"],
            "s3_secret_key": pair["secret_key"]}


def _write_secret(path: Path, value: str) -> None:
    """Write a secret readable by its owner only, from the first byte on."""
    try:
        if path.read_text() == value + "\n" and path.stat().st_mode & 0o777 == 0o600:
            return
    except FileNotFoundError:
        pass
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(value + "\n")
    tmp.replace(path)


def _read_secret(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except FileNotFoundError:
        return None


def ensure_user(lab: CephLab) -> RgwKeys:
    """Create the lab's RGW user if needed and write its keys into their files."""
    keys = keys_of(lab)
    keys.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    keys.directory.chmod(0o700)
    found = user_keys(_ensure_rgw_user(lab), _read_secret(keys.s3_access_key))
    _write_secret(keys.swift_key, found["swift_key"])
    _write_secret(keys.s3_access_key, found["s3_access_key"])
    _write_secret(keys.s3_secret_key, found["s3_secret_key"])
    return keys


# -- the Swift API over plain HTTP ---------------------------------------------------


class SwiftCallFailed(RuntimeError):
    """One Swift API call got an unexpected answer; `retryable` if waiting may help."""

    def __init__(self, message: str, retryable: bool):
        super().__init__(message)
        self.retryable = retryable


def _call(method: str, url: str, headers: dict[str, str], body: bytes | None = None,
          expect: tuple[int, ...] = (200,), timeout: float = 10.0
          ) -> tuple[dict[str, str], bytes]:
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
    except OSError as exc:  # refused, reset, timed out: the gateway is not serving yet
        raise SwiftCallFailed(f"{method} {url}: {exc}", retryable=True) from None
    finally:
        conn.close()
    if response.status not in expect:
        raise SwiftCallFailed(f"{method} {url} answered {response.status} {response.reason}",
                              retryable=response.status >= 500)
    return {k.lower(): v for k, v in response.getheaders()}, data


def swift_round_trip(auth_url: str, user: str, key: str) -> None:
    """Auth v1, PUT a container, PUT/GET/DELETE one object (comparing its content), then
    DELETE the container: the account is left as it was found."""
    headers, _ = _call("GET", auth_url, {"X-Auth-User": user, "X-Auth-Key": key},
                       expect=(200, 204))
    token, storage_url = headers.get("x-auth-token"), headers.get("x-storage-url")
    if not token or not storage_url:
        raise SwiftCallFailed(f"auth at {auth_url} gave no token or storage URL",
                              retryable=False)
    auth = {"X-Auth-Token": token}
    container = f"{storage_url}/{SMOKE_CONTAINER}"
    _call("PUT", container, auth, expect=(201, 202))
    name = f"{container}/smoke-{uuid.uuid4().hex}"
    content = os.urandom(4096)
    put_headers, _ = _call("PUT", name, auth, content, expect=(201,))
    if put_headers.get("etag", "").strip('"') != hashlib.md5(content).hexdigest():
        raise SwiftCallFailed(f"PUT {name}: ETag {put_headers.get('etag')!r} is not the MD5 "
                              "of what was sent", retryable=False)
    _, got = _call("GET", name, auth)
    if got != content:
        raise SwiftCallFailed(f"GET {name} returned {len(got)} bytes that differ from the "
                              f"{len(content)} bytes written", retryable=False)
    _call("DELETE", name, auth, expect=(204,))
    _call("DELETE", container, auth, expect=(204,))


def wait_serving(lab: CephLab, timeout: float = RGW_TIMEOUT) -> float:
    """Poll the Swift round trip with the lab user's key until it succeeds; return the
    seconds waited. A client error (4xx, wrong content) fails at once."""
    key = _read_secret(keys_of(lab).swift_key) or ""
    started = time.monotonic()
    while True:
        try:
            swift_round_trip(AUTH_URL, SUBUSER, key)
            return round(time.monotonic() - started, 1)
        except SwiftCallFailed as exc:
            waited = time.monotonic() - started
            if not exc.retryable or waited > timeout:
                raise LabError(
                    f"waited {waited:.0f} s (of {timeout:.0f} s) for RGW at {RGW_URL} to serve "
                    f"a Swift auth + PUT/GET/DELETE as {SUBUSER}; last: {exc}") from None
        time.sleep(0.5)


def wait_answering(timeout: float = RGW_TIMEOUT) -> float:
    """Poll until RGW answers HTTP at all (it listens only once its zone is set up)."""
    started = time.monotonic()
    while True:
        try:
            _call("GET", f"{RGW_URL}/", {}, expect=tuple(range(200, 600)), timeout=5.0)
            return round(time.monotonic() - started, 1)
        except SwiftCallFailed as exc:
            waited = time.monotonic() - started
            if waited > timeout:
                raise LabError(f"waited {waited:.0f} s for RGW to answer HTTP at {RGW_URL}; "
                               f"last: {exc}") from None
        time.sleep(0.2)
