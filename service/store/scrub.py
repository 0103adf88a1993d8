"""Secrets scrubbed from what is stored and shown: run journals, run errors, logs.

A secret is any URL's password (`scheme://user:password@host`), and every value Faultline
knows to be one: environment variables named like *PASSWORD*, *SECRET*, *TOKEN* or *KEY*
(the session key FAULTLINE_SECRET_KEY, the alert token FAULTLINE_ALERT_TOKEN, a Swift key),
the password of DATABASE_URL and of the PGPASSFILE, and the secret files under
FAULTLINE_HOME (the session key, the alert token, the embedded server's password). Each is
replaced by `***`.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from clusters.paths import state_dir

from .passfile import passwords
from .secret_files import OWN_SECRETS

HIDDEN = "***"
SECRET_NAME = re.compile(r"PASSWORD|SECRET|TOKEN|KEY", re.I)
URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@]*:)([^\s@/]+)(?=@)", re.I)
SHORTEST = 6  # a shorter value ("1", "yes") would blank words that are no secret


def known_secrets(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """Every secret value this process can know of."""
    environ = os.environ if environ is None else environ
    found = {value for name, value in environ.items() if SECRET_NAME.search(name)}
    try:
        found.add(make_url(environ.get("DATABASE_URL") or "").password or "")
    except ArgumentError:
        pass
    found.update(passwords(environ.get("PGPASSFILE")))
    for name in OWN_SECRETS:
        try:
            found.add((state_dir() / name).read_text().strip())
        except (OSError, UnicodeDecodeError):
            pass
    return frozenset(v for v in found if len(v) >= SHORTEST)


def scrub(text: str, secrets: Iterable[str] | None = None) -> str:
    """The text with every URL password and known secret replaced by ***."""
    text = URL_PASSWORD.sub(lambda m: m.group(1) + HIDDEN, text)
    for secret in sorted(known_secrets() if secrets is None else secrets, key=len,
                         reverse=True):
        text = text.replace(secret, HIDDEN)
    return text


def scrub_json(value: Any, secrets: Iterable[str] | None = None) -> Any:
    """A JSON document (a journal) with every string scrubbed, keys included."""
    secrets = known_secrets() if secrets is None else frozenset(secrets)
    if isinstance(value, str):
        return scrub(value, secrets)
    if isinstance(value, dict):
        return {scrub(str(k), secrets): scrub_json(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_json(v, secrets) for v in value]
    return value


class ScrubbingFormatter(logging.Formatter):
    """A log formatter that scrubs each line, traceback included, of the secrets known
    when it was made."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.secrets = known_secrets()

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record), self.secrets)


def scrub_logs(level: int = logging.INFO) -> None:
    """logging.basicConfig's format, its lines scrubbed (a command's logs: worker, runner)."""
    handler = logging.StreamHandler()
    handler.setFormatter(ScrubbingFormatter("[%(asctime)s %(levelname)s] %(message)s",
                                            datefmt="%H:%M:%S"))
    logging.basicConfig(level=level, handlers=[handler])
