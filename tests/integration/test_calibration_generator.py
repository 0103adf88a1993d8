"""A calibration on the Ceph lab knows when its load generator was the limit: with a client
slowed by a test-only driver (a sleep in every submission, on the thread that completes the
operations) the knee is marked a lower bound by the client's own queueing, though its CPU
stays low; the same calibration with the real driver is not (service.results.generator)."""

from __future__ import annotations

import time

import pytest

from loadgen import drivers
from loadgen.workload import parse_workload
from service.results import calibration_report as report
from service.results.capacity import Settings
from service.runs import calibration

pytestmark = pytest.mark.lab

# 10 ms of client work per operation: at most 100 ops/s, a quarter of what the lab's OSDs
# write at 8 in flight (about 400 ops/s), so the generator is the limit by far
SLEEP_S = 0.010
QUICK = Settings(stage_s=3, warmup_s=1, max_in_flight=8, repeats=0)  # at most 4 stages
WRITES = parse_workload({"mix": {"write": 100}, "objects_per_container": 0})


class SlowDriver:
    """The real driver behind a per-operation sleep in each submission: a client whose own
    work per operation is SLEEP_S (only tests build it)."""

    def __init__(self, driver):
        self.driver = driver

    def __getattr__(self, name: str):
        return getattr(self.driver, name)

    def write(self, container, name, data, done):
        time.sleep(SLEEP_S)
        self.driver.write(container, name, data, done)

    def read(self, container, name, size, done):
        time.sleep(SLEEP_S)
        self.driver.read(container, name, size, done)

    def delete(self, container, name, done):
        time.sleep(SLEEP_S)
        self.driver.delete(container, name, done)


def _calibrate(sessions, database_url, cluster) -> dict:
    made = calibration.calibrate(sessions, database_url, cluster, WRITES, "rados", QUICK)
    with sessions() as session:
        return report.calibration_dict(report.load(session, made))


@pytest.mark.full  # 27 s; the generator-bound rule is unit-tested (tests/unit/test_knee.py)
def test_a_slowed_client_marks_the_knee_a_lower_bound_and_the_real_one_does_not(
        ceph_cluster, sessions, database_url, monkeypatch):
    # the real driver first: the lab's OSDs are the limit of 4 KiB writes
    real = _calibrate(sessions, database_url, ceph_cluster)
    # then the same calibration through the slowed client (injected where calibrate looks
    # its driver up)
    monkeypatch.setattr(calibration, "driver_for",
                        lambda *args: SlowDriver(drivers.driver_for(*args)))
    slow = _calibrate(sessions, database_url, ceph_cluster)

    for data in (real, slow):
        assert data["status"] == "completed" and data["capacity_ops"], data
        assert all(s["client_busy"] is not None for s in data["stages"]), data["stages"]
    at_knee = {name: next(s for s in data["stages"] if s["in_flight"] == data["knee_in_flight"])
               for name, data in (("real", real), ("slow", slow))}
    figures = {name: (data["capacity_ops"], [(s["in_flight"], s["ops_s"], s["client_busy"],
                                              s["generator_cpu_cores"])
                                             for s in data["stages"]])
               for name, data in (("real", real), ("slow", slow))}

    # slowed: its own queueing held the slots, though it used little CPU: a lower bound,
    # said in the stored row, the JSON, the text, and the sweep stopped there
    assert slow["generator_bound"] is True, figures
    assert at_knee["slow"]["client_busy"] >= 0.8, figures
    assert at_knee["slow"]["generator_cpu_cores"] <= 0.8, figures  # CPU alone would miss it
    assert slow["generator_bound_why"].startswith("the client held "), slow
    assert slow["spread"]["generator"]["lower_bound"] is True
    assert "between a completion and the next submit" in slow["stop_reason"], slow
    text = report.format_calibration(slow)
    assert f"capacity: at least {slow['capacity_ops']:.1f} ops/s" in text, text
    assert slow["generator_bound_why"] in text
    assert slow["capacity_ops"] <= 1 / SLEEP_S * 1.05, figures  # the client's own ceiling

    # real: the cluster was the limit, and the knee is its capacity, not a lower bound
    assert real["generator_bound"] is False, figures
    assert real["generator_bound_why"] is None and at_knee["real"]["client_busy"] < 0.8
    assert f"capacity: {real['capacity_ops']:.1f} ops/s" in report.format_calibration(real)
