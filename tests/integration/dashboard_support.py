"""Fixtures of the dashboard tests: an inventory of clusters that do not exist (the tests
never reach a cluster), the app on the test's rolled-back transaction with that inventory,
and test clients logged in as a viewer or an operator.

Import the fixtures a test module uses: `from dashboard_support import dash_app, ...`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from sqlalchemy import func, select, text
from web_login import SECRET, csrf_token, log_in

from service.store.models import Run
from service.web.app import create_app

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = REPO / "experiments"
SECRET_PATHS = ("/secret/ssh/id_ed25519", "/secret/bmc-password", "/secret/ceph.keyring",
                "/secret/swift.key", "/secret/s3.secret")


def inventory_spec() -> dict:
    """Two clusters shaped like the labs, at addresses from TEST-NET-1 (192.0.2.0/24: nothing
    answers there) and with configuration files that do not exist."""
    zones = {"node1": "zone1", "node2": "zone1", "node3": "zone2", "node4": "zone3"}
    ceph_nodes = [{"name": n, "address": f"192.0.2.{11 + i}", "zone": z}
                  for i, (n, z) in enumerate(zones.items())]
    ceph_nodes[3]["power"] = {"type": "ipmi", "address": "192.0.2.99", "user": "admin",
                              "password_file": SECRET_PATHS[1]}
    swift_nodes = [{"name": n, "address": f"192.0.2.{21 + i}", "zone": z}
                   for i, (n, z) in enumerate(zones.items())]
    return {"clusters": {
        "dash-ceph": {
            "kind": "ceph", "chaos": "allowed",
            "ssh": {"user": "root", "key_file": SECRET_PATHS[0]},
            "nodes": ceph_nodes,
            "disks": [{"node": f"node{i + 1}", "device": f"/dev/sd{'bcde'[i]}",
                       "mount": f"/var/lib/ceph/osd/ceph-{i}", "osd": i} for i in range(4)],
            "services": [{"name": f"osd.{i}", "kind": "osd", "node": f"node{i + 1}",
                          "unit": f"ceph-osd@{i}"} for i in range(4)]
            + [{"name": "mon.a", "kind": "mon", "unit": "ceph-mon@a"}],
            "client": {"conf": "/nonexistent/faultline-dash/ceph.conf",
                       "keyring": SECRET_PATHS[2], "pool": "faultline",
                       "swift_api": {"auth_url": "http://192.0.2.1:7480/auth/1.0",
                                     "user": "faultline:swift", "key_file": SECRET_PATHS[3]},
                       "s3": {"endpoint": "http://192.0.2.1:7480",
                              "secret_key_file": SECRET_PATHS[4]}}},
        "dash-swift": {
            "kind": "swift", "chaos": "allowed",
            "ssh": {"user": "root", "key_file": SECRET_PATHS[0]},
            "nodes": swift_nodes,
            "disks": [{"node": f"node{i + 1}", "device": f"/dev/sd{'bcde'[i]}",
                       "mount": f"/srv/node/d{i + 1}", "swift_device": f"d{i + 1}"}
                      for i in range(4)],
            "services": [{"name": f"{kind}-server.node{i + 1}", "kind": f"{kind}-server",
                          "node": f"node{i + 1}", "unit": f"swift-{kind}@{i + 1}"}
                         for i in range(4) for kind in ("object", "container", "account")],
            "client": {"auth_url": "http://192.0.2.1:8080/auth/v1.0", "user": "test:tester",
                       "key_file": SECRET_PATHS[3],
                       "swift_dir": "/nonexistent/faultline-dash/swift"}},
    }}


@pytest.fixture
def dash_inventory(tmp_path) -> Path:
    path = tmp_path / "inventory.yaml"
    path.write_text(yaml.safe_dump(inventory_spec()))
    return path


@pytest.fixture
def dash_app(database_url, rolled_back, dash_inventory):
    """The real app on the test's rolled-back transaction, the clusters of dash_inventory and
    the repository's experiments."""
    app = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET,
                      "INVENTORY": str(dash_inventory), "EXPERIMENTS_DIR": str(EXPERIMENTS)})
    app.extensions["faultline.sessions"] = rolled_back
    return app


def _client(app, user: tuple[str, str]):
    client = app.test_client()
    assert log_in(client, *user).status_code == 302
    return client


@pytest.fixture
def operator(dash_app, rolled_back_user):
    return _client(dash_app, rolled_back_user("operator"))


@pytest.fixture
def viewer(dash_app, rolled_back_user):
    return _client(dash_app, rolled_back_user("viewer"))


def token_of(client, path: str = "/") -> str:
    """A CSRF token of the client's session, from a page's form."""
    return csrf_token(client.get(path).get_data(as_text=True))


def counts(sessions) -> tuple[int, int]:
    """(runs, procrastinate jobs): what a refused request must leave as it was."""
    with sessions() as session:
        runs = session.execute(select(func.count(Run.id))).scalar_one()
        jobs = session.execute(text("SELECT count(*) FROM procrastinate_jobs")).scalar_one()
    return runs, jobs


def add_recovery(session, run, kind: str = "ceph") -> None:
    """Cluster samples of a run made by factories.make_run: the fault at 30 s, noticed at
    31 s, back to full redundancy at 50 s; committed."""
    from factories import START

    from service.store.models import ClusterSample, Event

    for s in range(60):
        hurt = 31 <= s < 50
        if kind == "ceph":
            bad = 12 if hurt else 0
            state = {"degraded_objects": 40 * bad, "misplaced_objects": 5 * bad, "num_pgs": 32,
                     "pgs_by_state": {"active+clean": 32 - bad,
                                      **({"active+undersized+degraded": bad} if bad else {})},
                     "fault_seen": hurt, "fully_redundant": not hurt}
        else:
            state = {"dispersion": {"object_pct": 66.67 if hurt else 100.0},
                     "handoff_partitions": 7 if hurt else 0, "fault_seen": hurt,
                     "fully_redundant": not hurt}
        session.add(ClusterSample(run_id=run.id, ts=START + s, state=state,
                                  health="HEALTH_WARN" if hurt else "HEALTH_OK"))
    session.add(Event(run_id=run.id, ts=START + 31.0, kind="cluster_noticed", detail={}))
    session.commit()
