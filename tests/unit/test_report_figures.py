"""A report's loss and disruption figures (service/results/report.py): the deficit is the
headline, an old run without it reads n/a with its reason, and "no disruption" is not 0 s."""

from __future__ import annotations

from service.results.report import (
    API_KEYS,
    FIGURE_KEYS,
    OLD_RUN_DEFICIT,
    format_report,
    no_disruption,
    report_dict,
)
from service.store.models import Run


def run(**figures):
    return Run(id=7, title="t", cluster="lab-ceph", cluster_kind="ceph", status="completed",
               workload={"rate": 100}, figures={"reasons": {}, **figures}, events=[])


NEW = {"throughput_drop": 0.0, "deficit_ops": 120, "deficit_s": 1.2, "offered_ops": 2000,
       "worst_second_drop": 1.0, "time_to_client_recovery_s": 3.0, "client_disruption": True,
       "errors": 50, "errors_by_class": {"not started": 40, "timeout": 10}}


def test_the_deficit_is_shown_and_the_mean_drop_kept_only_in_the_json():
    assert {"deficit_ops", "deficit_s"} <= set(FIGURE_KEYS)
    assert "throughput_drop" not in FIGURE_KEYS and "throughput_drop" in API_KEYS

    data = report_dict(run(**NEW))

    assert (data["deficit_ops"], data["deficit_s"], data["throughput_drop"]) == (120, 1.2, 0.0)
    assert data["client_disruption"] is True


def test_the_report_prints_the_deficit_and_the_starts_not_issued():
    text = format_report(report_dict(run(**NEW)))

    assert ("  deficit                      120 operations not served within 1 s of their "
            "intended start of 2000 offered in the fault window: 1.200 s of full load") in text
    assert "(40 of them not started:" in text
    assert "throughput drop" not in text


def test_an_old_run_without_the_deficit_reads_n_a_with_its_reason_and_its_mean_drop():
    data = report_dict(run(throughput_drop=0.15, time_to_client_recovery_s=12.0))

    assert data["deficit_ops"] is None and data["deficit_s"] is None
    assert data["reasons"]["deficit_s"] == OLD_RUN_DEFICIT
    assert "  deficit                      n/a (mean throughput drop 15.0%)" in \
        format_report(data)


def test_an_old_run_without_a_fault_has_no_deficit_for_the_same_reason():
    data = report_dict(run(throughput_drop=None, reasons={"throughput_drop": "no fault was "
                                                                             "injected"}))

    assert data["reasons"]["deficit_ops"] == "no fault was injected"


def test_an_old_runs_0_s_recovery_reads_as_no_disruption():
    data = report_dict(run(throughput_drop=0.0, time_to_client_recovery_s=0.0))

    assert data["time_to_client_recovery_s"] is None
    assert data["reasons"]["time_to_client_recovery_s"].startswith(
        "no disruption: the clients never dipped below 95% of the baseline throughput")
    assert no_disruption(data) and data["client_disruption"] is False


def test_a_new_run_without_disruption_says_so_in_the_report():
    why = "no disruption: the clients never dipped below 95% ..."
    data = report_dict(run(**{**NEW, "time_to_client_recovery_s": None,
                              "client_disruption": False,
                              "reasons": {"time_to_client_recovery_s": why}}))

    assert data["reasons"]["time_to_client_recovery_s"] == why
    assert "  time to client recovery      none needed: no disruption" in format_report(data)


def test_a_recovery_that_took_time_is_no_no_disruption():
    data = report_dict(run(**NEW))

    assert not no_disruption(data)
    assert "  time to client recovery      3.000 s" in format_report(data)


def test_a_cleaned_run_says_when_its_objects_left_the_cluster_and_an_uncleaned_one_does_not():
    cleaned = run(**NEW)
    cleaned.objects_removed = {"at": "2026-11-27T22:00:00+00:00", "objects": 12, "deleted": 11,
                               "already_gone": 1, "failed": 0, "failures": {}}

    assert ("  objects removed              11 deleted by `faultline clean` at "
            "2026-11-27T22:00:00+00:00 (1 already gone, 0 failed)") in \
        format_report(report_dict(cleaned))
    assert "objects removed" not in format_report(report_dict(run(**NEW)))
