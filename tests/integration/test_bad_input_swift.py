"""Bad input for a Swift run gets one clear message, a non-zero exit, and changes nothing:
no run is recorded, no server is killed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from sqlalchemy import create_engine, func, select
from sqlalchemy.orm import Session

from clusters.access import services
from clusters.paths import default_inventory
from service.store.models import Run

REPO = Path(__file__).resolve().parents[2]
EXPERIMENT = json.loads((REPO / "experiments" / "swift-kill-object-server.json").read_text())

pytestmark = pytest.mark.lab


def _run_count(url: str) -> int:
    with Session(create_engine(url)) as session:
        return session.execute(select(func.count(Run.id))).scalar_one()


def _server_pids(cluster) -> dict[str, int | None]:
    """The PIDs of what a kill_server could hit: the object servers and the proxy."""
    return {s.name: services.pid_of(cluster, s) for s in cluster.services
            if s.kind in ("object-server", "proxy-server")}


def _with_fault(**arguments) -> dict:
    experiment = json.loads(json.dumps(EXPERIMENT))
    experiment["method"][0]["provider"]["arguments"].update(arguments)
    return experiment


def _wrong_key(spec: dict, tmp_path: Path) -> None:
    key = tmp_path / "wrong.key"
    key.write_text("not-the-key\n")
    key.chmod(0o600)  # a key file others could read is refused before it is tried
    spec["client"]["key_file"] = str(key)


def _closed_proxy(spec: dict, tmp_path: Path) -> None:
    spec["client"]["auth_url"] = "http://127.0.0.1:1/auth/v1.0"  # nothing listens on port 1


def _node_outside_the_ring(spec: dict, tmp_path: Path) -> None:
    spec["nodes"].append({"name": "node5", "address": "127.0.0.5", "zone": "zone2"})
    spec["services"].append({"name": "object-server.node5", "kind": "object-server",
                             "node": "node5", "pid_file": "/nonexistent.pid"})


CASES = [
    ("wrong-key", None, _wrong_key, "Swift auth at http://127.0.0.1:8280/auth/v1.0 refused "
                                    "user test:tester: 401"),
    ("proxy-unreachable", None, _closed_proxy,
     "cannot reach Swift auth at http://127.0.0.1:1/auth/v1.0"),
    ("unknown-server", {"server": "blob"}, None,
     "kill-object-server: unknown Swift server 'blob' (one of: object, container, account, "
     "proxy)"),
    ("unknown-node", {"node": "node9"}, None,
     "kill-object-server: cluster 'lab-swift' has no node 'node9'"),
    ("node-not-in-ring", {"node": "node5"}, _node_outside_the_ring,
     "kill-object-server: node node5 (127.0.0.5) holds no device of the object ring"),
]


@pytest.mark.parametrize(("name", "fault", "break_inventory", "message"), CASES,
                         ids=[c[0] for c in CASES])
def test_bad_swift_input_is_refused_and_changes_nothing(name, fault, break_inventory, message,
                                                        tmp_path, env, database_url,
                                                        swift_cluster):
    inventory = yaml.safe_load(default_inventory().read_text())
    if break_inventory:
        break_inventory(inventory["clusters"]["lab-swift"], tmp_path)
    (tmp_path / "inventory.yaml").write_text(yaml.safe_dump(inventory))
    experiment = tmp_path / f"{name}.json"
    experiment.write_text(json.dumps(_with_fault(**(fault or {}))))
    pids = _server_pids(swift_cluster)
    before = _run_count(database_url)

    done = subprocess.run(["faultline", "run", str(experiment), "--cluster", "lab-swift",
                           "--inventory", str(tmp_path / "inventory.yaml")],
                          env=env, capture_output=True, text=True, timeout=120)

    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert done.stderr.count("error:") == 1
    assert _run_count(database_url) == before
    assert _server_pids(swift_cluster) == pids
