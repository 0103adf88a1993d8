"""The comparisons API: runs side by side with the caveats, and ids that are not runs."""

from __future__ import annotations

import pytest
from factories import figures, make_run
from sqlalchemy import delete

from service.store.models import Run


@pytest.fixture
def two_runs(sessions):
    with sessions() as session:
        ids = [make_run(session, kind="ceph", figures=figures(baseline_ops=100.0)).id,
               make_run(session, kind="swift", figures=figures(baseline_ops=90.0)).id]
    yield ids
    with sessions.begin() as session:
        session.execute(delete(Run).where(Run.id.in_(ids)))


def test_runs_are_compared_side_by_side_with_the_caveats(api_as, two_runs):
    response = api_as("viewer").get("/api/v1/comparisons",
                                    query_string={"runs": ",".join(map(str, two_runs))})

    assert response.status_code == 200
    assert response.json["run_ids"] == two_runs
    assert [c["value"] for c in response.json["table"]["baseline_ops"]] == [100.0, 90.0]
    assert any("re-replicates" in caveat for caveat in response.json["caveats"])


@pytest.mark.parametrize(("runs", "status", "message"), [
    ("1,x1", 400, "'x1' is not a run id"),
    ("987654321", 400, "a comparison needs at least two different runs, got 1"),
    ("", 400, "a comparison needs at least two different runs, got 0"),
    ("987654321,987654322", 404, "runs 987654321, 987654322 do not exist"),
])
def test_ids_that_are_not_runs_to_compare_are_refused(api_as, runs, status, message):
    response = api_as("viewer").get("/api/v1/comparisons", query_string={"runs": runs})

    assert (response.status_code, response.json) == (status, {"error": message})
