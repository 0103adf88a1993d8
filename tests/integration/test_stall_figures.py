"""A stall's figures from stored samples, on real PostgreSQL: the starts the open loop could
not issue are errors of class `not started` (figures, API, per-second series), the deficit
counts the stalled operations though their catch-up burst completes them, and a run whose
clients never dipped has no disruption rather than a 0 s recovery."""

from __future__ import annotations

import pytest

from loadgen.samples import SampleRecorder
from loadgen.workload import OPS
from service.results import figures
from service.results.report import format_report, report_dict
from service.results.series import run_series
from service.store.recording import RunRecorder

START = 1_700_000_000.0
RATE = 100  # ops/s, open loop
MAX_IN_FLIGHT = 50
FAULT, STALL_S, SECONDS = 30, 2, 60
FAST_S = 0.005


def open_loop_samples(stall: bool):
    """What the open loop records at RATE ops/s of reads for SECONDS: during a stall from
    FAULT, the first MAX_IN_FLIGHT starts wait until it ends, the rest cannot be issued."""
    recorder = SampleRecorder(wall_start=START, mono_start=0.0)
    waiting = 0
    for i in range(SECONDS * RATE):
        intended = i / RATE
        if stall and FAULT <= intended < FAULT + STALL_S:
            if waiting >= MAX_IN_FLIGHT:
                recorder.missed("read", intended)
                continue
            waiting += 1
            done = FAULT + STALL_S
        else:
            done = intended + FAST_S
        recorder.success("read", done, done - intended, 4096)
    return recorder.take_final(SECONDS, OPS)


def record(sessions, made, stall: bool) -> int:
    recorder = RunRecorder.create(sessions, title="stall figures", cluster="lab-ceph",
                                  cluster_kind="ceph", workload={"rate": RATE, "ramp_s": 0})
    made.append(recorder.run_id)
    recorder.update(load_started_ts=START, fault_ts=START + FAULT)
    recorder.load_samples(open_loop_samples(stall))
    # the cluster reports the fault at 31 and is fully redundant again from 41
    recorder.cluster_samples([
        (START + s, "HEALTH_OK", {"fault_seen": 31 <= s < 41, "fully_redundant": not 31 <= s < 41,
                                  "at_risk": False, "num_osds": 3, "num_up_osds": 3,
                                  "num_in_osds": 3})
        for s in range(SECONDS)])
    recorder.event("fault_injected", ts=START + FAULT, name="stall")
    with sessions() as session:
        result = figures.compute(session, recorder.run_id)
    recorder.finish("completed", figures=result)
    return recorder.run_id


@pytest.fixture
def stalled(sessions, made) -> int:
    return record(sessions, made, stall=True)


def test_missed_starts_are_errors_of_class_not_started(sessions, stalled):
    with sessions() as session:
        result = figures.compute(session, stalled)

    not_started = STALL_S * RATE - MAX_IN_FLIGHT
    assert result["errors_by_class"] == {"not started": not_started}
    assert result["errors_by_op"] == {"read": not_started}
    assert result["errors"] == not_started


def test_the_stall_is_a_deficit_its_catch_up_burst_does_not_cancel(sessions, stalled):
    with sessions() as session:
        result = figures.compute(session, stalled)

    # every operation meant for the stall's 2 s was late (it waited until the stall ended,
    # more than 1 s for the first MAX_IN_FLIGHT) or never started
    assert result["baseline_ops"] == RATE
    assert (result["deficit_ops"], result["deficit_s"]) == (STALL_S * RATE, float(STALL_S))
    assert result["client_disruption"] is True
    assert result["time_to_client_recovery_s"] == 3.0


def test_the_per_second_series_shows_the_starts_not_issued(sessions, stalled):
    with sessions() as session:
        load = {round(p["ts"] - START): p for p in run_series(session, stalled)["load"]}

    # 30.5..31.99 could not start: 50 in the stall's first second, 100 in its second
    assert [(load[t]["not_started"], load[t]["errors"]) for t in (29, 30, 31, 32)] == [
        (0, 0), (50, 50), (100, 100), (0, 0)]
    assert load[32]["ops"] == RATE + MAX_IN_FLIGHT  # the catch-up burst


def test_the_api_gives_the_deficit_and_keeps_the_mean_drop(api_as, stalled):
    viewer = api_as("viewer")
    response = viewer.get(f"/api/v1/runs/{stalled}/figures")
    data = response.get_json()
    assert response.status_code == 200, response.get_data(as_text=True)

    assert data["figures"]["deficit_s"] == 2.0
    assert data["figures"]["errors_by_class"] == {"not started": 150}
    assert 0 < data["figures"]["throughput_drop"] < 0.2  # the burst made up for much of it
    samples = viewer.get(f"/api/v1/runs/{stalled}/samples").get_json()["samples"]
    assert sum(p["not_started"] for p in samples) == 150


def test_the_report_shows_the_deficit_and_the_starts_not_issued(sessions, stalled):
    with sessions() as session:
        text = format_report(report_dict(figures.get_run(session, stalled)))

    assert "200 operations not served within 1 s of their intended start" in text
    assert "2.000 s of full load" in text
    assert "(150 of them not started:" in text


def test_clients_that_never_dipped_had_no_disruption(sessions, made, api_as):
    run_id = record(sessions, made, stall=False)

    data = api_as("viewer").get(f"/api/v1/runs/{run_id}").get_json()

    assert data["time_to_client_recovery_s"] is None
    assert data["reasons"]["time_to_client_recovery_s"].startswith(
        "no disruption: the clients never dipped below 95% of the baseline throughput")
    assert data["client_disruption"] is False
    assert (data["deficit_ops"], data["errors"]) == (0, 0)
