"""A workload whose rate is a share of the capacity ("10%"): the run calibrates first when
no calibration of its shape is recent enough, runs at that share of the knee, records the
rate it resolved to and the calibration it came from, and the next run reuses it. Which
calibration applies is checked on PostgreSQL alone."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from short_runs import pause, short_experiment
from sqlalchemy import delete, func, select
from sqlalchemy.orm import selectinload
from web_login import SECRET, log_in

from clusters.access.inventory import Cluster, Disk, Node
from loadgen.workload import parse_workload
from service.runs.calibration import knee_bound_ms, latest_calibration, resolve_rate
from service.runs.calibration_reuse import topology_of
from service.store.models import Calibration, Run
from service.web.app import create_app

QUICK = {"stage_s": 3, "warmup_s": 1, "max_in_flight": 8}  # a calibration in about 20 s
# the subject is the calibration's reuse; at 20% (about 400 ops/s) the generator beside the
# other test stream on 2 cores once started 7% of its operations late
SHARE, FRACTION = "10%", 0.1


def _run(env, tmp_path, experiment: dict) -> subprocess.CompletedProcess:
    path = tmp_path / "relative.json"
    path.write_text(json.dumps(experiment))
    return subprocess.run(["faultline", "run", str(path)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)


def _latest_run(sessions) -> Run:
    with sessions() as session:
        return session.execute(select(Run).options(selectinload(Run.events))
                               .order_by(Run.id.desc()).limit(1)).scalar_one()


@pytest.mark.lab
def test_a_share_of_the_capacity_is_calibrated_first_then_reused(ceph_cluster, env, sessions,
                                                                  tmp_path, database_url,
                                                                  make_user):
    with sessions.begin() as session:  # no calibration of lab-ceph is recent enough
        session.execute(delete(Calibration).where(Calibration.cluster == "lab-ceph"))
    experiment = short_experiment("relative rate", [pause(1)], rate=SHARE, calibration=QUICK)

    first = _run(env, tmp_path, experiment)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    run = _latest_run(sessions)
    with sessions() as session:
        made = session.get(Calibration, run.calibration_id)
        assert made.status == "completed" and made.capacity_ops, made.error
        assert made.settings["stage_s"] == 3 and made.settings["max_in_flight"] == 8
        assert made.workload["mix"] == {"read": 80, "write": 20}
        capacity, bound, spread = made.capacity_ops, made.generator_bound, made.spread
        knee = knee_bound_ms(made)
        # made on the lab's release and topology, with the knee read from repeats
        assert made.release == ceph_cluster.release and made.topology["osds"] >= 1
        assert made.settings["repeats"] == 2 and spread["median"] == capacity
    assert run.status == "completed" and run.rate_requested == SHARE
    assert run.workload["rate"] == round(capacity * FRACTION, 1)
    resolved = next(e.detail for e in run.events if e.kind == "rate_resolved")
    ranged = ({"capacity_range": [spread["min"], spread["max"]],
               "ops_s_range": [round(spread["min"] * FRACTION, 1),
                               round(spread["max"] * FRACTION, 1)]}
              if spread["stages"] > 1 else {})
    assert resolved == {"requested": SHARE, "ops_s": run.workload["rate"],
                        "calibration_id": run.calibration_id, "capacity_ops": capacity,
                        "calibrated_now": True, "generator_bound": bound,
                        "knee_bound_ms": knee, **ranged}
    # the baseline held the resolved rate, not some other one; at this share it is not judged
    # against the knee (only a rate past the capacity is)
    assert run.figures["validity"]["valid"], run.figures["validity"]
    assert knee > 0 and run.figures["validity"]["measured"]["knee_bound_ms"] is None
    assert f"{run.workload['rate']} ops/s open loop ({SHARE} of the capacity in calibration " \
           f"{run.calibration_id})" in first.stdout

    second = _run(env, tmp_path, experiment)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    again = _latest_run(sessions)
    assert again.id != run.id and again.calibration_id == run.calibration_id
    assert again.workload["rate"] == run.workload["rate"]
    assert next(e.detail for e in again.events
                if e.kind == "rate_resolved")["calibrated_now"] is False
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(Calibration).where(
            Calibration.cluster == "lab-ceph")) == 1

    # the run page says what was asked and links the calibration it came from
    client = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET}).test_client()
    log_in(client, *make_user("viewer"))
    page = client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert f"Load: {run.workload['rate']} ops/s open loop ({SHARE} of the capacity in" in page
    assert f'<a href="/calibrations/{run.calibration_id}">calibration' in page


@pytest.mark.lab
@pytest.mark.parametrize("workload, calibration, message", [
    ({"rate": "0%"}, None, "rate must be ops/s or a share of the calibrated capacity"),
    ({"rate": "half"}, None, "not 'half'"),
    ({"rate": "50%"}, {"stage_s": 1}, "stage length must be 3 to 600 s, not 1"),
    ({"rate": "50%"}, {"max_age_h": -1}, "max_age_h must be hours > 0 and <= 8760, not -1"),
    ({"rate": "50%"}, {"speed": "fast"}, "invalid calibration: expected an object with"),
])
def test_a_relative_rate_that_makes_no_sense_is_refused_and_changes_nothing(
        ceph_cluster, env, sessions, tmp_path, workload, calibration, message):
    experiment = short_experiment("bad relative rate", [pause(1)],
                                  **({"calibration": calibration} if calibration else {}))
    experiment["controls"][0]["provider"]["arguments"]["workload"].update(workload)
    with sessions() as session:
        before = (session.scalar(select(func.count()).select_from(Run)),
                  session.scalar(select(func.count()).select_from(Calibration)))

    done = _run(env, tmp_path, experiment)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert message in done.stdout + done.stderr
    with sessions() as session:
        assert (session.scalar(select(func.count()).select_from(Run)),
                session.scalar(select(func.count()).select_from(Calibration))) == before


MATCH = Cluster(name="cal-match", kind="ceph", release="pacific",
                nodes=(Node("n1", "10.0.0.1"), Node("n2", "10.0.0.2")),
                disks=(Disk("n1", "/dev/sdb", "/osd0", osd=0), Disk("n2", "/dev/sdb", "/osd1",
                                                                   osd=1)))
MADE_ON = {"release": "pacific", "topology": topology_of(MATCH)}


def _calibration(session, *, api="rados", mix=None, status="completed", capacity=500.0,
                 age_h=1.0, size=4096, made_on=None, spread=None) -> int:
    ended = datetime.now(UTC) - timedelta(hours=age_h)
    row = Calibration(cluster="cal-match", cluster_kind="ceph", load_api=api,
                      workload={"object_size": size, "object_size_max": None,
                                "mix": mix or {"read": 80, "write": 20}},
                      settings={}, status=status, capacity_ops=capacity, ended_at=ended,
                      spread=spread, **(MADE_ON if made_on is None else made_on))
    session.add(row)
    session.flush()
    return row.id


def test_the_newest_calibration_of_the_same_cluster_api_shape_release_and_topology_applies(
        sessions):
    workload = parse_workload({"rate": "50%", "object_size": 4096,
                               "mix": {"read": 80, "write": 20}})
    with sessions.begin() as session:
        session.execute(delete(Calibration).where(Calibration.cluster == "cal-match"))
        older = _calibration(session, age_h=3)
        newest = _calibration(session, age_h=2)
        _calibration(session, api="swift")  # newer, but another API
        _calibration(session, mix={"write": 100})  # another mix
        _calibration(session, size=65536)  # another size
        _calibration(session, status="failed")
        _calibration(session, capacity=None)  # found no knee
        _calibration(session, age_h=2.5, made_on={"release": "reef",
                                                  "topology": MADE_ON["topology"]})
    try:
        with sessions() as session:
            assert latest_calibration(session, MATCH, "rados", workload, 24).id == newest
            assert latest_calibration(session, MATCH, "rados", workload, 2.5).id == newest
            # the newest is too old: none applies, not an older one
            assert latest_calibration(session, MATCH, "rados", workload, 1.5) is None
            assert latest_calibration(session, replace(MATCH, name="other"), "rados",
                                      workload, 24) is None
            assert older < newest
            # upgraded to reef: only the calibration made on reef applies
            reef = latest_calibration(session, replace(MATCH, release="reef"), "rados",
                                      workload, 24)
            assert reef.release == "reef" and reef.id > newest
            # a third OSD: none of them applies
            grown = replace(MATCH, disks=MATCH.disks + (Disk("n2", "/dev/sdc", "/osd2", osd=2),))
            assert latest_calibration(session, grown, "rados", workload, 24) is None
    finally:
        with sessions.begin() as session:
            session.execute(delete(Calibration).where(Calibration.cluster == "cal-match"))


def test_a_calibration_made_before_release_and_topology_were_kept_is_not_reused(sessions):
    workload = parse_workload({"rate": "50%", "object_size": 4096,
                               "mix": {"read": 80, "write": 20}})
    with sessions.begin() as session:
        session.execute(delete(Calibration).where(Calibration.cluster == "cal-match"))
        _calibration(session, made_on={"release": None, "topology": None})
    try:
        with sessions() as session:
            assert latest_calibration(session, MATCH, "rados", workload, 24) is None
            assert latest_calibration(session, replace(MATCH, release=None), "rados",
                                      workload, 24) is None
    finally:
        with sessions.begin() as session:
            session.execute(delete(Calibration).where(Calibration.cluster == "cal-match"))


def test_a_relative_rate_keeps_the_same_share_of_the_knees_lowest_and_highest_stage(
        sessions, database_url):
    workload = parse_workload({"rate": "20%", "object_size": 4096,
                               "mix": {"read": 80, "write": 20}})
    spread = {"repeats": 2, "stages": 3, "min": 480.0, "median": 500.0, "max": 530.0,
              "best_in_flight": 8, "threshold_ops": 470.0, "levels": []}
    with sessions.begin() as session:
        session.execute(delete(Calibration).where(Calibration.cluster == "cal-match"))
        made = _calibration(session, capacity=500.0, spread=spread)
    try:
        # a calibration applies: nothing touches the cluster, the rate comes from the row
        resolved = resolve_rate(sessions, database_url, MATCH, workload, "rados", None, 24)
    finally:
        with sessions.begin() as session:
            session.execute(delete(Calibration).where(Calibration.cluster == "cal-match"))

    assert resolved.workload.rate == 100.0 and not resolved.calibrated_now
    assert resolved.as_dict() == {
        "requested": "20%", "ops_s": 100.0, "calibration_id": made, "capacity_ops": 500.0,
        "calibrated_now": False, "generator_bound": False, "knee_bound_ms": None,
        "capacity_range": [480.0, 530.0], "ops_s_range": [96.0, 106.0]}
