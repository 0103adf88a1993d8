"""Schedules from the dashboard: made through service.schedules.services (checked before anything is
stored), switched on and off, deleted; and a schedule's series with its regressions marked."""
# ruff: noqa: F811 (the fixtures imported from dashboard_support are parameters here)

from __future__ import annotations

import json
import re
import uuid

import pytest
from dashboard_support import (  # noqa: F401 (pytest fixtures)
    EXPERIMENTS,
    dash_app,
    dash_inventory,
    operator,
    token_of,
    viewer,
)
from factories import figures, make_run
from sqlalchemy import func, select

from service.store.models import Schedule


def _form(client, **changes) -> dict:
    form = {"name": f"nightly {uuid.uuid4().hex[:8]}", "cron": "0 2 * * *",
            "timezone": "Europe/Berlin", "experiment": "ceph-kill-osd", "suite": "",
            "clusters": ["dash-ceph"], "workload": '{"rate": 20}',
            "csrf_token": token_of(client, "/schedules")}
    form.update(changes)
    return form


def _schedules(rolled_back) -> int:
    with rolled_back() as session:
        return session.execute(select(func.count(Schedule.id))).scalar_one()


def test_a_schedule_made_from_the_form_is_stored_and_listed(operator, rolled_back):
    form = _form(operator)

    response = operator.post("/schedules", data=form)

    assert response.status_code == 302
    schedule_id = int(re.fullmatch(r"/schedules/(\d+)", response.headers["Location"]).group(1))
    with rolled_back() as session:
        schedule = session.get(Schedule, schedule_id)
        assert (schedule.cron, schedule.timezone, schedule.clusters, schedule.workload) == (
            "0 2 * * *", "Europe/Berlin", ["dash-ceph"], {"rate": 20})
        assert schedule.experiment_path == str(EXPERIMENTS / "ceph-kill-osd.json")
        assert schedule.created_by.startswith("operator-") and schedule.enabled
    listing = operator.get("/schedules").get_data(as_text=True)
    assert f'<tr data-schedule="{schedule_id}">' in listing and form["name"] in listing
    assert "<code>ceph-kill-osd.json</code> on dash-ceph" in listing


@pytest.mark.parametrize(("changes", "message"), [
    ({"cron": "61 2 * * *"}, "invalid cron expression &#39;61 2 * * *&#39;: minute &#39;61&#39; "
                             "is not valid (allowed: 0-59, with * , - /)"),
    ({"cron": "0 2 * *"}, "invalid cron expression &#39;0 2 * *&#39;: expected 5 fields"),
    ({"timezone": "Mars/Olympus"}, "unknown time zone &#39;Mars/Olympus&#39;"),
    ({"clusters": ["atlantis"]}, "unknown cluster &#39;atlantis&#39;"),
    ({"clusters": []}, "a scheduled experiment needs at least one cluster"),
    ({"experiment": "", "suite": ""}, "a schedule runs either an experiment or a suite"),
    ({"experiment": "nope"}, "experiment &#39;nope&#39; does not exist"),
    ({"workload": "{rate: 20"}, "the workload is not JSON"),
    ({"workload": '{"rate": -1}'}, "invalid workload: rate must be &gt; 0, not -1"),
    ({"name": ""}, "a schedule needs a name"),
])
def test_a_bad_schedule_is_400_with_its_reason_and_nothing_is_stored(operator, rolled_back,
                                                                     changes, message):
    before = _schedules(rolled_back)

    response = operator.post("/schedules", data=_form(operator, **changes))

    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert message in page
    assert 'id="new-schedule"' in page
    assert _schedules(rolled_back) == before


def test_a_viewer_cannot_create_change_or_delete_a_schedule(viewer, operator, rolled_back):
    schedule_id = int(operator.post("/schedules", data=_form(operator))
                      .headers["Location"].rsplit("/", 1)[1])
    before = _schedules(rolled_back)
    token = token_of(viewer, "/schedules")

    answers = [viewer.post("/schedules", data=_form(viewer)).status_code] + [
        viewer.post(f"/schedules/{schedule_id}/{action}", data={"csrf_token": token}).status_code
        for action in ("disable", "enable", "delete")]

    assert answers == [403] * 4
    assert _schedules(rolled_back) == before
    with rolled_back() as session:
        assert session.get(Schedule, schedule_id).enabled
    assert 'id="new-schedule"' not in viewer.get("/schedules").get_data(as_text=True)


def test_an_operator_disables_enables_and_deletes_a_schedule(operator, rolled_back):
    schedule_id = int(operator.post("/schedules", data=_form(operator))
                      .headers["Location"].rsplit("/", 1)[1])
    token = token_of(operator, "/schedules")

    def enabled() -> bool | None:
        with rolled_back() as session:
            schedule = session.get(Schedule, schedule_id)
            return None if schedule is None else schedule.enabled

    assert operator.post(f"/schedules/{schedule_id}/disable",
                         data={"csrf_token": token}).status_code == 302
    assert enabled() is False
    assert operator.post(f"/schedules/{schedule_id}/enable",
                         data={"csrf_token": token}).status_code == 302
    assert enabled() is True
    assert operator.post(f"/schedules/{schedule_id}/delete",
                         data={"csrf_token": token}).status_code == 302
    assert enabled() is None
    assert operator.post(f"/schedules/{schedule_id}/delete",
                         data={"csrf_token": token}).status_code == 404


def test_the_series_page_marks_a_regression_night_and_lists_its_reason(viewer, rolled_back):
    reason = ("time to full redundancy 84.0 s is worse than the last 3 runs (median 52.0 s, "
              "limit 62.4 s)")
    with rolled_back.begin() as session:
        schedule = Schedule(name=f"series {uuid.uuid4().hex[:8]}", cron="0 2 * * *",
                            timezone="UTC", experiment_path="experiments/ceph-kill-osd.json",
                            clusters=["lab-ceph"], workload={}, enabled=True)
        session.add(schedule)
    with rolled_back() as session:
        nights = []
        for value in (50.0, 52.0, 54.0, 84.0):
            run = make_run(session, title="nightly", figures=figures(
                time_to_full_redundancy_s=value, throughput_drop=0.1, errors=0))
            run.schedule_id, run.experiment_path = schedule.id, "experiments/ceph-kill-osd.json"
            run.verdict = ({"status": "regression", "summary": reason, "history_runs": 3,
                            "judged": ["time_to_full_redundancy_s"],
                            "findings": [{"figure": "time_to_full_redundancy_s",
                                          "kind": "worse", "value": value, "median": 52.0,
                                          "limit": 62.4, "history_values": 3,
                                          "reason": reason}]}
                           if value == 84.0 else {"status": "ok", "summary": "fine",
                                                  "findings": []})
            session.commit()
            nights.append(run.id)

    page = viewer.get(f"/schedules/{schedule.id}").get_data(as_text=True)
    listing = viewer.get("/schedules").get_data(as_text=True)

    assert "ceph-kill-osd.json on lab-ceph" in page and "4 nights,\n      1 flagged" in page
    flagged = re.search(rf'<tr class="flagged" data-run="{nights[-1]}">(.*?)</tr>', page, re.S)
    assert flagged and reason in flagged.group(1)
    for ok in nights[:-1]:
        assert f'<tr class="" data-run="{ok}">' in page
    assert 'id="trend-0-time_to_full_redundancy_s"' in page
    series = json.loads(re.search(r"const SERIES = (.*);", page).group(1))
    assert [n["values"]["time_to_full_redundancy_s"] for n in series[0]["nights"]] == [
        50.0, 52.0, 54.0, 84.0]
    assert series[0]["nights"][-1]["flagged_figures"] == ["time_to_full_redundancy_s"]
    assert f'href="/runs/{nights[-1]}" title="{reason}"' in listing


def test_an_unknown_schedule_is_404(viewer):
    response = viewer.get("/schedules/987654")

    assert response.status_code == 404
    assert "schedule 987654 does not exist" in response.get_data(as_text=True)
