"""A calibration's repeated stages and spread as stored on PostgreSQL, read back by the
command line's text, the JSON and the calibration page (no lab: the rows are made here)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from markupsafe import escape
from sqlalchemy import delete
from web_login import SECRET, log_in

from service.results import calibration_report as report
from service.results import generator
from service.results.capacity import Limits, Stage
from service.results.knee import knee_of
from service.store.models import Calibration, CalibrationStage
from service.web.app import create_app

CLUSTER = "cal-spread"
FIRST = ((1, 100.0), (2, 190.0), (4, 350.0), (8, 420.0), (16, 405.0))
AGAIN = ((4, 1, 400.0), (8, 1, 440.0), (16, 1, 410.0), (4, 2, 410.0), (8, 2, 395.0),
         (16, 2, 402.0))
TOPOLOGY = {"nodes": 3, "zones": 3, "devices": 3, "osds": 3, "services": {"mon": 1, "osd": 3}}


def _stage(in_flight: int, ops_s: float, repeat: int = 0) -> Stage:
    return Stage(in_flight=in_flight, seconds=5, ops=int(ops_s * 5), ops_s=ops_s,
                 mb_s=round(ops_s * 4096 / 1e6, 3), errors=0, p50_ms=2.0, p90_ms=3.0,
                 p99_ms=4.0 + in_flight / 4, p999_ms=9.0, repeat=repeat)


@pytest.fixture
def stored(sessions):
    """A calibration with its first pass, its repeats and the knee rule's spread, and one
    made before repeats and release existed."""
    stages = [_stage(n, v) for n, v in FIRST] + [_stage(n, v, r) for n, r, v in AGAIN]
    knee = knee_of(stages)
    now = datetime.now(UTC)
    with sessions.begin() as session:
        session.execute(delete(Calibration).where(Calibration.cluster == CLUSTER))
        new = Calibration(cluster=CLUSTER, cluster_kind="ceph", load_api="rados",
                          workload={"object_size": 4096, "object_size_max": None,
                                    "mix": {"write": 100}},
                          settings={"stage_s": 5, "warmup_s": 1, "p99_factor": 5.0,
                                    "repeats": 2},
                          status="completed", ended_at=now, stop_reason="reached 16",
                          knee_in_flight=knee.in_flight, capacity_ops=knee.ops_s,
                          capacity_mbps=knee.mb_s, generator_bound=False,
                          spread=knee.spread(2), release="pacific", topology=TOPOLOGY)
        new.stages = [CalibrationStage(**s.as_dict()) for s in stages]
        old = Calibration(cluster=CLUSTER, cluster_kind="ceph", load_api="rados",
                          workload=dict(new.workload), settings={"stage_s": 5, "warmup_s": 1,
                                                                 "p99_factor": 5.0},
                          status="completed", ended_at=now, knee_in_flight=8,
                          capacity_ops=420.0, capacity_mbps=1.7, generator_bound=False)
        old.stages = [CalibrationStage(**_stage(n, v).as_dict()) for n, v in FIRST]
        session.add_all([new, old])
        session.flush()
        ids = new.id, old.id
    yield ids
    with sessions.begin() as session:
        session.execute(delete(Calibration).where(Calibration.cluster == CLUSTER))


def test_the_json_keeps_the_first_pass_as_stages_and_adds_the_repeats_and_spread(sessions,
                                                                                   stored):
    with sessions() as session:
        data = report.calibration_dict(report.load(session, stored[0]))

    assert [s["in_flight"] for s in data["stages"]] == [1, 2, 4, 8, 16]
    assert [(s["in_flight"], s["repeat"], s["ops_s"]) for s in data["repeats"]] == sorted(
        AGAIN)
    assert data["knee_in_flight"] == 4 and data["capacity_ops"] == 400.0
    assert (data["spread"]["min"], data["spread"]["median"], data["spread"]["max"]) == (
        350.0, 400.0, 410.0)
    assert data["release"] == "pacific" and data["topology"] == TOPOLOGY


def test_the_text_says_each_repeated_level_the_rule_the_spread_and_what_it_was_made_on(
        sessions, stored):
    with sessions() as session:
        text = report.format_calibration(report.calibration_dict(report.load(session,
                                                                             stored[0])))
        old = report.format_calibration(report.calibration_dict(report.load(session,
                                                                            stored[1])))

    assert "          8 in flight: 420.0, 440.0, 395.0 ops/s (median 420.0)" in text
    assert ("knee: the fewest in flight whose median throughput reaches the lowest stage of "
            "the level of highest median (the best: 8 in flight, its lowest 395.0 ops/s)"
            ) in text
    assert ("capacity: 400.0 ops/s (1.64 MB/s) at 4 in flight; median of 3 stages, "
            "350.0-410.0 ops/s") in text
    assert ("made on: release pacific, 3 nodes, 3 zones, 3 devices, 3 OSDs, services: 1 mon, "
            "3 osd") in text
    # one made before repeats: no spread, and said not to be reused
    assert "repeated around the knee" not in old and "capacity: 420.0 ops/s (1.70 MB/s) " \
        "at 8 in flight\n" in old
    assert "made on: not recorded (made before calibrations kept it): not reused" in old


def test_the_page_shows_the_spread_and_the_repeated_levels(sessions, stored, database_url,
                                                          make_user):
    client = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET}).test_client()
    log_in(client, *make_user("viewer"))

    page = client.get(f"/calibrations/{stored[0]}").get_data(as_text=True)
    assert "the median of 3 stages,\n  350.0–410.0 ops/s</span>" in page
    assert page.count('<tr class="knee-level"') == 1
    assert "<td>420.0, 440.0, 395.0</td>" in page
    assert "Made on: release pacific, 3 nodes" in page
    chart = client.get(f"/calibrations/{stored[0]}/chart.json").get_json()
    assert [s["in_flight"] for s in chart["stages"]] == [1, 2, 4, 8, 16]  # one point a level

    old = client.get(f"/calibrations/{stored[1]}").get_data(as_text=True)
    assert 'id="spread"' not in old and 'id="repeats"' not in old
    assert "Made on: not recorded" in old


def test_a_knee_the_generator_limited_is_said_to_be_a_lower_bound_everywhere(
        sessions, stored, database_url, make_user):
    stages = [Stage(**{**_stage(n, v).as_dict(), "histogram": ""}, client_busy=busy)
              for (n, v), busy in zip(FIRST[:2], (0.6, 0.98), strict=True)]
    knee = knee_of(stages)
    verdict = generator.knee_verdict(list(knee.stages), stages, Limits())
    with sessions.begin() as session:
        row = Calibration(cluster=CLUSTER, cluster_kind="ceph", load_api="rados",
                          workload={"object_size": 4096, "object_size_max": None,
                                    "mix": {"write": 100}},
                          settings={"stage_s": 5, "warmup_s": 1, "p99_factor": 5.0,
                                    "repeats": 0},
                          status="completed", ended_at=datetime.now(UTC),
                          stop_reason=verdict["why"], knee_in_flight=knee.in_flight,
                          capacity_ops=knee.ops_s, capacity_mbps=knee.mb_s,
                          generator_bound=verdict["lower_bound"],
                          spread={**knee.spread(0), "generator": verdict}, release="pacific",
                          topology=TOPOLOGY)
        row.stages = [CalibrationStage(**s.as_dict()) for s in stages]
        session.add(row)
        session.flush()
        bound_id = row.id
    why = ("the client held 0.98 slots between a completion and the next submit with 2 in "
           "flight (bound 0.80): completions queued behind the generator's own work")

    with sessions() as session:
        data = report.calibration_dict(report.load(session, bound_id))
        plain = report.calibration_dict(report.load(session, stored[0]))
    # the JSON: the old key, the reason and each stage's share added
    assert data["generator_bound"] is True and data["generator_bound_why"] == why
    assert [s["client_busy"] for s in data["stages"]] == [0.6, 0.98]
    assert plain["generator_bound_why"] is None and plain["stages"][0]["client_busy"] is None
    # the text
    text = report.format_calibration(data)
    assert "capacity: at least 190.0 ops/s (0.78 MB/s) at 2 in flight\n" in text
    assert f"the cluster can carry at least this much, maybe more; calibrate again with more " \
           f"drivers to know ({why})" in text
    assert " gen. CPU client\n" in text and "    n/a   0.98  <- knee" in text
    # the pages and the chart
    client = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET}).test_client()
    log_in(client, *make_user("viewer"))
    page = client.get(f"/calibrations/{bound_id}").get_data(as_text=True)
    assert "<strong>at least 190.0 ops/s</strong>" in page
    assert f'<span id="generator-why">{escape(why.capitalize())}.</span>' in page
    assert "<td>0.98</td>" in page
    listed = client.get("/calibrations").get_data(as_text=True)
    assert "at least 190.0 ops/s at 2 in flight" in listed
    assert "<td>at least 400.0" not in listed  # the one the cluster limited: its capacity
    assert client.get(f"/calibrations/{bound_id}/chart.json").get_json()["generator_bound"]
