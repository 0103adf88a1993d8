"""The database password kept out of the URL that run processes are given.

A worker starts a process per run (and per heal); an experiment's output and its journal
are readable by every viewer, so that process's environment holds no password: its
DATABASE_URL has none, and libpq reads it from a passfile (PGPASSFILE, the `.pgpass`
format: host:port:database:user:password) under `$FAULTLINE_HOME/pgpass/`, mode 0600, one
file per (host, port, database, user), which psycopg and procrastinate honour as libpq does.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from sqlalchemy.engine import make_url

from clusters.paths import state_dir


def directory() -> Path:
    return state_dir() / "pgpass"


def without_password(url: str) -> tuple[str, dict[str, str]]:
    """The URL without its password, and the environment that gives libpq the password
    (PGPASSFILE, written now); the URL as it is and nothing if it has no password."""
    parsed = make_url(url)
    if not parsed.password:
        return url, {}
    fields = [str(parsed.host or "localhost"), str(parsed.port or 5432),
              parsed.database or "*", parsed.username or "*"]
    path = write(fields, str(parsed.password))
    bare = parsed._replace(password=None).render_as_string(hide_password=False)
    return bare, {"PGPASSFILE": str(path)}


def write(fields: list[str], password: str) -> Path:
    """The passfile of (host, port, database, user), written with mode 0600 all at once."""
    folder = directory()
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    name = hashlib.sha256(":".join(fields).encode()).hexdigest()[:16]
    path = folder / name
    line = ":".join(_escaped(f) if f != "*" else f for f in fields) + ":" + _escaped(password)
    fd, staged = tempfile.mkstemp(dir=folder, prefix=".pgpass.")  # mode 0600
    try:
        with os.fdopen(fd, "w") as out:
            out.write(line + "\n")
        os.replace(staged, path)
    except BaseException:
        os.unlink(staged)
        raise
    return path


def passwords(path: str | None) -> list[str]:
    """The passwords a passfile holds (to scrub them from what is shown)."""
    try:
        lines = Path(path).read_text().splitlines() if path else []
    except OSError:
        return []
    found = []
    for line in lines:
        fields, current, escaped = [], "", False
        for char in line:
            if escaped:
                current, escaped = current + char, False
            elif char == "\\":
                escaped = True
            elif char == ":" and len(fields) < 4:
                fields.append(current)
                current = ""
            else:
                current += char
        if len(fields) == 4 and current:
            found.append(current)
    return found


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace(":", "\\:")
