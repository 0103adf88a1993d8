"""Fixtures for tests on the real lab and a real PostgreSQL server.

The suite brings up what it needs and takes down what it brought up: a lab or
a database server that was already running (a user's demo) is reused and left
as it was; anything the suite started is stopped, and then checked gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from factories import delete_made_by
from flask import Blueprint
from reef_lab import assert_nothing_left, nodes_running
from serving import served
from sqlalchemy import delete, select
from sqlalchemy.orm import sessionmaker
from streams import lab_changes, select_stream, wait_for_side_stream
from web_login import SECRET, log_in

from clusters.access.inventory import load_cluster
from clusters.paths import default_inventory
from clusters.safety import fault_ledger
from lab import ceph as ceph_lab
from lab import ceph_reef
from lab import swift as swift_lab
from service.accounts import services as accounts
from service.accounts.models import User
from service.cli.group import main
from service.jobs import run_queue
from service.jobs.app import make_app
from service.monitoring import embedded as monitoring
from service.store import db, pgserver
from service.store.models import FaultRecord, Run
from service.web.access import require_role
from service.web.app import create_app

REPO = Path(__file__).resolve().parents[2]
TEST_DB = os.environ.get("FAULTLINE_TEST_DB", "faultline_test")  # one per stream (streams.py)


def pytest_addoption(parser):
    parser.addoption("--stream", choices=("all", "main", "side"), default="all",
                     help="run the whole lab suite, or one of its two streams (streams.py)")


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected theirs
def pytest_collection_modifyitems(config, items):
    select_stream(config, items)


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
    url = pgserver.recreate_database(TEST_DB)
    db.migrate(url)  # the schema comes from the migrations, as in production
    os.environ["DATABASE_URL"] = url
    yield url
    del os.environ["DATABASE_URL"]
    if started:
        pgserver.stop()


@pytest.fixture(scope="session")
def ceph_cluster():
    """The Ceph lab, up and HEALTH_OK; taken down after the suite if the suite started it."""
    with lab_changes():
        was_up = _lab_daemons_alive()
        if not was_up:  # the data earlier runs left (a near-full disk) is not the suite's
            ceph_lab.down(purge=True)
        ceph_lab.up()
    yield load_cluster(default_inventory(), "lab-ceph")
    if not was_up:
        with lab_changes():
            ceph_lab.down(purge=True)
        _assert_nothing_left()


@pytest.fixture(scope="session")
def swift_cluster(pytestconfig):
    """The Swift lab, up and answering PUT/GET through its proxy; taken down after the suite
    if the suite started it. In the main stream, once the side stream is over."""
    wait_for_side_stream(pytestconfig)
    with lab_changes():
        was_up = _lab_daemons_alive(swift_lab)
        if not was_up:
            swift_lab.down(purge=True)
        swift_lab.up()
    yield load_cluster(default_inventory(), "lab-swift")
    if not was_up:
        with lab_changes():
            swift_lab.down(purge=True)
        _assert_nothing_left(swift_lab)


@pytest.fixture(scope="session")
def reef_cluster():
    """The Reef lab (Ceph 18 under systemd in containers, its root filesystem built first if
    missing), HEALTH_OK; taken down and purged after the suite if the suite started it."""
    with lab_changes():
        was_up = nodes_running()
        info = ceph_reef.up()
    print(f"\nreef lab up: { {k: v for k, v in info.items() if k != 'state'} }")
    yield load_cluster(default_inventory(), ceph_reef.CLUSTER_NAME)
    if not was_up:
        with lab_changes():
            left = ceph_reef.down(purge=True)
        assert_nothing_left(left)


def _assert_nothing_left(lab=ceph_lab) -> None:
    left = {kind: items for kind, items in lab.leftovers().items() if items}
    assert not left, f"the {lab.__name__} lab left things behind: {left}"


@pytest.fixture
def env(database_url):
    """Environment for a subprocess (`chaos run`, `faultline ...`) using the test database."""
    return {**os.environ, "DATABASE_URL": database_url, "FAULTLINE_CLUSTER": "lab-ceph",
            "PATH": f"{REPO / '.venv' / 'bin'}:{os.environ['PATH']}"}


@pytest.fixture
def invoke(database_url, tmp_path):
    """The `faultline` command line through click's runner, on the test database, with
    FAULTLINE_HOME (this machine's fault ledger file and state) in tmp_path."""
    def invoke(*args: str, input: str | None = None):
        return CliRunner().invoke(main, list(args), input=input, env={
            "DATABASE_URL": database_url, "FAULTLINE_HOME": str(tmp_path)})
    return invoke


@pytest.fixture
def file_ledger(tmp_path):
    """Faults injected by the test go to a ledger file of its own, not the machine's."""
    fault_ledger.set_backend(fault_ledger.FileLedger(tmp_path / "faults.json"))
    yield
    fault_ledger.set_backend(None)


@pytest.fixture
def own_cluster(sessions):
    """A cluster name of this test only (nor the lab's): its runs and faults are deleted
    afterwards, and healing touches only its faults."""
    name = f"test-{uuid.uuid4().hex[:10]}"
    yield name
    with sessions.begin() as session:
        session.execute(delete(FaultRecord).where(FaultRecord.cluster == name))
        session.execute(delete(Run).where(Run.cluster == name))


@pytest.fixture
def sessions(database_url):
    """Sessions on the test database."""
    return db.session_factory(database_url)


@pytest.fixture
def made(sessions):
    """Runs made by a test, deleted afterwards (with everything they recorded)."""
    ids: list[int] = []
    yield ids
    with sessions.begin() as session:
        session.execute(delete(Run).where(Run.id.in_(ids)))


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


# --- the REST API (tests/integration/test_api_*.py) ---

API_INVENTORY = """\
clusters:
  lab-ceph:
    kind: ceph
    chaos: allowed
    ssh: {user: root, key_file: /etc/secret/id_ed25519-SSH-KEY-PATH,
          known_hosts: /etc/secret/known_hosts-PATH}
    nodes:
      - {name: node1, address: 192.0.2.11, zone: zone1,
         power: {type: ipmi, address: 192.0.2.211, user: bmc-admin,
                 password_file: /etc/secret/bmc-PASSWORD-PATH}}
      - {name: node2, address: 192.0.2.12, zone: zone1}
      - {name: node3, address: 192.0.2.13, zone: zone2}
      - {name: node4, address: 192.0.2.14, zone: zone3}
    disks:
      - {node: node1, device: /dev/sdb, mount: /var/lib/ceph/osd/ceph-0, osd: 0}
      - {node: node2, device: /dev/sdb, mount: /var/lib/ceph/osd/ceph-1, osd: 1}
      - {node: node3, device: /dev/sdb, mount: /var/lib/ceph/osd/ceph-2, osd: 2}
      - {node: node4, device: /dev/sdb, mount: /var/lib/ceph/osd/ceph-3, osd: 3}
    services:
      - {name: osd.0, kind: osd, node: node1, unit: ceph-osd@0}
      - {name: osd.1, kind: osd, node: node2, unit: ceph-osd@1}
      - {name: osd.2, kind: osd, node: node3, unit: ceph-osd@2}
      - {name: osd.3, kind: osd, node: node4, unit: ceph-osd@3}
      - {name: mon.a, kind: mon, pid_file: /run/ceph/ceph-mon.a.pid,
         start: "env CEPH_SECRET=start-COMMAND-SECRET ceph-mon -i a"}
      - {name: rgw.lab, kind: rgw, unit: ceph-radosgw@rgw.lab}
    client:
      conf: /etc/ceph/ceph.conf
      keyring: /etc/secret/ceph.client.admin.KEYRING-PATH
      pool: faultline
      swift_api: {auth_url: "http://192.0.2.1:7480/auth/1.0", user: "faultline:swift",
                  key_file: /etc/secret/rgw-swift-KEY-PATH}
      s3: {endpoint: "http://192.0.2.1:7480", access_key_file: /etc/secret/s3-ACCESS-PATH,
           secret_key_file: /etc/secret/s3-SECRET-PATH}
      prometheus: http://192.0.2.1:9283/metrics
  lab-swift:
    kind: swift
    chaos: allowed
    nodes:
      - {name: node1, address: 192.0.2.21, zone: zone1}
      - {name: node2, address: 192.0.2.22, zone: zone2, power: {type: ssh}}
    disks:
      - {node: node1, device: /dev/sdc, mount: /srv/node/d1, swift_device: d1}
      - {node: node2, device: /dev/sdc, mount: /srv/node/d2, swift_device: d2}
    services:
      - {name: object-server.node1, kind: object-server, node: node1,
         unit: swift-object-server}
      - {name: object-server.node2, kind: object-server, node: node2,
         unit: swift-object-server}
    client: {auth_url: "http://192.0.2.2:8280/auth/v1.0", user: "test:tester",
             key_env: FAULTLINE_TEST_SWIFT-KEY-ENV}
"""


@pytest.fixture(scope="session")
def api_inventory(tmp_path_factory) -> Path:
    """An inventory of its own for the API tests: lab-ceph and lab-swift as the experiment
    files expect them, on addresses nothing answers (nothing here contacts a cluster), with
    every kind of secret reference."""
    path = tmp_path_factory.mktemp("api") / "inventory.yaml"
    path.write_text(API_INVENTORY)
    return path


@pytest.fixture
def api_app(database_url, api_inventory):
    """The real app on committed sessions: a run is queued on procrastinate's own
    connection, which a rolled-back transaction would hide. Tests delete what they made."""
    return create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET,
                       "INVENTORY": str(api_inventory)})


@pytest.fixture
def api_token(sessions, make_user):
    """An API token of a new committed user of the given role: (user name, token)."""
    def api_token(role: str) -> tuple[str, str]:
        name, _ = make_user(role)
        with sessions.begin() as session:
            return name, accounts.create_token(session, name, "api test")[1]
    return api_token


@pytest.fixture
def api_as(api_app, api_token, sessions):
    """A test client of the API that sends a new user's token (none for role None); its
    user's name is `client.user_name`. Afterwards the runs (with their jobs), schedules and
    uploaded experiments these users made are deleted."""
    names = []

    def api_as(role: str | None):
        client = api_app.test_client()
        client.user_name = None
        if role is not None:
            client.user_name, token = api_token(role)
            client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token}"
            names.append(client.user_name)
        return client

    yield api_as
    delete_made_by(sessions, names)


@pytest.fixture
def queue_app(database_url):
    return make_app(database_url)


@pytest.fixture
def worker(env, sessions, queue_app):
    """A real `faultline worker` on the test database; stopped (SIGINT, graceful) after,
    once whatever a failed test left queued or running is cancelled (rollbacks run)."""
    process = subprocess.Popen([sys.executable, "-m", "service", "worker", "--concurrency", "2"],
                               env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    yield process
    with sessions() as session:
        left = session.execute(select(Run.id).where(Run.status.in_(("queued", "running")),
                                                    Run.job_id.is_not(None))).scalars().all()
    for run_id in left:
        try:
            run_queue.cancel(sessions, queue_app, run_id)
        except run_queue.QueueError:
            pass  # it ended meanwhile
    process.send_signal(signal.SIGINT)  # the worker waits for its runs to end
    try:
        process.wait(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


# The embedded Prometheus and Alertmanager, for the lab tests of monitoring and alerts.
ALERT_TOKEN = "the alert token of the monitoring tests"


@pytest.fixture
def monitored_service_url(database_url, monkeypatch):
    monkeypatch.setenv("FAULTLINE_ALERT_TOKEN", ALERT_TOKEN)
    app = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET})
    with served(app) as url:
        yield url


@pytest.fixture
def stack(ceph_cluster, swift_cluster, monitored_service_url, env, tmp_path):
    """Prometheus and Alertmanager with their state in the test's own directory."""
    env = {**env, "FAULTLINE_HOME": str(tmp_path), "FAULTLINE_ALERT_TOKEN": ALERT_TOKEN}
    up = subprocess.run(["faultline", "monitoring", "up", "--service-url", monitored_service_url],
                        env=env, cwd=REPO,
                        capture_output=True, text=True, timeout=180)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        assert f"Prometheus: {monitoring.prometheus_url()}" in up.stdout
        yield env
    finally:
        down = subprocess.run(["faultline", "monitoring", "down"], env=env, cwd=REPO,
                              capture_output=True, text=True, timeout=60)
        assert down.returncode == 0, down.stderr
        status = subprocess.run(["faultline", "monitoring", "status"], env=env, cwd=REPO,
                                capture_output=True, text=True, timeout=60).stdout
        assert status.count("not running") == 2, status
