"""Fixtures for tests on the real lab and a real PostgreSQL server.

The suite brings up what it needs and takes down what it brought up: a lab or
a database server that was already running (a user's demo) is reused and left
as it was; anything the suite started is stopped, and then checked gone.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import psycopg
import pytest
from flask import Blueprint
from sqlalchemy import delete
from sqlalchemy.orm import sessionmaker
from web_login import SECRET, log_in

from clusters import fault_ledger
from clusters.inventory import load_cluster
from clusters.paths import default_inventory
from lab import ceph as ceph_lab
from lab import swift as swift_lab
from service import db, pgserver
from service.accounts import services as accounts
from service.accounts.models import User
from service.web import create_app
from service.web.access import require_role

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


@pytest.fixture
def rolled_back(database_url):
    """Sessions on one connection whose transaction is rolled back after the test: what they
    commit is a savepoint, so the test leaves nothing behind (same thread only)."""
    with db.engine(database_url).connect() as connection:
        transaction = connection.begin()
        yield sessionmaker(bind=connection, join_transaction_mode="create_savepoint",
                           expire_on_commit=False)
        transaction.rollback()


@pytest.fixture
def make_user(sessions):
    """Commit users of this test only (a served app reads them from its own connections);
    deleted, with their tokens, afterwards. Returns (name, password)."""
    names = []

    def make_user(role: str = "viewer") -> tuple[str, str]:
        name, password = f"{role}-{uuid.uuid4().hex[:10]}", f"pw-{uuid.uuid4().hex}"
        with sessions.begin() as session:
            accounts.create_user(session, name, role, password)
        names.append(name)
        return name, password

    yield make_user
    with sessions.begin() as session:
        session.execute(delete(User).where(User.name.in_(names)))


@pytest.fixture
def viewer_client(database_url, make_user):
    """A test client of the app on the test database, logged in as a new viewer."""
    client = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET}).test_client()
    response = log_in(client, *make_user("viewer"))
    assert response.status_code == 302, response.get_data(as_text=True)
    return client


@pytest.fixture
def rolled_back_user(rolled_back):
    """Add users in the test's rolled-back transaction. Returns (name, password)."""
    def rolled_back_user(role: str = "viewer") -> tuple[str, str]:
        name, password = f"{role}-{uuid.uuid4().hex[:10]}", f"pw-{uuid.uuid4().hex}"
        with rolled_back.begin() as session:
            accounts.create_user(session, name, role, password)
        return name, password
    return rolled_back_user


@pytest.fixture
def probe_calls() -> list[str]:
    """What the probe routes of `app` were called to do."""
    return []


@pytest.fixture
def app(database_url, rolled_back, probe_calls):
    """The real app for the test client, its sessions in the test's rolled-back transaction,
    plus routes that only record their calls: POST /probe/operate (no declared role, so the
    default for a POST) and POST /probe/administer (admin)."""
    app = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET})
    app.extensions["faultline.sessions"] = rolled_back
    probe = Blueprint("probe", __name__)

    @probe.post("/probe/operate")
    def operate():
        probe_calls.append("operate")
        return {"done": "operate"}

    @probe.post("/probe/administer")
    @require_role("admin")
    def administer():
        probe_calls.append("administer")
        return {"done": "administer"}

    app.register_blueprint(probe)
    return app
