"""Triggering a run from the dashboard queues it for the workers (never runs it), bad input
queues nothing, and a queued run can be cancelled from its page. Real PostgreSQL and a real
procrastinate queue; no cluster is reached (dashboard_support's inventory)."""
# ruff: noqa: F811 (the fixtures imported from dashboard_support are parameters here)

from __future__ import annotations

import re

import pytest
from dashboard_support import (  # noqa: F401 (pytest fixtures)
    counts,
    dash_app,
    dash_inventory,
    operator,
    token_of,
    viewer,
)
from sqlalchemy import text

from service.jobs import run_queue
from service.store.models import Run
from service.web.context import queue_app

FORM = {"cluster": "dash-ceph", "rate": "20", "object_size": "4096", "containers": "2",
        "objects_per_container": "50", "baseline_s": "10", "mix_read": "80",
        "mix_write": "15", "mix_delete": "5", "confirm": "yes"}


def _post(client, name: str = "ceph-kill-osd", **changes):
    form = {**FORM, **changes, "csrf_token": token_of(client, f"/experiments/{name}/run")}
    return client.post(f"/experiments/{name}/run", data={k: v for k, v in form.items()
                                                         if v is not None})


def _job_status(rolled_back, job_id: int) -> str:
    with rolled_back() as session:
        return session.execute(text("SELECT status FROM procrastinate_jobs WHERE id = :id"),
                               {"id": job_id}).scalar_one()


@pytest.fixture
def queued(dash_app, rolled_back):
    """Runs the test queued; each is cancelled afterwards, so no worker could pick it."""
    run_ids: list[int] = []
    yield run_ids
    with dash_app.app_context(), queue_app() as app:
        for run_id in run_ids:
            with rolled_back() as session:
                status = session.get(Run, run_id).status
            if status == "queued":
                run_queue.cancel(rolled_back, app, run_id)


def test_the_trigger_form_queues_a_run_with_its_job_and_shows_its_live_page(
        operator, dash_app, rolled_back, queued):
    response = _post(operator)

    assert response.status_code == 302
    run_id = int(re.fullmatch(r"/runs/(\d+)", response.headers["Location"]).group(1))
    queued.append(run_id)
    with rolled_back() as session:
        run = session.get(Run, run_id)
        assert (run.status, run.cluster, run.cluster_kind) == ("queued", "dash-ceph", "ceph")
        assert run.workload["rate"] == 20.0 and run.workload["objects_per_container"] == 50
        assert run.requested_by.startswith("operator-")
        assert run.experiment_path.endswith("experiments/ceph-kill-osd.json")
        job_id = run.job_id
    assert job_id is not None and _job_status(rolled_back, job_id) == "todo"
    page = operator.get(f"/runs/{run_id}").get_data(as_text=True)
    assert f"run {run_id} queued on dash-ceph" in page
    assert 'id="cancel"' in page and "live, updating every 2 s" in page


def test_cancel_on_the_run_page_cancels_a_queued_run_and_its_job(operator, dash_app,
                                                                  rolled_back, queued):
    run_id = int(_post(operator).headers["Location"].rsplit("/", 1)[1])
    queued.append(run_id)

    response = operator.post(f"/runs/{run_id}/cancel",
                             data={"csrf_token": token_of(operator, f"/runs/{run_id}")})

    assert response.status_code == 302
    with rolled_back() as session:
        run = session.get(Run, run_id)
        assert run.status == "cancelled"
        assert _job_status(rolled_back, run.job_id) == "cancelled"
    page = operator.get(f"/runs/{run_id}").get_data(as_text=True)
    assert f"run {run_id}: cancelled" in page
    assert 'id="cancel"' not in page


def test_cancelling_a_run_that_ended_is_refused_with_409(operator, rolled_back):
    from factories import make_run

    with rolled_back() as session:
        run_id = make_run(session).id

    response = operator.post(f"/runs/{run_id}/cancel",
                             data={"csrf_token": token_of(operator)})

    assert response.status_code == 409
    assert f"run {run_id} is completed: there is nothing to cancel" in response.get_data(
        as_text=True)


BAD = [
    ("negative-rate", "ceph-kill-osd", {"rate": "-5"},
     "invalid workload: rate must be &gt; 0, not -5.0"),
    ("zero-size", "ceph-kill-osd", {"object_size": "0"},
     "invalid workload: object_size must be &gt; 0, not 0"),
    ("bad-mix", "ceph-kill-osd", {"mix_delete": "50"}, "invalid workload: mix must sum to 100, "
                                                       "not 145"),
    # an overwrite share is part of the sum; left out, it is none
    ("bad-overwrite", "ceph-kill-osd", {"mix_overwrite": "10"},
     "invalid workload: mix must sum to 100, not 110"),
    ("overwrite-not-a-number", "ceph-kill-osd", {"mix_overwrite": "ten"},
     "invalid workload: mix overwrite must be a whole number, not &#39;ten&#39;"),
    ("not-a-number", "ceph-kill-osd", {"containers": "two"},
     "invalid workload: containers must be a whole number, not &#39;two&#39;"),
    ("unknown-cluster", "ceph-kill-osd", {"cluster": "atlantis"},
     "unknown cluster &#39;atlantis&#39; for ceph-kill-osd"),
    ("cluster-of-the-other-kind", "ceph-kill-osd", {"cluster": "dash-swift"},
     "unknown cluster &#39;dash-swift&#39; for ceph-kill-osd (clusters of kind ceph"),
    ("not-confirmed", "ceph-kill-osd", {"confirm": None},
     "tick the confirmation: this run kills osd.1 on node2 (SIGKILL) on dash-ceph"),
]


@pytest.mark.parametrize(("name", "experiment", "changes", "message"), BAD,
                         ids=[b[0] for b in BAD])
def test_bad_input_gives_the_form_again_with_400_and_queues_nothing(
        operator, rolled_back, name, experiment, changes, message):
    before = counts(rolled_back)

    response = _post(operator, experiment, **changes)

    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert message in page
    assert 'id="trigger"' in page  # the form again, with what was typed
    assert counts(rolled_back) == before


def test_an_unknown_experiment_is_404(operator):
    assert operator.get("/experiments/nope/run").status_code == 404
    response = operator.post("/experiments/../../etc/passwd/run",
                             data={"csrf_token": token_of(operator)})
    assert response.status_code == 404


def test_a_viewer_cannot_trigger_a_run(viewer, rolled_back):
    before = counts(rolled_back)

    response = _post(viewer)

    assert response.status_code == 403
    assert counts(rolled_back) == before


def test_a_viewer_cannot_cancel_a_run(viewer, rolled_back):
    from factories import make_run

    with rolled_back() as session:
        run_id = make_run(session, status="running").id

    response = viewer.post(f"/runs/{run_id}/cancel", data={"csrf_token": token_of(viewer)})

    assert response.status_code == 403
    with rolled_back() as session:
        assert session.get(Run, run_id).status == "running"
