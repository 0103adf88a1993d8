"""A calibration's repeated stages and spread as stored on PostgreSQL, read back by the
command line's text, the JSON and the calibration page (no lab: the rows are made here)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import delete
from web_login import SECRET, log_in

from service.results import calibration_report as report
from service.results.capacity import Stage
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
