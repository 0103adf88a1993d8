"""Issue 25's exploits of the allow-list, played as a hostile operator would: the JSON API
with an operator's token, and a real worker for a run row rewritten in the database. Each is
refused with one clear error and nothing is stored, queued or run.

No lab: the API's inventory has lab-ceph on addresses nothing answers, and everything here
is refused before anything would reach a cluster."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from catalogue import wait_for
from sqlalchemy import func, select, update
from sqlalchemy.engine import make_url

from service.results.report import format_report, report_dict
from service.runs.environment import process_environment
from service.store.models import Run, UploadedExperiment
from service.store.recording import RunRecorder

REPO = Path(__file__).resolve().parents[2]
KILL_OSD = json.loads((REPO / "experiments" / "ceph-kill-osd.json").read_text())
REFUSED = "the experiment may only run Faultline's own actions, probes and control: "
FOREIGN_CONTROL = {"name": "spy", "provider": {"type": "python", "module": "os"}}


def _uploads(sessions) -> int:
    with sessions() as session:
        return session.execute(select(func.count(UploadedExperiment.id))).scalar_one()


def _kill_osd(**arguments) -> dict:
    """The stock ceph-kill-osd with its kill-osd action's arguments changed."""
    document = copy.deepcopy(KILL_OSD)
    document["method"][0]["provider"]["arguments"].update(arguments)
    return document


def _refused_upload(client, sessions, document: dict) -> tuple[int, dict]:
    before = _uploads(sessions)
    response = client.post("/api/v1/experiments", json={"name": "hostile",
                                                         "experiment": document})
    assert _uploads(sessions) == before, "a refused upload was stored"
    return response.status_code, response.json


@pytest.fixture
def operator(api_as):
    return api_as("operator")


def _at_activity_level() -> dict:
    document = copy.deepcopy(KILL_OSD)
    document["method"][0]["controls"] = [FOREIGN_CONTROL]
    return document


def _at_hypothesis_level() -> dict:
    document = copy.deepcopy(KILL_OSD)
    document["steady-state-hypothesis"]["controls"] = [FOREIGN_CONTROL]
    return document


def _with_method(activity: dict) -> dict:
    document = copy.deepcopy(KILL_OSD)
    document["method"].append(activity)
    return document


def _with(key: str, value) -> dict:
    document = copy.deepcopy(KILL_OSD)
    document[key] = value
    return document


def _configured(name: str, entry) -> dict:
    document = copy.deepcopy(KILL_OSD)
    document["configuration"][name] = entry
    return document


HOSTILE = [
    pytest.param(_at_activity_level(),
                 "control 'spy' of activity 'kill-osd' is module os: the only control "
                 "allowed is service.control", id="control-at-activity-level"),
    pytest.param(_at_hypothesis_level(),
                 "control 'spy' at the hypothesis level is module os: the only control "
                 "allowed is service.control", id="control-at-hypothesis-level"),
    pytest.param(_with_method({"type": "action", "name": "init", "provider": {
        "type": "python", "module": "actions.__init__", "func": "discover"}}),
                 "activity 'init' calls actions.__init__.discover, which is not one of "
                 "Faultline's actions or probes", id="actions.__init__"),
    pytest.param(_with_method({"type": "action", "name": "sh", "provider": {
        "type": "process", "path": "touch", "arguments": "/tmp/faultline-hostile"}}),
                 "activity 'sh' runs a process provider: only python functions of "
                 "Faultline's actions and probes may run", id="process-provider"),
    pytest.param(_with_method({"type": "probe", "name": "scan", "provider": {
        "type": "http", "url": "http://127.0.0.1:22/"}}),
                 "activity 'scan' runs a http provider: only python functions of "
                 "Faultline's actions and probes may run", id="http-provider"),
    pytest.param(_with("secrets", {"db": {"url": {"type": "env", "key": "DATABASE_URL"}}}),
                 "a secrets block at the experiment.secrets: an experiment holds no secrets",
                 id="secrets-block"),
    pytest.param(_configured("faultline_cluster", "production"),
                 "configuration 'faultline_cluster' must be read from the environment "
                 '({"type": "env", "key": "FAULTLINE_CLUSTER"}), not a literal value',
                 id="literal-cluster"),
    pytest.param(_configured("faultline_inventory", "/tmp/other-inventory.yaml"),
                 "configuration 'faultline_inventory' must be read from the environment "
                 '({"type": "env", "key": "FAULTLINE_INVENTORY"}), not a literal value',
                 id="literal-inventory"),
    pytest.param(_configured("database", {"type": "env", "key": "DATABASE_URL"}),
                 "configuration 'database' is not one of faultline_cluster, "
                 "faultline_inventory", id="env-reading-DATABASE_URL"),
]


@pytest.mark.parametrize(("document", "problem"), HOSTILE)
def test_an_upload_outside_the_allow_list_is_400_and_nothing_is_stored(
        operator, sessions, document, problem):
    """Issue 25, "The upload allow-list has gaps" and the DATABASE_URL echo: each upload is
    refused with the allow-list's message."""
    assert _refused_upload(operator, sessions, document) == (400, {"error": REFUSED + problem})


def test_allow_unavailable_from_an_operator_is_403_naming_it_and_nothing_is_stored(
        operator, sessions):
    """Issue 25: `allow_unavailable` accepted from any operator."""
    status, body = _refused_upload(operator, sessions, _kill_osd(allow_unavailable=True))

    assert (status, body) == (403, {"error": (
        "allow_unavailable (activity 'kill-osd') overrides the guard that keeps data "
        "available: that needs the admin role; "
        f"{operator.user_name} is an operator")})


def test_allow_unavailable_from_an_admin_is_accepted_and_the_run_records_the_admin(
        api_as, sessions):
    """Issue 25 item 3: overriding the guard needs the admin role; the run records who."""
    admin, operator = api_as("admin"), api_as("operator")
    name = f"override-{admin.user_name}"
    stored = admin.post("/api/v1/experiments", json={
        "name": name, "experiment": _kill_osd(allow_unavailable=True)})
    assert stored.status_code == 201, stored.json

    # an operator may not queue the admin's override either
    refused = operator.post("/api/v1/runs", json={"experiment": name, "cluster": "lab-ceph"})
    queued = admin.post("/api/v1/runs", json={"experiment": name, "cluster": "lab-ceph"})

    assert refused.status_code == 403, refused.json
    assert "allow_unavailable (activity 'kill-osd')" in refused.json["error"]
    assert queued.status_code == 202, queued.json
    shown = admin.get(f"/api/v1/runs/{queued.json['run_id']}").json
    assert shown["guard_override_by"] == admin.user_name
    with sessions() as session:
        report = format_report(report_dict(session.get(Run, queued.json["run_id"])))
    assert (f"\n  guard: the blast-radius guard was overridden by {admin.user_name}\n"
            in report + "\n")
    page = admin.get(f"/runs/{queued.json['run_id']}").get_data(as_text=True)
    assert f"The blast-radius guard was overridden by {admin.user_name}." in page
    trail = admin.get(f"/api/v1/audit?actor={admin.user_name}&action=guard.override").json
    assert sorted(e["subject"] for e in trail["items"]) == sorted(
        [f"experiment {name}", f"run {queued.json['run_id']}"])


def test_a_run_of_an_experiment_the_allow_list_refuses_is_never_queued(operator, sessions):
    """Issue 25, "Nothing re-checks a stored experiment": an upload stored before the
    allow-list (written straight into its table) is refused when it is queued."""
    document = _with_method({"type": "action", "name": "sh", "provider": {
        "type": "process", "path": "true"}})
    with sessions.begin() as session:
        session.add(UploadedExperiment(name="stored-before", title="t", document=document,
                                       uploaded_by=operator.user_name))
    with sessions() as session:
        before = session.execute(select(func.count(Run.id))).scalar_one()

    response = operator.post("/api/v1/runs", json={"experiment": "stored-before",
                                                   "cluster": "lab-ceph"})

    assert response.status_code == 400
    assert response.json["error"].startswith(REFUSED + "activity 'sh' runs a process")
    with sessions() as session:
        assert session.execute(select(func.count(Run.id))).scalar_one() == before


def test_a_run_row_rewritten_to_run_a_process_ends_invalid_and_runs_nothing(
        operator, sessions, request, tmp_path):
    """Issue 25, "Nothing re-checks a stored experiment": the worker ran the document of the
    `runs` row as it was, so a row written by anything with database access ran `process`
    providers. Now the runner checks it first: the run ends invalid, the file is never made."""
    touched = tmp_path / "touched-by-the-run"
    queued = operator.post("/api/v1/runs", json={"experiment": "ceph-kill-osd",
                                                 "cluster": "lab-ceph"})
    assert queued.status_code == 202, queued.json
    run_id = queued.json["run_id"]
    document = copy.deepcopy(KILL_OSD)
    document["method"].insert(0, {"type": "action", "name": "touch", "provider": {
        "type": "process", "path": "touch", "arguments": str(touched)}})
    with sessions.begin() as session:  # someone with database access rewrites the row
        session.execute(update(Run).where(Run.id == run_id).values(experiment=document))

    request.getfixturevalue("worker")  # a real `faultline worker` takes the job

    wait_for("the run to end", lambda: _status(sessions, run_id) not in ("queued", "running"),
             120)
    with sessions() as session:
        run = session.get(Run, run_id)
        status, error, started = run.status, run.error, run.load_started_ts
    assert status == "invalid"
    assert error == ("refused, nothing was run: " + REFUSED + "activity 'touch' runs a process "
                     "provider: only python functions of Faultline's actions and probes may run")
    assert started is None, "the load started"
    assert not touched.exists(), "the process provider ran"


ECHO = """
import json, os
from sqlalchemy import text
from service.store import db
with db.session_factory()() as session:
    answer = session.execute(text("SELECT 42")).scalar_one()
print(json.dumps({"answer": answer, "environment": dict(os.environ)}))
"""


def test_a_run_process_reaches_the_database_with_no_password_in_its_environment(
        database_url, monkeypatch):
    """Issue 25: an experiment that reads an environment variable echoed the worker's
    DATABASE_URL, password included, into the journal; the worker also held the session key
    and the alert token. The process a worker starts for a run has none of them, and still
    reaches the database (libpq reads the password from the passfile)."""
    monkeypatch.setenv("FAULTLINE_SECRET_KEY", "the-session-key-of-this-test")
    monkeypatch.setenv("FAULTLINE_ALERT_TOKEN", "the-alert-token-of-this-test")
    password = make_url(database_url).password

    done = subprocess.run([sys.executable, "-c", ECHO], cwd=REPO, capture_output=True,
                          text=True, env=process_environment(database_url), timeout=120)

    assert done.returncode == 0, done.stderr
    echoed = json.loads(done.stdout)
    assert echoed["answer"] == 42
    assert password and password not in done.stdout
    assert "the-session-key-of-this-test" not in done.stdout
    assert "the-alert-token-of-this-test" not in done.stdout


def test_a_journal_that_echoes_the_database_url_is_stored_and_shown_scrubbed(
        database_url, sessions, made, api_as, monkeypatch):
    """Issue 25: every viewer could read the worker's DATABASE_URL, password included, in a
    run's journal; a journal is now stored scrubbed, and shown scrubbed."""
    monkeypatch.setenv("FAULTLINE_ALERT_TOKEN", "the-alert-token-of-this-test")
    password = make_url(database_url).password
    echoed = f"DATABASE_URL={make_url(database_url).render_as_string(hide_password=False)}"
    recorder = RunRecorder.create(sessions, title="echo", cluster="lab-ceph",
                                  cluster_kind="ceph", workload={})
    made.append(recorder.run_id)

    recorder.finish("failed", journal={"run": [{"output": {"stdout": echoed},
                                                "tolerance": "the-alert-token-of-this-test"}]},
                    error=f"probe said {echoed}")

    with sessions() as session:
        run = session.get(Run, recorder.run_id)
        stored = json.dumps(run.journal) + run.error
    shown = api_as("viewer").get(f"/api/v1/runs/{recorder.run_id}/journal").get_data(True)
    for text in (stored, shown):
        assert password not in text and "the-alert-token-of-this-test" not in text
        assert "faultline:***@127.0.0.1" in text


def _status(sessions, run_id: int) -> str:
    with sessions() as session:
        return session.get(Run, run_id).status
