"""An embedded PostgreSQL server from Debian's binaries, for when DATABASE_URL is not set.

initdb and postgres refuse to run as root, so as root the data dir belongs to
Debian's `postgres` user and every server command runs as that user. The
server listens on 127.0.0.1 only, on its own port, with its socket in the data dir.

Any local account can reach 127.0.0.1, so the server asks for a password over TCP
(scram-sha-256): one made on first use and kept in `$FAULTLINE_HOME/pg-password`, mode
0600, readable by root (or whoever runs Faultline) only. Its socket is in the data dir,
which only the server's owner can enter (peer authentication there). A data dir made
before this, with trust authentication, is moved to the password when it is started.
"""

from __future__ import annotations

import glob
import os
import re
import secrets
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import psycopg

from clusters.paths import state_dir

from .exceptions import DatabaseSetupError

USER = "faultline"


def port() -> int:
    return int(os.environ.get("FAULTLINE_PG_PORT", "54329"))


def data_dir() -> Path:
    return state_dir() / "pg"


def password_file() -> Path:
    return state_dir() / "pg-password"


def password() -> str:
    """The server's password for USER, made once (mode 0600) and read back after."""
    path = password_file()
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(24)
    try:  # O_EXCL: two commands starting at once agree on the first one's password
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as out:
        out.write(value + "\n")
    return value


def _bindir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if not found:
        raise DatabaseSetupError("PostgreSQL server binaries not found under /usr/lib/postgresql "
                                 "(install the postgresql package, or set DATABASE_URL)")
    return Path(found[-1]).parent


def _as_owner(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    if os.geteuid() == 0:
        argv = ["runuser", "-u", "postgres", "--", *argv]
    return subprocess.run(argv, capture_output=True, text=True, **kwargs)


def url(database: str = "faultline") -> str:
    return (f"postgresql+psycopg://{USER}:{quote(password(), safe='')}@127.0.0.1:{port()}/"
            f"{database}")


def is_running() -> bool:
    if not (data_dir() / "PG_VERSION").exists():
        return False
    return _as_owner([str(_bindir() / "pg_ctl"), "-D", str(data_dir()), "status"]).returncode == 0


def ensure_running() -> bool:
    """Initialise and start the server if needed; return True if this call started it."""
    bindir, pgdata = _bindir(), data_dir()
    if not (pgdata / "PG_VERSION").exists():
        pgdata.mkdir(parents=True, exist_ok=True)
        pgdata.parent.chmod(0o755)
        if os.geteuid() == 0:
            subprocess.run(["chown", "-R", "postgres:postgres", str(pgdata)], check=True)
        pgdata.chmod(0o700)
        with _readable_by_owner(password()) as pwfile:
            done = _as_owner([str(bindir / "initdb"), "-D", str(pgdata), "-U", USER,
                              "--auth-host=scram-sha-256", "--auth-local=peer",
                              f"--pwfile={pwfile}", "-E", "UTF8", "--no-instructions"])
        if done.returncode != 0:
            raise DatabaseSetupError(f"initdb failed: {done.stderr.strip()}")
    if is_running():
        _require_password(pgdata)
        return False
    options = f"-k {pgdata} -p {port()} -c listen_addresses=127.0.0.1"
    done = _as_owner([str(bindir / "pg_ctl"), "-D", str(pgdata), "-o", options,
                      "-l", str(pgdata / "server.log"), "-w", "-t", "60", "start"])
    if done.returncode != 0:
        raise DatabaseSetupError(
            f"PostgreSQL did not start (see {pgdata}/server.log): {done.stderr.strip()}")
    _require_password(pgdata)
    return True


@contextmanager
def _readable_by_owner(text: str) -> Iterator[str]:
    """The path of a temporary file holding `text` that only the server's owner (and root)
    can read; deleted after."""
    fd, path = tempfile.mkstemp(prefix="faultline-pw-")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text + "\n")
        if os.geteuid() == 0:
            owner = data_dir().stat()
            os.chown(path, owner.st_uid, owner.st_gid)
        yield path
    finally:
        os.unlink(path)


TRUST = re.compile(r"^(host\S*\s.*\s)trust\s*$", re.M)
LOCAL_TRUST = re.compile(r"^(local\s.*\s)trust\s*$", re.M)


def _require_password(pgdata: Path) -> None:
    """A data dir made with trust authentication: give USER the password, then make every
    TCP rule ask for it and the socket peer-only, and reload. Nothing to do otherwise."""
    hba = pgdata / "pg_hba.conf"
    try:  # root, or the server's owner: both may read it
        current = hba.read_text()
    except OSError as exc:
        raise DatabaseSetupError(f"cannot read {hba}: {exc}") from None
    if not (TRUST.search(current) or LOCAL_TRUST.search(current)):
        return
    with psycopg.connect(admin_dsn(with_password=False), autocommit=True) as conn:
        conn.execute("SET password_encryption = 'scram-sha-256'")
        conn.execute(f"ALTER ROLE {USER} PASSWORD {_literal(password())}")
    rules = TRUST.sub(lambda m: m.group(1) + "scram-sha-256", current)
    rules = LOCAL_TRUST.sub(lambda m: m.group(1) + "peer", rules)
    with _readable_by_owner(rules) as staged:
        copied = _as_owner(["cp", staged, str(hba)])
    if copied.returncode != 0:
        raise DatabaseSetupError(f"could not rewrite {hba}: {copied.stderr.strip()}")
    _as_owner([str(_bindir() / "pg_ctl"), "-D", str(pgdata), "reload"], check=True)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def stop() -> None:
    if is_running():
        _as_owner([str(_bindir() / "pg_ctl"), "-D", str(data_dir()), "-m", "fast", "-w",
                   "stop"], check=True)


def admin_dsn(with_password: bool = True) -> str:
    """libpq DSN of the server's maintenance database, to create and drop databases."""
    dsn = f"host=127.0.0.1 port={port()} user={USER} dbname=postgres"
    return f"{dsn} password={password()}" if with_password else dsn


def ensure_database(database: str) -> None:
    """Create the database if it does not exist."""
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                              (database,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{database}"')


def recreate_database(database: str) -> str:
    """Drop the database (whoever is connected) and create it empty; its URL. For the tests
    and the benchmarks, which each want a fresh database of their own."""
    drop_database(database)
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{database}"')
    return url(database)


def drop_database(database: str) -> None:
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
