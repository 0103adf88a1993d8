"""Client credentials kept by reference in the inventory, resolved when a driver needs them.

The Swift API (OpenStack Swift, or Ceph RGW's Swift endpoint) is reached with
auth v1: an auth URL, a user and a key. The key is never in the inventory
itself, only where to find it:

    clusters:
      lab-swift:
        kind: swift
        client:
          auth_url: http://127.0.0.1:8280/auth/v1.0
          user: test:tester
          key_file: /path/swift.key     # or key_env: FAULTLINE_SWIFT_KEY
      lab-ceph:
        kind: ceph
        client:
          conf: /etc/ceph/ceph.conf
          swift_api:                    # RGW, same four keys
            auth_url: http://127.0.0.1:7480/auth/1.0
            user: faultline:swift
            key_env: FAULTLINE_RGW_KEY

A key file's surrounding whitespace (its trailing newline) is not part of the key. It must
be private (clusters/access/private_files.py): a key file others can read is refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clusters.access.inventory import Cluster
from clusters.access.private_files import check_private
from clusters.exceptions import CredentialsError

KEY_SOURCES = ("key_file", "key_env")


@dataclass(frozen=True)
class SwiftCredentials:
    auth_url: str
    user: str
    key: str = field(repr=False)  # never in a log line or a traceback


def swift_credentials(cluster: Cluster) -> SwiftCredentials:
    """The Swift API credentials of a cluster, the key read from its file or variable."""
    section, where = _swift_section(cluster)
    problems = _check(section, where)
    if problems:
        raise CredentialsError(f"cluster {cluster.name!r}: " + "; ".join(problems))
    if section.get("key_file"):
        key = _key_from_file(Path(str(section["key_file"])).expanduser(), cluster.name)
    else:
        key = _key_from_env(str(section["key_env"]), cluster.name)
    return SwiftCredentials(auth_url=section["auth_url"], user=section["user"], key=key)


def _swift_section(cluster: Cluster) -> tuple[dict[str, Any], str]:
    """The mapping holding the Swift API keys, and its name for messages."""
    if cluster.kind == "ceph":
        where = "client.swift_api"
        section = cluster.client.get("swift_api")
    else:
        where = "client"
        keys = ("auth_url", "user", *KEY_SOURCES)
        section = cluster.client if any(k in cluster.client for k in keys) else None
    if section is None:
        raise CredentialsError(
            f"cluster {cluster.name!r} has no Swift API configured (set {where}.auth_url, "
            f"{where}.user and {where}.key_file or {where}.key_env)")
    if not isinstance(section, dict):
        raise CredentialsError(f"cluster {cluster.name!r}: {where} must be a mapping")
    return section, where


def _check(section: dict[str, Any], where: str) -> list[str]:
    problems = []
    missing = [k for k in ("auth_url", "user") if not section.get(k)]
    sources = [k for k in KEY_SOURCES if section.get(k)]
    if not sources:
        missing.append("key_file or key_env")
    if missing:
        problems.append(f"{where} lacks {', '.join(missing)}")
    if len(sources) > 1:
        problems.append(f"{where} sets both key_file and key_env; keep one")
    if "key" in section:
        problems.append(f"{where}.key must not hold the key itself: use key_file or key_env")
    url = section.get("auth_url")
    if url and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        problems.append(f"{where}.auth_url must be an http:// or https:// URL, not {url!r}")
    user = section.get("user")
    if user and not isinstance(user, str):
        problems.append(f"{where}.user must be a string, not {user!r}")
    return problems


def _key_from_file(path: Path, cluster: str, what: str = "Swift key") -> str:
    try:
        key = path.read_text().strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise CredentialsError(
            f"cannot read the {what} file {path} of cluster {cluster!r}: {reason}") from None
    if not key:
        raise CredentialsError(f"the {what} file {path} of cluster {cluster!r} is empty")
    check_private(path, f"{what} file of cluster {cluster!r}")
    return _one_token(key, f"the {what} file {path} of cluster {cluster!r}")


def _key_from_env(variable: str, cluster: str, what: str = "Swift key") -> str:
    key = os.environ.get(variable)
    where = f"environment variable {variable} (the {what} of cluster {cluster!r})"
    if key is None:
        raise CredentialsError(f"{where} is not set")
    if not key.strip():
        raise CredentialsError(f"{where} is empty")
    return _one_token(key.strip(), where)


def _one_token(key: str, where: str) -> str:
    """A key goes into a request header as it is: a space or a control character inside it
    (a line break would start a header of its own) is refused, never sent."""
    if any(c.isspace() or not c.isprintable() for c in key):
        raise CredentialsError(f"{where} holds a space or a control character inside the key")
    return key


# -- S3 -------------------------------------------------------------------------------


@dataclass(frozen=True)
class S3Credentials:
    endpoint: str
    access_key: str = field(repr=False)
    secret_key: str = field(repr=False)
    region: str = "us-east-1"  # what RGW and Swift's s3api accept unless configured


def s3_credentials(cluster: Cluster) -> S3Credentials:
    """A cluster's S3 endpoint and key pair (client.s3), each key read from its file or
    variable:

        client:
          s3:
            endpoint: http://127.0.0.1:7480
            access_key_file: /path/s3.access_key   # or access_key_env: VARIABLE
            secret_key_file: /path/s3.secret_key   # or secret_key_env: VARIABLE
            region: us-east-1                      # optional
    """
    section = cluster.client.get("s3")
    if section is None:
        raise CredentialsError(
            f"cluster {cluster.name!r} has no S3 API configured (set client.s3.endpoint and "
            "its access_key_file and secret_key_file, or their _env forms)")
    if not isinstance(section, dict):
        raise CredentialsError(f"cluster {cluster.name!r}: client.s3 must be a mapping")
    problems = []
    endpoint = section.get("endpoint")
    if not (isinstance(endpoint, str) and endpoint.startswith(("http://", "https://"))):
        problems.append(f"client.s3.endpoint must be an http:// or https:// URL, "
                        f"not {endpoint!r}")
    region = section.get("region", "us-east-1")
    if not isinstance(region, str) or not region:
        problems.append(f"client.s3.region must be a name, not {region!r}")
    for key in ("access_key", "secret_key"):
        if key in section:
            problems.append(f"client.s3.{key} must not hold the key itself: use "
                            f"{key}_file or {key}_env")
        sources = [s for s in (f"{key}_file", f"{key}_env") if section.get(s)]
        if len(sources) != 1:
            problems.append(f"client.s3 needs exactly one of {key}_file and {key}_env")
    if problems:
        raise CredentialsError(f"cluster {cluster.name!r}: " + "; ".join(problems))
    found = {}
    for key, what in (("access_key", "S3 access key"), ("secret_key", "S3 secret key")):
        if section.get(f"{key}_file"):
            found[key] = _key_from_file(Path(str(section[f"{key}_file"])).expanduser(),
                                        cluster.name, what)
        else:
            found[key] = _key_from_env(str(section[f"{key}_env"]), cluster.name, what)
    return S3Credentials(endpoint=endpoint, region=region, **found)
