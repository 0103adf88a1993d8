"""Fixtures for tests on the real lab and a real PostgreSQL server.

The suite brings up what it needs and takes down what it brought up: a lab or
a database server that was already running (a user's demo) is reused and left
as it was; anything the suite started is stopped, and then checked gone.
"""

from __future__ import annotations

import os
from pathlib import Path

import psycopg
import pytest

from clusters import fault_ledger
from clusters.inventory import load_cluster
from clusters.paths import default_inventory
from lab import ceph as ceph_lab
from lab import swift as swift_lab
from service import db, pgserver

REPO = Path(__file__).resolve().parents[2]
TEST_DB = "faultline_test"


def _lab_daemons_alive(lab=ceph_lab) -> bool:
    status = lab.status()
    return any(d.get("alive") for d in status.get("daemons", {}).values())


@pytest.fixture(scope="session")
def database_url():
    """A fresh database on a real PostgreSQL server, exported as DATABASE_URL."""
    if os.environ.get("DATABASE_URL"):
        db.migrate(os.environ["DATABASE_URL"])
        yield os.environ["DATABASE_URL"]
        return
    started = pgserver.ensure_running()
    dsn = f"host=127.0.0.1 port={pgserver.port()} user={pgserver.USER} dbname=postgres"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{TEST_DB}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{TEST_DB}"')
    url = pgserver.url(TEST_DB)
    db.migrate(url)  # the schema comes from the migrations, as in production
    os.environ["DATABASE_URL"] = url
    yield url
    del os.environ["DATABASE_URL"]
    if started:
        pgserver.stop()


@pytest.fixture(scope="session")
def ceph_cluster():
    """The Ceph lab, up and HEALTH_OK; taken down after the suite if the suite started it."""
    was_up = _lab_daemons_alive()
    ceph_lab.up()
    yield load_cluster(default_inventory(), "lab-ceph")
    if not was_up:
        ceph_lab.down(purge=True)
        _assert_nothing_left()


@pytest.fixture(scope="session")
def swift_cluster():
    """The Swift lab, up and answering PUT/GET through its proxy; taken down after the suite
    if the suite started it."""
    was_up = _lab_daemons_alive(swift_lab)
    swift_lab.up()
    yield load_cluster(default_inventory(), "lab-swift")
    if not was_up:
        swift_lab.down(purge=True)
        _assert_nothing_left(swift_lab)


def _assert_nothing_left(lab=ceph_lab) -> None:
    left = {kind: items for kind, items in lab.leftovers().items() if items}
    assert not left, f"the {lab.__name__} lab left things behind: {left}"


@pytest.fixture
def env(database_url):
    """Environment for a subprocess (`chaos run`, `faultline ...`) using the test database."""
    return {**os.environ, "DATABASE_URL": database_url, "FAULTLINE_CLUSTER": "lab-ceph",
            "PATH": f"{REPO / '.venv' / 'bin'}:{os.environ['PATH']}"}


@pytest.fixture
def file_ledger(tmp_path):
    """Faults injected by the test go to a ledger file of its own, not the machine's."""
    fault_ledger.set_backend(fault_ledger.FileLedger(tmp_path / "faults.json"))
    yield
    fault_ledger.set_backend(None)


@pytest.fixture
def sessions(database_url):
    """Sessions on the test database."""
    return db.session_factory(database_url)
