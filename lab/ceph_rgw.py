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

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clusters.access.private_files import write_private
from clusters.polling import poll_until

from . import swift_api
from .ceph_layout import RGW_TIMEOUT, RGW_URL, CephLab
from .exceptions import LabError

USER = "faultline"
SUBUSER = f"{USER}:swift"
AUTH_URL = f"{RGW_URL}/auth/1.0"
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
    write_private(path, value + "\n")


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


def wait_serving(lab: CephLab, timeout: float = RGW_TIMEOUT) -> float:
    """Poll the Swift round trip with the lab user's key until it succeeds; return the
    seconds waited. A client error (4xx, wrong content) fails at once."""
    key = _read_secret(keys_of(lab).swift_key) or ""
    return swift_api.wait_for_round_trip(f"RGW at {RGW_URL}", AUTH_URL, SUBUSER, key, timeout)


def wait_answering(timeout: float = RGW_TIMEOUT) -> float:
    """Poll until RGW answers HTTP at all (it listens only once its zone is set up)."""
    started = time.monotonic()

    def answers() -> bool:
        swift_api.call("GET", f"{RGW_URL}/", {}, expect=tuple(range(200, 600)), timeout=5.0)
        return True
    poll_until("RGW to answer HTTP", answers, timeout, 0.2, error=LabError,
               message=lambda exc: f"waited {time.monotonic() - started:.0f} s for RGW to "
                                   f"answer HTTP at {RGW_URL}; last: {exc}",
               retry_on=(swift_api.SwiftCallFailed,))
    return round(time.monotonic() - started, 1)
