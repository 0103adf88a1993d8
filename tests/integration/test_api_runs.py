"""The runs API on a real PostgreSQL server: queue (a procrastinate job with the cluster's
lock), cancel, list with filters and paging, read a run, and bad input that queues nothing.
No worker runs here: the test database has none, so a queued run stays queued."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from factories import figures, make_run
from sqlalchemy import delete, func, select, text, update

from service.jobs import names as queue
from service.store.models import Run
from service.worker.app import make_worker_app

REPO = Path(__file__).resolve().parents[2]
KILL_OSD = str(REPO / "experiments" / "ceph-kill-osd.json")


def _counts(sessions) -> tuple[int, int]:
    """(runs, procrastinate jobs): what a refused request must leave as it was."""
    with sessions() as session:
        return (session.execute(select(func.count(Run.id))).scalar_one(),
                session.execute(text("SELECT count(*) FROM procrastinate_jobs")).scalar_one())


def _job(sessions, job_id: int) -> dict:
    with sessions() as session:
        row = session.execute(text("SELECT task_name, lock, status, args, queue_name "
                                   "FROM procrastinate_jobs WHERE id = :id"),
                              {"id": job_id}).mappings().one()
        return dict(row)


def _run(sessions, run_id: int) -> Run:
    with sessions() as session:
        return session.get(Run, run_id)


@pytest.fixture
def operator(api_as):
    return api_as("operator")


@pytest.fixture
def viewer(api_as):
    return api_as("viewer")


@pytest.fixture
def stored(sessions):
    """Make finished runs on a cluster name of this test only; deleted afterwards."""
    cluster = f"api-{uuid.uuid4().hex[:8]}"

    def stored(**fields) -> int:
        with sessions() as session:
            return make_run(session, cluster=fields.pop("cluster", cluster), **fields).id

    stored.cluster = cluster
    yield stored
    with sessions.begin() as session:
        session.execute(delete(Run).where(Run.cluster.like(f"{cluster}%")))


def test_posting_a_run_queues_it_with_a_job_that_holds_the_cluster_lock(operator, sessions):
    response = operator.post("/api/v1/runs", json={"experiment": "ceph-kill-osd",
                                                   "cluster": "lab-ceph"})

    assert response.status_code == 202, response.json
    run_id = response.json["run_id"]
    assert response.json["status"] == "queued"
    assert response.json["url"] == response.headers["Location"] == f"/api/v1/runs/{run_id}"
    run = _run(sessions, run_id)
    assert (run.status, run.cluster, run.requested_by) == ("queued", "lab-ceph",
                                                           operator.user_name)
    assert run.experiment_path == KILL_OSD
    job = _job(sessions, run.job_id)
    assert job == {"task_name": "faultline:run_experiment", "lock": "cluster:lab-ceph",
                   "status": "todo", "args": {"run_id": run_id}, "queue_name": "runs"}


def test_every_queue_app_defers_runs_to_the_queue_the_workers_read(database_url):
    # each Flask app (and test) makes its own procrastinate app from the same tasks
    apps = [make_worker_app(database_url) for _ in range(2)]

    assert [a.tasks[queue.RUN_TASK].queue for a in apps] == ["runs", "runs"]
    assert [a.tasks[queue.HEAL_TASK].queue for a in apps] == ["runs", "runs"]


def test_a_queued_run_is_cancelled_through_the_api_and_never_starts(operator, sessions):
    run_id = operator.post("/api/v1/runs", json={"experiment": "ceph-kill-osd",
                                                 "cluster": "lab-ceph"}).json["run_id"]

    response = operator.post(f"/api/v1/runs/{run_id}/cancel")

    assert response.status_code == 202
    assert response.json == {"run_id": run_id, "status": "cancelled"}
    run = _run(sessions, run_id)
    assert run.status == "cancelled"
    assert _job(sessions, run.job_id)["status"] == "cancelled"
    assert operator.get(f"/api/v1/runs/{run_id}").json["status"] == "cancelled"


def test_cancelling_a_run_that_ended_is_a_conflict(operator, stored):
    run_id = stored(status="completed")

    response = operator.post(f"/api/v1/runs/{run_id}/cancel")

    assert response.status_code == 409
    assert response.json == {"error": f"run {run_id} is completed: there is nothing to cancel"}


def test_cancelling_a_run_that_does_not_exist_is_404(operator):
    response = operator.post("/api/v1/runs/987654321/cancel")

    assert response.status_code == 404
    assert response.json == {"error": "run 987654321 does not exist"}


def test_a_second_run_on_a_busy_cluster_is_queued_behind_the_first(operator, sessions):
    body = {"experiment": "ceph-kill-osd", "cluster": "lab-ceph"}
    first = operator.post("/api/v1/runs", json=body).json["run_id"]

    second = operator.post("/api/v1/runs", json=body)

    assert second.status_code == 202
    assert second.json["status"] == "queued"
    assert first in second.json["waiting_for"]
    assert _job(sessions, _run(sessions, second.json["run_id"]).job_id)["lock"] == \
        "cluster:lab-ceph"


def test_workload_overrides_apply_to_the_queued_run(operator, sessions):
    response = operator.post("/api/v1/runs", json={
        "experiment": "ceph-kill-osd", "cluster": "lab-ceph",
        "workload": {"rate": 20, "baseline_s": 10}})

    run = _run(sessions, response.json["run_id"])
    assert (run.workload["rate"], run.workload["baseline_s"]) == (20, 10)
    assert run.workload["object_size"] == 4096  # the file's own value, not overridden


BAD_RUNS = [
    ({}, "field 'experiment' is required"),
    ({"experiment": "ceph-kill-osd"}, "field 'cluster' is required"),
    ({"experiment": "ceph-kill-osd", "cluster": "lab-ceph", "clusters": ["x"]},
     "unknown field 'clusters' (known: cluster, experiment, workload)"),
    ({"experiment": 5, "cluster": "lab-ceph"}, "field 'experiment' must be a string, not 5"),
    ({"experiment": " ", "cluster": "lab-ceph"}, "field 'experiment' must not be empty"),
    ({"experiment": "no-such-experiment", "cluster": "lab-ceph"},
     "experiment 'no-such-experiment' does not exist"),
    ({"experiment": "ceph-kill-osd", "cluster": "atlantis"},
     "unknown cluster 'atlantis' in {inventory} (known: lab-ceph, lab-swift)"),
    ({"experiment": "ceph-kill-osd", "cluster": "lab-ceph", "workload": {"rate": -1}},
     "invalid workload: rate must be > 0, not -1"),
    ({"experiment": "ceph-kill-osd", "cluster": "lab-ceph", "workload": {"bogus": 1}},
     "invalid workload: unknown key 'bogus'"),
    ({"experiment": "ceph-kill-osd", "cluster": "lab-ceph", "workload": "fast"},
     "field 'workload' must be a JSON object, not \"fast\""),
    ({"experiment": "ceph-kill-osd", "cluster": "lab-ceph", "workload": "f" * 80},
     "field 'workload' must be a JSON object, not \"" + "f" * 56 + "..."),
    ({"experiment": "swift-kill-object-server", "cluster": "lab-ceph"},
     # one problem of the fault, the method's restore and the rollback's, said once
     "kill-object-server, start-object-server: lab-ceph is a ceph cluster, not Swift"),
]


@pytest.mark.parametrize(("body", "message"), BAD_RUNS)
def test_bad_run_input_is_400_with_its_reason_and_queues_nothing(operator, sessions,
                                                                 api_inventory, body, message):
    before = _counts(sessions)

    response = operator.post("/api/v1/runs", json=body)

    assert response.status_code == 400
    assert response.json == {"error": message.format(inventory=api_inventory)}
    assert _counts(sessions) == before


@pytest.mark.parametrize(("data", "content_type", "status", "message"), [
    ("experiment=ceph-kill-osd", "application/x-www-form-urlencoded", 415,
     "send a JSON object with 'Content-Type: application/json'"),
    ("{not json", "application/json", 400,
     "the body is not valid JSON: Expecting property name enclosed in double quotes: "
     "line 1 column 2 (char 1)"),
    ('["ceph-kill-osd"]', "application/json", 400, "the body must be a JSON object"),
])
def test_a_body_that_is_not_a_json_object_is_refused_and_queues_nothing(
        operator, sessions, data, content_type, status, message):
    before = _counts(sessions)

    response = operator.post("/api/v1/runs", data=data, content_type=content_type)

    assert (response.status_code, response.json) == (status, {"error": message})
    assert _counts(sessions) == before


def test_runs_are_listed_newest_first_with_the_total(viewer, stored):
    ids = [stored() for _ in range(3)]

    response = viewer.get("/api/v1/runs", query_string={"cluster": stored.cluster})

    assert response.status_code == 200
    assert [r["run_id"] for r in response.json["items"]] == ids[::-1]
    assert (response.json["page"], response.json["per_page"], response.json["total"]) == \
        (1, 50, 3)


def test_pages_split_the_list_at_per_page_and_past_the_last_is_empty(viewer, stored):
    ids = [stored() for _ in range(5)][::-1]

    def page(n: int) -> dict:
        return viewer.get("/api/v1/runs", query_string={
            "cluster": stored.cluster, "page": n, "per_page": 2}).json

    assert [[r["run_id"] for r in page(n)["items"]] for n in (1, 2, 3, 4)] == \
        [ids[0:2], ids[2:4], ids[4:5], []]
    assert {page(n)["total"] for n in (1, 3, 4)} == {5}


def test_per_page_above_200_is_capped_to_200(viewer, stored):
    stored()

    response = viewer.get("/api/v1/runs", query_string={"cluster": stored.cluster,
                                                        "per_page": 1000})

    assert (response.status_code, response.json["per_page"]) == (200, 200)


@pytest.mark.parametrize(("query", "message"), [
    ({"page": 0}, "page must be from 1 to 2147483647, not '0'"),
    ({"page": "two"}, "page must be a whole number, not 'two'"),
    ({"per_page": 0}, "per_page must be from 1 to 2147483647, not '0'"),
    ({"per_page": "-5"}, "per_page must be from 1 to 2147483647, not '-5'"),
    ({"status": "exploded"}, "unknown status 'exploded' (known: queued, cancelled, running, "
                             "completed, deviated, interrupted, invalid, failed)"),
    ({"kind": "minio"}, "unknown kind 'minio' (known: ceph, swift)"),
    ({"schedule_id": "nightly"}, "schedule_id must be a whole number, not 'nightly'"),
    ({"clustre": "lab-ceph"}, "unknown query parameter 'clustre' (known: cluster, experiment, "
                              "kind, page, per_page, schedule_id, status)"),
])
def test_invalid_filters_and_paging_are_400(viewer, query, message):
    response = viewer.get("/api/v1/runs", query_string=query)

    assert (response.status_code, response.json) == (400, {"error": message})


def test_runs_are_filtered_by_status_kind_experiment_and_schedule(viewer, stored, sessions):
    failed = stored(status="failed", title="Swift loses a disk", kind="swift",
                    cluster=stored.cluster + "-s")
    completed = stored(status="completed", title="Ceph kills an OSD")
    with sessions.begin() as session:
        session.execute(update(Run).where(Run.id == completed).values(
            experiment_path="/x/experiments/ceph-kill-osd.json"))

    def ids(**query) -> list[int]:
        found = viewer.get("/api/v1/runs", query_string=query).json["items"]
        return [r["run_id"] for r in found if r["cluster"].startswith(stored.cluster)]

    assert ids(status="failed") == [failed]
    assert ids(kind="ceph", cluster=stored.cluster) == [completed]
    assert ids(kind="swift") == [failed]
    assert ids(experiment="CEPH-KILL-osd") == [completed]  # the path, any case
    assert ids(experiment="loses a disk") == [failed]  # the title
    assert ids(experiment="100%_") == []  # LIKE's wildcards are plain characters
    assert ids(experiment=str(failed)) == [failed]  # a number is a run id too
    # a digit Python knows but int() does not, and an id past the column's range: no run
    assert ids(experiment="\u00b2") == [] and ids(experiment="99999999999") == []
    assert ids(schedule_id=987654321) == []


def test_a_run_reads_as_its_report_with_queue_fields_and_verdict(viewer, stored):
    run_id = stored(figures=figures(baseline_ops=100.0, lost_objects=0))

    response = viewer.get(f"/api/v1/runs/{run_id}")

    assert response.status_code == 200
    run = response.json
    assert (run["run_id"], run["status"], run["baseline_ops"], run["lost_objects"]) == \
        (run_id, "completed", 100.0, 0)
    assert {"queued_at", "job_id", "requested_by", "schedule_id", "verdict",
            "experiment_path", "reasons", "fault_note"} <= set(run)


def test_a_run_that_does_not_exist_is_404(viewer):
    for path in ("", "/figures", "/samples", "/events", "/journal"):
        response = viewer.get(f"/api/v1/runs/987654321{path}")
        assert (response.status_code, response.json) == (
            404, {"error": "run 987654321 does not exist"}), path


def test_figures_say_why_a_null_figure_is_null(viewer, stored):
    measured = stored(figures=figures(baseline_ops=100.0))
    unmeasured = stored(status="queued", fault=None, seconds=0)

    done = viewer.get(f"/api/v1/runs/{measured}/figures").json
    waiting = viewer.get(f"/api/v1/runs/{unmeasured}/figures").json

    assert done["figures"]["baseline_ops"] == 100.0
    assert done["reasons"]["time_to_detect_s"] == "time_to_detect_s was not measured in " \
                                                  "this test"
    assert "baseline_ops" not in done["reasons"]
    assert waiting["figures"]["baseline_ops"] is None
    assert waiting["reasons"]["baseline_ops"] == "the run is queued and has no figures"


def test_samples_are_per_second_from_the_fault(viewer, stored):
    run_id = stored(dip_ops=10, seconds=40)

    response = viewer.get(f"/api/v1/runs/{run_id}/samples")

    assert response.status_code == 200
    assert response.json["origin"] == "fault"
    samples = response.json["samples"]
    assert len(samples) == 40
    assert {k: v for k, v in samples[30].items() if k != "ts"} == {
        "t": 0.0, "ops": 10, "errors": 0, "not_started": 0, "p50_ms": None, "p99_ms": None}
    assert samples[0]["t"] == -30.0
    assert response.json["cluster_samples"] == []


def test_events_are_the_timeline_from_the_fault(viewer, stored):
    run_id = stored()

    events = viewer.get(f"/api/v1/runs/{run_id}/events").json

    assert events["origin"] == "fault"
    assert [(e["t"], e["kind"]) for e in events["events"]] == [(0.0, "fault_injected"),
                                                               (15.0, "restored")]


def test_the_journal_is_404_until_the_run_has_one(viewer, stored, sessions):
    run_id = stored(status="running")
    missing = viewer.get(f"/api/v1/runs/{run_id}/journal")
    with sessions.begin() as session:
        session.execute(update(Run).where(Run.id == run_id).values(
            journal={"status": "completed", "run": []}))

    found = viewer.get(f"/api/v1/runs/{run_id}/journal")

    assert (missing.status_code, missing.json) == (
        404, {"error": f"run {run_id} has no journal yet (it is running)"})
    assert (found.status_code, found.json) == (200, {"status": "completed", "run": []})
