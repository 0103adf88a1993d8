"""The comparison table and its caveats, over plain report dicts (no database)."""

from __future__ import annotations

import pytest

from service.results.comparison import (
    FULLY_REDUNDANT,
    RGW_PATH,
    SELF_HEALING,
    CompareError,
    caveats,
    compare_entries,
    format_comparison,
    format_value,
    unrecorded_entry,
)
from service.results.report import FIGURE_KEYS
from service.web.compare import parse_run_ids

WORKLOAD = {"rate": 100, "object_size": 4096, "mix": {"read": 80, "write": 15, "delete": 5}}


def entry(run_id: int, kind: str = "ceph", api: str = "rados", fault: str | None = "kill-osd",
          workload: dict | None = None, status: str = "completed", error: str | None = None,
          **figures) -> dict:
    data = {"run_id": run_id, "title": f"t{run_id}", "cluster": f"lab-{kind}",
            "cluster_kind": kind, "api": api, "fault": fault, "status": status, "error": error,
            "workload": dict(workload or WORKLOAD), "reasons": {}}
    for key in FIGURE_KEYS:
        data[key] = figures.get(key)
    data["reasons"] = {k: f"why {k}" for k in FIGURE_KEYS if data[k] is None}
    return data


def test_table_has_every_figure_key_with_one_cell_per_run_in_order():
    data = compare_entries([entry(1, baseline_ops=100.0), entry(2, baseline_ops=80.0)])

    assert list(data["table"]) == list(FIGURE_KEYS)
    assert data["run_ids"] == [1, 2]
    assert data["table"]["baseline_ops"] == [{"value": 100.0, "reason": None},
                                             {"value": 80.0, "reason": None}]


def test_an_unmeasured_figure_is_none_with_its_reason():
    data = compare_entries([entry(1, time_to_detect_s=1.0), entry(2)])

    assert data["table"]["time_to_detect_s"][1] == {"value": None,
                                                    "reason": "why time_to_detect_s"}


def test_a_failed_run_without_a_reason_gives_its_error_as_the_reason():
    failed = entry(2, status="failed", error="verify failed: boom")
    failed["reasons"] = {}

    data = compare_entries([entry(1), failed])

    assert data["table"]["lost_objects"][1]["reason"] == "the run failed: verify failed: boom"


def test_fewer_than_two_runs_cannot_be_compared():
    with pytest.raises(CompareError, match="at least two runs, got 1"):
        compare_entries([entry(1)])


def test_same_system_api_workload_and_fault_give_no_caveat():
    assert caveats([entry(1), entry(2)]) == []


def test_one_system_on_two_releases_says_so_and_prints_each_release():
    runs = [entry(1), entry(2), entry(3, "swift", "swift")]
    runs[0]["release"], runs[1]["release"] = "pacific", "reef"

    found = [c for c in caveats(runs) if "releases" in c]
    text = format_comparison(compare_entries(runs), width=300)

    assert found == ["The ceph runs ran on different releases (run 1: pacific, run 2: reef): a "
                     "difference between them may come from the release as much as from the "
                     "fault or the load."]
    assert next(line for line in text.splitlines() if line.startswith("release")).split() == \
        ["release", "pacific", "reef", "not", "given"]


def test_ceph_against_swift_explains_self_healing_and_full_redundancy():
    found = caveats([entry(1, "ceph", "swift"), entry(2, "swift", "swift")])

    assert SELF_HEALING in found and FULLY_REDUNDANT in found
    assert RGW_PATH not in found


def test_librados_against_rgw_explains_the_gateway():
    found = caveats([entry(1, "ceph", "rados"), entry(2, "ceph", "swift")])

    assert RGW_PATH in found
    assert found[0].startswith("The runs load their clusters through different APIs "
                               "(run 1: rados, run 2: swift)")
    assert SELF_HEALING not in found


def test_librados_against_swift_names_both_apis_but_not_rgw():
    found = caveats([entry(1, "ceph", "rados"), entry(2, "swift", "swift")])

    assert any("different APIs (run 1: rados, run 2: swift)" in c for c in found)
    assert RGW_PATH not in found


def test_different_workloads_name_the_keys_that_differ():
    other = {**WORKLOAD, "rate": 200, "object_size": 65536}

    found = caveats([entry(1), entry(2, workload=other)])

    assert found == ["The workloads differ in object_size (run 1: 4096, run 2: 65536); "
                     "rate (run 1: 100, run 2: 200): the figures were not measured under the "
                     "same load."]


def test_rates_that_are_one_share_of_each_capacity_are_said_as_such():
    shares = [entry(1), entry(2, workload={**WORKLOAD, "rate": 22.1})]
    for e, calibration in zip(shares, (1, 2), strict=True):
        e.update(rate_requested="10%", calibration_id=calibration)

    assert caveats(shares) == [
        "The rates differ (run 1: 100, run 2: 22.1 ops/s) because each is 10% of its own load "
        "path's calibrated capacity (run 1: calibration 1, run 2: calibration 2): the same "
        "share of what each can carry, not the same absolute load."]
    shares[1]["rate_requested"] = "20%"  # different shares: different loads
    assert caveats(shares)[0].startswith("The workloads differ in rate (run 1: 100, run 2: ")


def test_different_faults_are_named():
    found = caveats([entry(1, fault="kill-osd"), entry(2, fault=None)])

    assert found == ["The runs injected different faults (run 1: kill-osd, run 2: none): "
                     "compare them only as far as the faults are of the same class (one "
                     "process, one disk, one node, one zone)."]


def test_a_run_that_did_not_complete_is_called_out():
    found = caveats([entry(1), entry(2, status="failed", error="FAULT NOT RESTORED")])

    assert found == ["run 2 did not complete (status failed): FAULT NOT RESTORED; its figures "
                     "may be missing or incomplete."]


def test_an_unrecorded_run_has_every_figure_na_with_why():
    missing = unrecorded_entry(name="swift", title="t", cluster="lab-swift",
                               cluster_kind="swift", workload=WORKLOAD,
                               error="node n1 is unreachable")

    data = compare_entries([entry(1, baseline_ops=100.0), missing])

    assert data["run_ids"] == [1, None]
    assert all(cells[1]["value"] is None for cells in data["table"].values())
    assert data["table"]["baseline_ops"][1]["reason"] == (
        "the experiment failed before Faultline recorded a run")
    assert data["caveats"][-1] == ("swift (no run recorded) did not complete (status failed): "
                                   "node n1 is unreachable; its figures may be missing or "
                                   "incomplete.")


@pytest.mark.parametrize(("key", "value", "text"), [
    ("baseline_ops", 100.0, "100.0 ops/s"),
    ("baseline_mbps", 0.4096, "0.410 MB/s"),
    ("baseline_p99_ms", 2.5, "2.500 ms"),
    ("throughput_drop", 0.25, "25.0%"),
    ("deficit_ops", 1358, "1358 ops"),
    ("deficit_s", 1.175, "1.175 s"),
    ("time_to_detect_s", 12.25, "12.2 s"),
    ("errors", 7, "7"),
    ("errors_by_class", {"timeout": 3, "http_503": 2}, "timeout 3, http_503 2"),
    ("errors_by_op", {}, "none"),
    ("lost_objects", None, "n/a"),
])
def test_figures_are_printed_with_their_units(key, value, text):
    assert format_value(key, value) == text


def test_text_table_has_one_column_per_run_then_caveats_then_reasons():
    data = compare_entries([entry(1, baseline_ops=100.0),
                            entry(2, "swift", "swift", baseline_ops=80.5)])

    text = format_comparison(data)
    lines = text.splitlines()

    assert lines[0].split() == ["run", "1", "2"]
    assert lines[1].split() == ["cluster", "lab-ceph", "lab-swift"]
    assert lines[2].split() == ["kind", "ceph", "swift"]
    assert lines[3].split() == ["release", "not", "given", "not", "given"]
    assert lines[4].split() == ["api", "rados", "swift"]
    assert next(line for line in lines if line.startswith("baseline throughput ")).split() \
        == ["baseline", "throughput", "100.0", "ops/s", "80.5", "ops/s"]
    assert text.index("Caveats:") < text.index("Not measured (n/a):")
    assert "  run 2, time to detect: why time_to_detect_s" in lines


@pytest.mark.parametrize(("values", "ids"), [
    (["1,2,3"], [1, 2, 3]),
    (["4", "5"], [4, 5]),
    (["1, 2,", ""], [1, 2]),
])
def test_run_ids_come_from_commas_or_repeated_parameters(values, ids):
    assert parse_run_ids(values) == ids


def test_a_run_id_that_is_not_a_number_is_refused():
    with pytest.raises(CompareError, match="'x1' is not a run id"):
        parse_run_ids(["1,x1"])


INVALID = {"valid": False, "reasons": ["the cluster could not sustain 50.0 ops/s: 45.3 achieved"],
           "hint": "lower the rate", "injected_anyway": False}


def test_a_run_whose_baseline_did_not_hold_is_kept_out_of_the_comparison():
    invalid = entry(2, status="invalid", baseline_ops=45.3)
    invalid["validity"] = INVALID
    data = compare_entries([entry(1, baseline_ops=50.0), invalid])

    assert data["table"]["baseline_ops"][1] == {
        "value": None, "reason": "its baseline did not hold: not comparable"}
    assert any(c.startswith("run 2: its baseline did not hold (the cluster could not sustain")
               and "kept out of the comparison" in c for c in data["caveats"])


def test_a_run_that_injected_anyway_keeps_its_figures_with_a_warning_beside_each():
    anyway = entry(2, baseline_ops=45.3, time_to_detect_s=2.0)
    anyway["validity"] = {**INVALID, "injected_anyway": True}
    data = compare_entries([entry(1, baseline_ops=50.0, time_to_detect_s=1.0), anyway])

    cell = data["table"]["time_to_detect_s"][1]
    assert cell["value"] == 2.0 and "did not hold" in cell["warning"]
    assert "warning" not in data["table"]["time_to_detect_s"][0]
    text = format_comparison(data)
    assert "2.000 s !" in text and "1.000 s !" not in text
    assert any("injected its fault anyway" in c for c in data["caveats"])
