"""The experiments API: the files under experiments/, uploads checked with chaoslib before
they are stored, a run of an upload, and deleting uploads only."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path

import pytest
from sqlalchemy import func, select

from service.store.models import Run, UploadedExperiment

REPO = Path(__file__).resolve().parents[2]
KILL_OSD = json.loads((REPO / "experiments" / "ceph-kill-osd.json").read_text())
FILES = sorted(p.stem for p in (REPO / "experiments").glob("*.json"))


def _uploads(sessions) -> int:
    with sessions() as session:
        return session.execute(select(func.count(UploadedExperiment.id))).scalar_one()


def _name() -> str:
    return f"upload-{uuid.uuid4().hex[:8]}"


def _changed(**changes) -> dict:
    document = copy.deepcopy(KILL_OSD)
    for key, value in changes.items():
        if value is None:
            document.pop(key)
        else:
            document[key] = value
    return document


@pytest.fixture
def operator(api_as):
    return api_as("operator")


def test_the_files_under_experiments_are_listed_by_name_without_the_suites(api_as):
    response = api_as("viewer").get("/api/v1/experiments")

    assert response.status_code == 200
    files = [e for e in response.json["items"] if e["source"] == "file"]
    assert [e["name"] for e in files] == FILES
    assert "kill-process" not in {e["name"] for e in response.json["items"]}
    kill_osd = next(e for e in files if e["name"] == "ceph-kill-osd")
    assert kill_osd["title"] == KILL_OSD["title"]
    assert kill_osd["path"] == str(REPO / "experiments" / "ceph-kill-osd.json")


def test_a_file_experiment_reads_with_its_document(api_as):
    response = api_as("viewer").get("/api/v1/experiments/ceph-kill-osd")

    assert response.status_code == 200
    assert (response.json["name"], response.json["source"]) == ("ceph-kill-osd", "file")
    assert response.json["experiment"]["method"] == KILL_OSD["method"]


def test_an_experiment_that_does_not_exist_is_404(api_as):
    response = api_as("viewer").get("/api/v1/experiments/no-such-thing")

    assert (response.status_code, response.json) == (
        404, {"error": "experiment 'no-such-thing' does not exist"})


def test_an_upload_is_stored_listed_and_read(operator, api_as):
    name = _name()
    document = _changed(title="Kill osd.2 (uploaded)")

    response = operator.post("/api/v1/experiments", json={"name": name, "experiment": document})

    assert response.status_code == 201, response.json
    assert response.headers["Location"] == f"/api/v1/experiments/{name}"
    assert (response.json["source"], response.json["uploaded_by"]) == ("upload",
                                                                       operator.user_name)
    viewer = api_as("viewer")
    listed = {e["name"]: e for e in viewer.get("/api/v1/experiments").json["items"]}
    assert listed[name]["title"] == "Kill osd.2 (uploaded)"
    assert viewer.get(f"/api/v1/experiments/{name}").json["experiment"] == document


def test_a_run_of_an_upload_keeps_the_document_and_no_path(operator, sessions):
    name = _name()
    document = _changed(title="an uploaded run")
    operator.post("/api/v1/experiments", json={"name": name, "experiment": document})

    response = operator.post("/api/v1/runs", json={"experiment": name, "cluster": "lab-ceph"})

    assert response.status_code == 202, response.json
    with sessions() as session:
        run = session.get(Run, response.json["run_id"])
    assert (run.experiment_path, run.title, run.status) == (None, "an uploaded run", "queued")
    assert run.experiment["method"] == document["method"]


NOT_FAULTLINE = {"type": "probe", "name": "shell", "provider": {
    "type": "process", "path": "sh", "arguments": "-c true"}}
OS_CALL = {"type": "probe", "name": "pid", "provider": {
    "type": "python", "module": "os", "func": "getpid"}}

BAD_UPLOADS = [
    ({"name": "bad name", "experiment": KILL_OSD},
     "'bad name' is not a valid experiment name: up to 100 letters, digits and . _ -, "
     "starting with a letter or digit"),
    ({"name": "x"}, "field 'experiment' is required"),
    ({"name": "x", "experiment": ["ceph-kill-osd"]},
     "field 'experiment' must be a JSON object, not [\"ceph-kill-osd\"]"),
    ({"name": "x", "experiment": {}},
     "not a valid experiment: an empty experiment is not an experiment"),
    ({"name": "x", "experiment": _changed(description=None)},
     "not a valid experiment: experiment requires a description"),
    ({"name": "x", "experiment": _changed(method=[{
        "type": "action", "name": "missing", "provider": {
            "type": "python", "module": "actions.nothing", "func": "f"}}])},
     "the experiment may only run Faultline's own actions, probes and control: activity "
     "'missing' calls actions.nothing.f, which is not one of Faultline's actions or probes"),
    ({"name": "x", "experiment": _changed(controls=None)},
     "the experiment declares no service.control control, so Faultline would record nothing"),
    ({"name": "x", "experiment": _changed(controls=[{
        "name": "faultline", "provider": {"type": "python", "module": "service.control",
                                          "arguments": {"workload": {"rate": 0}}}}])},
     "invalid workload: rate must be > 0, not 0"),
    ({"name": "x", "experiment": _changed(method=KILL_OSD["method"] + [OS_CALL])},
     "the experiment may only run Faultline's own actions, probes and control: activity "
     "'pid' calls os.getpid, which is not one of Faultline's actions or probes"),
    ({"name": "x", "experiment": _changed(rollbacks=[NOT_FAULTLINE])},
     "the experiment may only run Faultline's own actions, probes and control: activity "
     "'shell' runs a process provider: only python functions of Faultline's actions and "
     "probes may run"),
]


@pytest.mark.parametrize(("body", "message"), BAD_UPLOADS)
def test_an_upload_that_does_not_validate_is_400_and_nothing_is_stored(operator, sessions,
                                                                        body, message):
    before = _uploads(sessions)

    response = operator.post("/api/v1/experiments", json=body)

    assert (response.status_code, response.json) == (400, {"error": message})
    assert _uploads(sessions) == before


def test_an_upload_named_as_a_file_is_a_conflict(operator, sessions):
    before = _uploads(sessions)

    response = operator.post("/api/v1/experiments", json={"name": "ceph-kill-osd",
                                                           "experiment": KILL_OSD})

    assert response.status_code == 409
    assert response.json == {"error": "experiment 'ceph-kill-osd' exists already (a file under "
                                      f"{REPO / 'experiments'})"}
    assert _uploads(sessions) == before


def test_a_second_upload_of_a_name_is_a_conflict(operator):
    name = _name()
    operator.post("/api/v1/experiments", json={"name": name, "experiment": KILL_OSD})

    response = operator.post("/api/v1/experiments", json={"name": name, "experiment": KILL_OSD})

    assert (response.status_code, response.json) == (
        409, {"error": f"experiment '{name}' exists already (uploaded)"})


def test_an_upload_is_deleted_and_then_gone(operator):
    name = _name()
    operator.post("/api/v1/experiments", json={"name": name, "experiment": KILL_OSD})

    response = operator.delete(f"/api/v1/experiments/{name}")

    assert (response.status_code, response.data) == (204, b"")
    assert operator.get(f"/api/v1/experiments/{name}").status_code == 404
    assert operator.delete(f"/api/v1/experiments/{name}").json == {
        "error": f"experiment '{name}' does not exist"}


def test_a_file_experiment_cannot_be_deleted(operator):
    response = operator.delete("/api/v1/experiments/ceph-kill-osd")

    assert response.status_code == 409
    assert response.json == {"error": "experiment 'ceph-kill-osd' is a file under "
                                      f"{REPO / 'experiments'}; only uploaded experiments "
                                      "can be deleted"}
    assert (REPO / "experiments" / "ceph-kill-osd.json").is_file()
