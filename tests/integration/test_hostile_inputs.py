"""Issue 25's exploits of "Unbounded input" and "Nothing protects a production cluster",
played as an operator would: through the JSON API with an operator's token, the dashboard,
`faultline run` and the stock `chaos run`. Each is refused with one clear error (a 4xx JSON
error, or an `error:` line and exit 2) and leaves nothing behind: no run row, no job, no
schedule, no ledger entry. No lab: the clusters here are on addresses nothing answers, so
anything that tried to reach one would fail otherwise, and slowly. The monitoring tests
start the embedded Prometheus and Alertmanager, on the machine's ports: run them under the
lab lock, as the other monitoring tests are."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from catalogue import ceph_osds_up
from factories import delete_made_by, make_run
from sqlalchemy import delete, func, select, text
from web_login import SECRET, csrf_token, log_in

from clusters.paths import default_inventory
from clusters.safety import fault_ledger
from service.experiments import abort_conditions
from service.monitoring import embedded
from service.results.comparison import MAX_COMPARED_RUNS
from service.runs import silences
from service.store.models import Run, Schedule
from service.store.recording import RunRecorder
from service.web.app import MAX_BODY_BYTES, create_app

REPO = Path(__file__).resolve().parents[2]
KILL_OSD = REPO / "experiments" / "ceph-kill-osd.json"
PROTECTED = ("cluster 'prod-ceph' is protected (its inventory does not say chaos: allowed): "
             "the fault kill-osd (actions.ceph.kill_osd) refused, nothing was touched (set "
             "chaos: allowed on it in the inventory to let it take faults)")


def _counts(sessions) -> tuple[int, int, int]:
    """(runs, procrastinate jobs, schedules): what a refused request must leave as it was."""
    with sessions() as session:
        return (session.execute(select(func.count(Run.id))).scalar_one(),
                session.execute(text("SELECT count(*) FROM procrastinate_jobs")).scalar_one(),
                session.execute(select(func.count(Schedule.id))).scalar_one())


@pytest.fixture
def operator(api_as):
    return api_as("operator")


@pytest.fixture
def protected_inventory(api_inventory, tmp_path) -> Path:
    """The API tests' inventory plus prod-ceph: lab-ceph's twin marked chaos: protected."""
    raw = yaml.safe_load(api_inventory.read_text())
    raw["clusters"]["prod-ceph"] = {**copy.deepcopy(raw["clusters"]["lab-ceph"]),
                                    "chaos": "protected"}
    path = tmp_path / "inventory.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.fixture
def protected_app(database_url, protected_inventory, api_token, sessions):
    """The real app on that inventory; `client(role)` gives a client holding a new user's
    token. The runs and schedules these users made are deleted afterwards."""
    app = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET,
                      "INVENTORY": str(protected_inventory)})
    names = []

    def client(role: str):
        test_client = app.test_client()
        name, token = api_token(role)
        test_client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        names.append(name)
        return test_client

    app.client = client
    yield app
    delete_made_by(sessions, names)


# --- unbounded input -------------------------------------------------------------------


@pytest.mark.parametrize("object_size", [100_000_000_000, 1e11])
def test_an_object_size_past_its_maximum_queues_nothing(operator, sessions, object_size):
    """Exploit: object_size has no maximum; 1e11 makes the run process allocate 200 GB, and
    any operator can override a stock experiment's workload through POST /runs."""
    before = _counts(sessions)
    response = operator.post("/api/v1/runs", json={
        "experiment": "ceph-kill-osd", "cluster": "lab-ceph",
        "workload": {"object_size": object_size}})

    assert response.status_code == 400, response.json
    assert response.json["error"].startswith("invalid workload: object_size must be ")
    assert _counts(sessions) == before


def test_objects_whose_buffers_exceed_the_memory_queue_nothing(operator, sessions):
    """Exploit: an object size within its maximum whose buffers (x in flight) would not
    fit in this machine's memory."""
    before = _counts(sessions)
    response = operator.post("/api/v1/runs", json={
        "experiment": "ceph-kill-osd", "cluster": "lab-ceph",
        "workload": {"object_size": 5 * 1024 ** 3, "max_in_flight": 4096}})

    assert response.status_code == 400, response.json
    assert "of buffers, more than half of this machine's memory" in response.json["error"]
    assert _counts(sessions) == before


def test_a_huge_calibration_stage_is_refused_at_upload(operator, sessions):
    """Exploit: a calibration's stage_s has no maximum."""
    document = json.loads(KILL_OSD.read_text())
    document["controls"][0]["provider"]["arguments"]["calibration"] = {"stage_s": 10 ** 9}

    response = operator.post("/api/v1/experiments",
                             json={"name": "huge-stage", "experiment": document})

    assert response.status_code == 400, response.json
    assert response.json["error"] == ("invalid calibration: stage length must be 3 to 600 s, "
                                      "not 1000000000")
    assert operator.get("/api/v1/experiments/huge-stage").status_code == 404


def test_a_comparison_of_too_many_runs_is_refused(operator, viewer_client):
    """Exploit: /compare takes any number of runs."""
    runs = ",".join(str(i) for i in range(1, MAX_COMPARED_RUNS + 2))

    response = operator.get(f"/api/v1/comparisons?runs={runs}")
    page = viewer_client.get(f"/compare?runs={runs}")

    assert response.status_code == 400
    assert response.json == {"error": f"a comparison takes at most {MAX_COMPARED_RUNS} runs"}
    assert page.status_code == 400
    assert f"a comparison takes at most {MAX_COMPARED_RUNS} runs" in page.get_data(as_text=True)


def test_an_over_large_body_is_a_413_json_error(operator, sessions):
    """Exploit: requests have no size limit."""
    before = _counts(sessions)
    body = json.dumps({"name": "big", "experiment": {"title": "x" * MAX_BODY_BYTES}})

    response = operator.post("/api/v1/experiments", data=body,
                             content_type="application/json")

    assert response.status_code == 413
    assert response.is_json and response.json["error"]
    assert _counts(sessions) == before


def test_json_nested_ten_thousand_deep_is_a_400_not_a_500(operator, sessions):
    """Exploit: deeply nested JSON gives a 500."""
    before = _counts(sessions)
    body = '{"experiment": "ceph-kill-osd", "cluster": "lab-ceph", "workload": ' \
        + "[" * 10_000 + "]" * 10_000 + "}"

    response = operator.post("/api/v1/runs", data=body, content_type="application/json")

    assert response.status_code == 400
    assert response.json == {"error": "the body is nested deeper than 64 levels"}
    assert _counts(sessions) == before


def test_json_nested_past_the_limit_but_within_the_parser_is_a_400(operator):
    """The same exploit at a depth Python's parser takes (100): refused by the depth bound."""
    body = '{"name": "deep", "experiment": ' + "[" * 100 + "]" * 100 + "}"

    response = operator.post("/api/v1/experiments", data=body,
                             content_type="application/json")

    assert response.status_code == 400
    assert response.json == {"error": "the body is nested deeper than 64 levels"}


# --- protected clusters ----------------------------------------------------------------


def test_a_run_queued_on_a_protected_cluster_is_a_403_and_no_run_row(protected_app, sessions):
    """Exploit: every cluster in the inventory takes every fault."""
    operator = protected_app.client("operator")
    before = _counts(sessions)

    response = operator.post("/api/v1/runs", json={"experiment": "ceph-kill-osd",
                                                   "cluster": "prod-ceph"})

    assert response.status_code == 403, response.json
    assert response.json == {"error": PROTECTED}
    assert _counts(sessions) == before


def test_a_schedule_on_a_protected_cluster_is_a_403_and_not_made(protected_app, sessions):
    """Exploit: every cluster in the inventory takes every fault (nightly, on a schedule)."""
    operator = protected_app.client("operator")
    before = _counts(sessions)

    response = operator.post("/api/v1/schedules", json={
        "name": "nightly prod", "cron": "0 2 * * *", "experiment": "ceph-kill-osd",
        "clusters": ["prod-ceph"]})

    assert response.status_code == 403, response.json
    assert response.json == {"error": PROTECTED}
    assert _counts(sessions) == before


def test_the_cluster_views_say_which_cluster_is_protected(protected_app):
    """The API and the dashboard show a cluster's chaos setting."""
    viewer = protected_app.client("viewer")

    listed = {c["name"]: c["chaos"] for c in viewer.get("/api/v1/clusters").json["items"]}

    assert listed == {"lab-ceph": "allowed", "lab-swift": "allowed", "prod-ceph": "protected"}


def test_the_dashboard_refuses_a_run_on_a_protected_cluster_with_a_403(
        protected_app, make_user, sessions):
    """Exploit: every cluster takes every fault, from the dashboard's trigger form."""
    client = protected_app.test_client()
    assert log_in(client, *make_user("operator")).status_code == 302
    form = client.get("/experiments/ceph-kill-osd/run").get_data(as_text=True)
    assert "prod-ceph" in form
    before = _counts(sessions)

    response = client.post("/experiments/ceph-kill-osd/run", data={
        "csrf_token": csrf_token(form), "cluster": "prod-ceph", "confirm": "yes",
        "containers": 2, "objects_per_container": 100, "object_size": 4096, "rate": 20,
        "ramp_s": 5, "baseline_s": 20, "mix_read": 80, "mix_write": 15, "mix_delete": 5})

    assert response.status_code == 403
    assert "is protected (its inventory does not say chaos: allowed)" in response.get_data(
        as_text=True)
    assert _counts(sessions) == before
    # the clusters page and the cluster's own page say so
    listed = client.get("/clusters").get_data(as_text=True)
    assert listed.count('<td class="chaos">protected</td>') == 1
    assert listed.count('<td class="chaos">allowed</td>') == 2
    page = " ".join(client.get("/clusters/prod-ceph").get_data(as_text=True).split())
    assert "Chaos: <strong>protected</strong>: this cluster takes no fault" in page


def test_faultline_run_on_a_protected_cluster_is_one_error_line_and_exit_2(
        protected_inventory, env, sessions, tmp_path):
    """Exploit: every cluster takes every fault, from the command line."""
    before = _counts(sessions)

    done = subprocess.run(
        ["faultline", "run", str(KILL_OSD), "--cluster", "prod-ceph",
         "--inventory", str(protected_inventory)],
        env={**env, "FAULTLINE_HOME": str(tmp_path)}, capture_output=True, text=True,
        timeout=120)

    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"error: {PROTECTED}"
    assert _counts(sessions) == before
    assert fault_ledger.FileLedger(tmp_path / "faults.json").outstanding() == []


def test_chaos_run_on_a_protected_cluster_is_one_error_line_and_exit_2(
        protected_inventory, env, sessions, tmp_path):
    """Exploit: every cluster takes every fault, under the stock `chaos run` (the control's
    preflight refuses it; no rollback runs either)."""
    before = _counts(sessions)

    done = subprocess.run(
        ["chaos", "--no-version-check", "run", "--journal-path", str(tmp_path / "j.json"),
         str(KILL_OSD)],
        env={**env, "FAULTLINE_HOME": str(tmp_path), "FAULTLINE_CLUSTER": "prod-ceph",
             "FAULTLINE_INVENTORY": str(protected_inventory)},
        capture_output=True, text=True, timeout=120, cwd=tmp_path)

    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"error: {PROTECTED}"
    assert not (tmp_path / "j.json").exists()  # it ended at the control: no method, no rollback
    assert _counts(sessions) == before
    assert fault_ledger.FileLedger(tmp_path / "faults.json").outstanding() == []


# --- monitoring ------------------------------------------------------------------------


@pytest.fixture
def alertmanager(monitored_service_url, api_inventory, env, tmp_path):
    """The embedded Prometheus and Alertmanager (`faultline monitoring up`), their state in
    the test's directory; their ports are the machine's: run under the lab lock."""
    env = {**env, "FAULTLINE_HOME": str(tmp_path / "home"),
           "FAULTLINE_ALERT_TOKEN": os.environ["FAULTLINE_ALERT_TOKEN"],
           "FAULTLINE_INVENTORY": str(api_inventory)}
    up = subprocess.run(["faultline", "monitoring", "up", "--service-url", monitored_service_url],
                        env=env, cwd=REPO,
                        capture_output=True, text=True, timeout=180)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        yield embedded.alertmanager_url(), env
    finally:
        subprocess.run(["faultline", "monitoring", "down"], env=env, cwd=REPO,
                       capture_output=True, text=True, timeout=60)


def _silence(url: str, *matchers: dict) -> str:
    now = datetime.now(UTC)
    body = json.dumps({"matchers": [{"isRegex": False, "isEqual": True, **m} for m in matchers],
                       "startsAt": now.isoformat(), "endsAt": (now + timedelta(hours=1))
                       .isoformat(), "createdBy": "mallory", "comment": "shh"}).encode()
    request = urllib.request.Request(f"{url}/api/v2/silences", data=body, method="POST",
                                      headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
        return json.loads(response.read())["silenceID"]


def test_a_run_whose_abort_alerts_are_silenced_says_so_in_its_report(
        alertmanager, sessions, invoke, viewer_client):
    """Exploit: anyone who can reach Alertmanager can silence the alerts that abort runs;
    the run then says so (the real Alertmanager's silences, asked as a run starts)."""
    url, _ = alertmanager
    silenced = _silence(url, {"name": "alertname", "value": "CephClusterDegraded"},
                        {"name": "cluster", "value": "lab-.*", "isRegex": True})
    _silence(url, {"name": "cluster", "value": "lab-swift"})  # another cluster's: not said
    conditions = abort_conditions.parse([{"alertname": "CephClusterDegraded", "grace_s": 60},
                                         {"alertname": "FaultlineLostObjects"}])
    with sessions() as session:
        run_id = make_run(session).id
    try:
        silences.record(RunRecorder(sessions, run_id), conditions, "lab-ceph", url=url)

        said = (f"abort alert CephClusterDegraded{{}} after a grace of 60 s is silenced in "
                f"Alertmanager (silence {silenced}, alertname=\"CephClusterDegraded\", "
                f"cluster=~\"lab-.*\", by mallory, until ")
        report = invoke("report", str(run_id))
        assert report.exit_code == 0, report.output
        lines = [line.strip() for line in report.output.splitlines() if "silenced:" in line]
        assert len(lines) == 1 and lines[0].startswith(f"silenced: {said}")
        page = viewer_client.get(f"/runs/{run_id}").get_data(as_text=True)
        assert f'<li class="silenced">{said}' in page.replace("&#34;", '"')
    finally:
        with sessions.begin() as session:
            session.execute(delete(Run).where(Run.id == run_id))


def test_the_embedded_prometheus_has_no_lifecycle_api(alertmanager):
    """Exploit: the embedded Prometheus ran with --web.enable-lifecycle, so any local
    account could shut it down (POST /-/quit). A second `monitoring up` reloads both
    daemons by SIGHUP to their PIDs instead of /-/reload."""
    _, env = alertmanager
    before = subprocess.run(["faultline", "monitoring", "status"], env=env, cwd=REPO,
                            capture_output=True, text=True, timeout=60).stdout
    again = subprocess.run(["faultline", "monitoring", "up", "--service-url",
                            "http://127.0.0.1:1"],
                           env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    after = subprocess.run(["faultline", "monitoring", "status"], env=env, cwd=REPO,
                           capture_output=True, text=True, timeout=60).stdout
    assert after == before and "not running" not in after  # the same PIDs, reloaded
    request = urllib.request.Request(f"{embedded.prometheus_url()}/-/quit", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)  # noqa: S310
    assert refused.value.code == 403
    with urllib.request.urlopen(f"{embedded.prometheus_url()}/-/ready",  # noqa: S310
                                timeout=10) as ready:
        assert ready.status == 200  # still running


@pytest.mark.lab
def test_faultline_run_on_the_lab_marked_protected_touches_nothing(
        ceph_cluster, env, sessions, tmp_path):
    """Exploit: every cluster takes every fault: the real lab's Ceph, named by an inventory
    that marks it protected, keeps every OSD up and gets no run."""
    raw = yaml.safe_load(Path(default_inventory()).read_text())
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump({"clusters": {
        "lab-ceph": {**raw["clusters"]["lab-ceph"], "chaos": "protected"}}}))
    osds = len([d for d in ceph_cluster.disks if d.osd is not None])
    assert ceph_osds_up(ceph_cluster) == osds
    before = _counts(sessions)

    done = subprocess.run(["faultline", "run", str(KILL_OSD), "--cluster", "lab-ceph",
                           "--inventory", str(inventory)],
                          env={**env, "FAULTLINE_HOME": str(tmp_path)}, capture_output=True,
                          text=True, timeout=300)

    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "error: cluster 'lab-ceph' is protected (its inventory does not say chaos: allowed): "
        "the fault kill-osd (actions.ceph.kill_osd) refused, nothing was touched (set chaos: "
        "allowed on it in the inventory to let it take faults)")
    assert ceph_osds_up(ceph_cluster) == osds
    assert _counts(sessions) == before
    assert fault_ledger.FileLedger(tmp_path / "faults.json").outstanding() == []


def test_a_suite_with_a_fault_on_a_protected_cluster_runs_nothing(
        protected_inventory, invoke, sessions, tmp_path):
    """Exploit: every cluster takes every fault, one run of a suite among others."""
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"title": "both", "runs": [
        {"name": "lab", "experiment": str(KILL_OSD), "cluster": "lab-ceph"},
        {"name": "prod", "experiment": str(KILL_OSD), "cluster": "prod-ceph"}]}))
    before = _counts(sessions)

    result = invoke("suite", str(suite), "--inventory", str(protected_inventory))

    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == f"error: {PROTECTED}"
    assert _counts(sessions) == before
