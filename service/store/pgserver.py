"""An embedded PostgreSQL server from Debian's binaries, for when DATABASE_URL is not set.

initdb and postgres refuse to run as root, so as root the data dir belongs to
Debian's `postgres` user and every server command runs as that user. The
server listens on 127.0.0.1 only, on its own port, with its socket in the data dir.
"""

from __future__ import annotations

import glob
import os
import subprocess
from pathlib import Path

import psycopg

from clusters.paths import state_dir

from .exceptions import DatabaseSetupError

USER = "faultline"


def port() -> int:
    return int(os.environ.get("FAULTLINE_PG_PORT", "54329"))


def data_dir() -> Path:
    return state_dir() / "pg"


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
    return f"postgresql+psycopg://{USER}@127.0.0.1:{port()}/{database}"


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
        done = _as_owner([str(bindir / "initdb"), "-D", str(pgdata), "-A", "trust", "-U", USER,
                          "-E", "UTF8", "--no-instructions"])
        if done.returncode != 0:
            raise DatabaseSetupError(f"initdb failed: {done.stderr.strip()}")
    if is_running():
        return False
    options = f"-k {pgdata} -p {port()} -c listen_addresses=127.0.0.1"
    done = _as_owner([str(bindir / "pg_ctl"), "-D", str(pgdata), "-o", options,
                      "-l", str(pgdata / "server.log"), "-w", "-t", "60", "start"])
    if done.returncode != 0:
        raise DatabaseSetupError(
            f"PostgreSQL did not start (see {pgdata}/server.log): {done.stderr.strip()}")
    return True


def stop() -> None:
    if is_running():
        _as_owner([str(_bindir() / "pg_ctl"), "-D", str(data_dir()), "-m", "fast", "-w",
                   "stop"], check=True)


def admin_dsn() -> str:
    """libpq DSN of the server's maintenance database, to create and drop databases."""
    return f"host=127.0.0.1 port={port()} user={USER} dbname=postgres"


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
