"""The embedded PostgreSQL asks every TCP client for its password (scram-sha-256), kept in a
0600 file; a data dir made before with trust authentication is moved to it when started."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

from service.store import pgserver

REPO = Path(__file__).resolve().parents[2]
OTHER_PORT = 54339  # a throwaway server beside the tests' own


def _dsn(port: int, password: str | None) -> str:
    dsn = f"host=127.0.0.1 port={port} user={pgserver.USER} dbname=postgres connect_timeout=5"
    return dsn if password is None else f"{dsn} password={password}"


def _refused(dsn: str) -> str:
    with pytest.raises(psycopg.OperationalError) as refused:
        psycopg.connect(dsn).close()
    return str(refused.value)


def test_the_server_takes_only_its_password_kept_private(database_url):
    path = pgserver.password_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    port, password = pgserver.port(), pgserver.password()

    assert "password" in _refused(_dsn(port, None))
    assert "password authentication failed" in _refused(_dsn(port, password + "x"))
    with psycopg.connect(_dsn(port, password)) as conn:
        assert conn.execute("SELECT current_user").fetchone() == (pgserver.USER,)
        method = conn.execute("SELECT DISTINCT auth_method FROM pg_hba_file_rules "
                              "WHERE type LIKE 'host%'").fetchall()
    assert method == [("scram-sha-256",)]


def _server(home: Path, *code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "FAULTLINE_HOME": str(home), "FAULTLINE_PG_PORT": str(OTHER_PORT)}
    env.pop("DATABASE_URL", None)
    return subprocess.run([sys.executable, "-c", "from service.store import pgserver; "
                           + "; ".join(code)], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def home():
    """A FAULTLINE_HOME the server's owner can reach (pytest's tmp_path is root's only)."""
    path = Path(tempfile.mkdtemp(prefix="faultline-pg-", dir="/var/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def test_a_data_dir_made_with_trust_is_moved_to_the_password_when_started(home):
    pgdata = home / "pg"
    pgdata.mkdir(mode=0o700)
    owner = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if owner:
        subprocess.run(["chown", "postgres:postgres", str(pgdata)], check=True)
    bindir = Path(sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))[-1]).parent
    subprocess.run(owner + [str(bindir / "initdb"), "-D", str(pgdata), "-A", "trust", "-U",
                            pgserver.USER, "--no-instructions"], check=True,
                   capture_output=True)
    try:
        started = _server(home, "print(pgserver.ensure_running())")
        assert started.returncode == 0 and started.stdout.strip() == "True", started.stderr
        password = (home / "pg-password").read_text().strip()
        assert stat.S_IMODE((home / "pg-password").stat().st_mode) == 0o600

        assert "password" in _refused(_dsn(OTHER_PORT, None))
        with psycopg.connect(_dsn(OTHER_PORT, password)) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        rules = (pgdata / "pg_hba.conf").read_text()
        assert not pgserver.TRUST.search(rules) and not pgserver.LOCAL_TRUST.search(rules)
        # started again: nothing left to move, the same password
        again = _server(home, "print(pgserver.ensure_running())")
        assert again.stdout.strip() == "False", again.stderr
        assert (home / "pg-password").read_text().strip() == password
    finally:
        stopped = _server(home, "pgserver.stop()")
        assert stopped.returncode == 0, stopped.stderr
