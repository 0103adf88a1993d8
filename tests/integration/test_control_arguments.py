"""The control's arguments that need no cluster (`baseline`, `calibration`, `capacity`) are
checked completely wherever a run can come from: a bad one is one 400 with the run's own
message when a run is queued through the API and when the experiment is uploaded, and one
`error:` line from `faultline run`, and nothing is queued or stored. No lab: the clusters
of the API tests' inventory are on addresses nothing answers."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest
from factories import delete_made_by
from sqlalchemy import func, select, text
from web_login import SECRET

from service.store.models import Run, UploadedExperiment
from service.web.app import create_app

REPO = Path(__file__).resolve().parents[2]
KILL_OSD = json.loads((REPO / "experiments" / "ceph-kill-osd.json").read_text())
METHOD = [a["name"] for a in KILL_OSD["method"]]

CASES = [
    ("baseline-policy-unknown", {"baseline": {"on_invalid": "ignore"}},
     "invalid baseline.on_invalid 'ignore': expected 'stop' or 'inject-anyway'"),
    ("baseline-not-an-object", {"baseline": "stop"},
     'invalid baseline: expected {"on_invalid": "stop" or "inject-anyway"}, not "stop"'),
    ("calibration-stage-too-short", {"calibration": {"stage_s": 1}},
     "invalid calibration: stage length must be 3 to 600 s, not 1"),
    ("capacity-not-an-object", {"capacity": 5},
     "invalid capacity: expected an object with 'after' (the name of a method activity) and "
     "calibration settings, not 5"),
    ("capacity-after-unknown", {"capacity": {"after": "no-such-step"}},
     f"invalid capacity: after 'no-such-step' is not an activity of the method "
     f"({', '.join(METHOD)})"),
    ("capacity-settings-out-of-bounds", {"capacity": {"after": METHOD[0], "max_in_flight": 0}},
     "invalid calibration: max in flight must be 1 to 1,024, not 0"),
]
IDS = [case[0] for case in CASES]


def _with_control(**arguments) -> dict:
    experiment = copy.deepcopy(KILL_OSD)
    experiment["controls"][0]["provider"]["arguments"].update(arguments)
    return experiment


def _counts(sessions) -> tuple[int, int, int]:
    """(runs, procrastinate jobs, uploaded experiments): what a refusal leaves as it was."""
    with sessions() as session:
        return (session.execute(select(func.count(Run.id))).scalar_one(),
                session.execute(text("SELECT count(*) FROM procrastinate_jobs")).scalar_one(),
                session.execute(select(func.count(UploadedExperiment.id))).scalar_one())


@pytest.fixture
def bad_files(tmp_path_factory) -> Path:
    """An experiments directory holding each case's experiment file, named as the case."""
    directory = tmp_path_factory.mktemp("experiments")
    for name, arguments, _ in CASES:
        (directory / f"{name}.json").write_text(json.dumps(_with_control(**arguments)))
    return directory


@pytest.fixture
def operator(database_url, api_inventory, bad_files, api_token, sessions):
    """An operator's API client of the real app on the API tests' inventory and that
    directory; what its user made is deleted afterwards."""
    app = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET,
                      "INVENTORY": str(api_inventory), "EXPERIMENTS_DIR": str(bad_files)})
    client = app.test_client()
    name, token = api_token("operator")
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    yield client
    delete_made_by(sessions, [name])


@pytest.mark.parametrize(("name", "arguments", "message"), CASES, ids=IDS)
def test_a_bad_control_argument_is_refused_at_enqueue_and_queues_nothing(
        operator, sessions, name, arguments, message):
    before = _counts(sessions)

    response = operator.post("/api/v1/runs", json={"experiment": name, "cluster": "lab-ceph"})

    assert response.status_code == 400, response.json
    assert response.json["error"] == message
    assert _counts(sessions) == before


@pytest.mark.parametrize(("name", "arguments", "message"), CASES, ids=IDS)
def test_a_bad_control_argument_is_refused_at_upload_and_stores_nothing(
        operator, sessions, name, arguments, message):
    before = _counts(sessions)

    response = operator.post("/api/v1/experiments",
                             json={"name": f"upload-{name}", "experiment": _with_control(
                                 **arguments)})

    assert response.status_code == 400, response.json
    assert response.json["error"] == message
    assert operator.get(f"/api/v1/experiments/upload-{name}").status_code == 404
    assert _counts(sessions) == before


@pytest.mark.parametrize(("name", "arguments", "message"), CASES, ids=IDS)
def test_a_bad_control_argument_is_one_error_line_from_faultline_run(
        bad_files, api_inventory, env, sessions, tmp_path, name, arguments, message):
    before = _counts(sessions)

    done = subprocess.run(["faultline", "run", str(bad_files / f"{name}.json"),
                           "--cluster", "lab-ceph", "--inventory", str(api_inventory)],
                          env={**env, "FAULTLINE_HOME": str(tmp_path)}, capture_output=True,
                          text=True, timeout=120)

    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"error: {message}"
    assert done.stderr.count("error:") == 1
    assert _counts(sessions) == before
