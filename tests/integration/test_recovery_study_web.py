"""The recovery-profile study's page, served by the real app from a real PostgreSQL, seen by
Chromium: runs grouped by the settings they stored, one row and one point per group at the
medians, the trials' range as bars, and a run that did not complete left out and said."""

from __future__ import annotations

import pytest
from factories import make_run
from serving import chromium_page, painted_pixels, served
from sqlalchemy import delete
from web_login import SECRET, log_in_browser

from clusters.recovery_settings import Setting
from service.store import db
from service.store.models import Run
from service.web.app import create_app

# (profile, recovery_s, client throughput kept, p99 ratio, status)
RUNS = [("high_client_ops", 200.0, 0.92, 1.1, "completed"),
        ("high_recovery_ops", 60.0, 0.55, 3.0, "completed"),
        ("high_client_ops", 240.0, 0.88, 1.2, "completed"),
        ("high_recovery_ops", 80.0, 0.45, 3.4, "completed"),
        ("high_recovery_ops", 70.0, 0.50, 3.2, "invalid")]


def _settings(profile: str) -> dict:
    return {"system": "ceph", "release": "ceph version 18.2.7 reef (stable)", "errors": [],
            "settings": [Setting("osd_op_queue", "mclock_scheduler", "mclock_scheduler",
                                 "osd.0", "default").as_dict(),
                         Setting("osd_mclock_profile", profile, "balanced", "osd.0",
                                 "mon").as_dict()]}


@pytest.fixture
def study_runs(database_url) -> list[int]:
    sessions = db.session_factory(database_url)
    ids = []
    with sessions() as session:
        for profile, recovery_s, ops, p99, status in RUNS:
            run = make_run(session, status=status, figures={
                "recovery_s": recovery_s, "recovery_ops_ratio": ops, "recovery_p99_ratio": p99,
                "time_to_full_redundancy_s": recovery_s + 40})
            run.recovery_settings = _settings(profile)
            session.commit()
            ids.append(run.id)
    yield ids
    with sessions.begin() as session:
        session.execute(delete(Run).where(Run.id.in_(ids)))


@pytest.fixture
def server(database_url):
    app = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET})
    with served(app) as url:
        yield url


def test_the_study_puts_one_point_and_one_row_per_setting(study_runs, server, make_user):
    ids = study_runs
    with chromium_page() as page:
        log_in_browser(page, server, *make_user("viewer"))
        page.goto(f"{server}/studies/recovery?runs={','.join(map(str, ids))}")
        page.wait_for_function("() => Chart.getChart(document.getElementById('study'))")
        points = page.evaluate("""() => Chart.getChart(document.getElementById('study'))
            .data.datasets.map(d => ({label: d.label, data: d.data}))""")
        rows = page.locator("#study-table tbody tr").all_inner_texts()
        left_out = page.locator("#left-out li").all_inner_texts()
        assert painted_pixels(page, "study") > 0

    client, recovery = [p for p in points if p["label"]]
    assert client == {"label": "mClock high_client_ops (2 runs)",
                      "data": [{"x": 220.0, "y": 90.0}]}
    assert recovery["data"] == [{"x": 70.0, "y": 50.0}]
    bars = [[(round(p["x"], 3), round(p["y"], 3)) for p in bar["data"]]
            for bar in points if not bar["label"]]
    assert [(200.0, 90.0), (240.0, 90.0)] in bars  # the recovery's range
    assert [(70.0, 45.0), (70.0, 55.0)] in bars  # the clients' range
    assert rows[0].split("\t")[:3] == ["mClock high_client_ops", f"{ids[0]}, {ids[2]}",
                                       "220.0 s (200.0 s–240.0 s)"]
    assert "50.0% (45.0%–55.0%)" in rows[1]
    assert left_out == [f"mClock high_recovery_ops: run {ids[4]}: invalid"]


def test_a_study_of_unknown_or_malformed_runs_is_refused(server, make_user):
    with chromium_page() as page:
        log_in_browser(page, server, *make_user("viewer"))
        missing = page.goto(f"{server}/studies/recovery?runs=2147483000")
        malformed = page.goto(f"{server}/studies/recovery?runs=1;drop")
        empty = page.goto(f"{server}/studies/recovery")
    assert (missing.status, malformed.status, empty.status) == (404, 400, 400)
