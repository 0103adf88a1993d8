"""Comparing stored runs, `faultline compare` and `faultline suite`, on a real PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from factories import figures, make_run
from sqlalchemy import func, select

from clusters.exceptions import NodeUnreachable
from service.cli.group import main
from service.experiments import documents
from service.experiments.suites import load_suite, run_suite
from service.results.comparison import RGW_PATH, SELF_HEALING, CompareError, compare
from service.results.figures import RunNotFound
from service.runs import launch
from service.schedules.exceptions import ScheduleError
from service.schedules.services import check as schedule_check
from service.store import db
from service.store.models import Run

REPO = Path(__file__).resolve().parents[2]
CEPH_EXPERIMENT = "experiments/ceph-kill-osd.json"


@pytest.fixture
def three_runs(sessions, made) -> list[int]:
    """Kill one process three ways: librados, the Swift API through RGW, Swift."""
    with sessions() as session:
        runs = [
            make_run(session, figures=figures(baseline_ops=100.0, time_to_detect_s=1.0,
                                              time_to_full_redundancy_s=42.5, lost_objects=0,
                                              cluster_release="pacific")),
            make_run(session, load_api="swift", figures=figures(baseline_ops=99.0,
                                              time_to_detect_s=1.5, lost_objects=0,
                                              cluster_release="reef")),
            make_run(session, kind="swift", fault="kill-object-server",
                     figures=figures(baseline_ops=98.0, time_to_detect_s=3.0,
                                     time_to_full_redundancy_after_restore_s=20.0,
                                     lost_objects=0)),
        ]
        made += [r.id for r in runs]
    return list(made)


def test_compare_gives_each_run_report_and_the_figures_side_by_side(sessions, three_runs):
    with sessions() as session:
        data = compare(session, three_runs)

    assert data["run_ids"] == three_runs
    assert [r["api"] for r in data["runs"]] == ["rados", "swift", "swift"]
    assert [r["fault"] for r in data["runs"]] == ["kill-osd", "kill-osd", "kill-object-server"]
    assert [c["value"] for c in data["table"]["baseline_ops"]] == [100.0, 99.0, 98.0]
    assert data["table"]["time_to_full_redundancy_s"][2] == {
        "value": None, "reason": "time_to_full_redundancy_s was not measured in this test"}
    assert SELF_HEALING in data["caveats"] and RGW_PATH in data["caveats"]
    assert [r["release"] for r in data["runs"]] == ["pacific", "reef", None]
    assert (f"The ceph runs ran on different releases (run {three_runs[0]}: pacific, run "
            f"{three_runs[1]}: reef)") in " ".join(data["caveats"])


def test_compare_keeps_the_order_given(sessions, three_runs):
    with sessions() as session:
        data = compare(session, list(reversed(three_runs)))

    assert data["run_ids"] == list(reversed(three_runs))


def test_compare_names_every_run_that_does_not_exist(sessions, three_runs):
    with sessions() as session, pytest.raises(RunNotFound) as caught:
        compare(session, [three_runs[0], 987654, 987655])

    assert str(caught.value) == "runs 987654, 987655 do not exist"


def test_compare_refuses_fewer_than_two_different_runs(sessions, three_runs):
    with sessions() as session, pytest.raises(CompareError) as caught:
        compare(session, [three_runs[0], three_runs[0]])

    assert str(caught.value) == "a comparison needs at least two different runs, got 1"


def test_cli_compare_prints_one_column_per_run(database_url, three_runs):
    result = CliRunner().invoke(main, ["compare", *map(str, three_runs)],
                                env={"DATABASE_URL": database_url})

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["run", *map(str, three_runs)]
    assert lines[1].split() == ["cluster", "lab-ceph", "lab-ceph", "lab-swift"]
    assert lines[3].split() == ["release", "pacific", "reef", "not", "given"]
    assert lines[4].split() == ["api", "rados", "swift", "swift"]
    assert next(line for line in lines if line.startswith("baseline throughput ")).split() == [
        "baseline", "throughput", "100.0", "ops/s", "99.0", "ops/s", "98.0", "ops/s"]
    assert "Caveats:" in result.stdout
    assert (f"  run {three_runs[2]}, time to full redundancy (while the fault persists): "
            "time_to_full_redundancy_s was not measured in this test") in lines


def test_cli_compare_json_is_the_comparison(database_url, three_runs):
    result = CliRunner().invoke(main, ["compare", *map(str, three_runs[:2]), "--json"],
                                env={"DATABASE_URL": database_url})

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["run_ids"] == three_runs[:2]
    assert data["caveats"][-1] == RGW_PATH
    assert data["table"]["time_to_detect_s"] == [{"value": 1.0, "reason": None},
                                                 {"value": 1.5, "reason": None}]


@pytest.mark.parametrize(("args", "message"), [
    (["987654", "987655"], "error: runs 987654, 987655 do not exist"),
    (["987654"], "error: a comparison needs at least two different runs, got 1"),
    ([], "error: a comparison needs at least two different runs, got 0"),
])
def test_cli_compare_refuses_bad_run_ids(database_url, args, message):
    result = CliRunner().invoke(main, ["compare", *args], env={"DATABASE_URL": database_url})

    assert result.exit_code == 2
    assert result.stderr.strip() == message


# --- suites ---------------------------------------------------------------------------------

INVENTORY = {"clusters": {
    "lab-ceph": {"kind": "ceph", "chaos": "allowed",
                 "nodes": [{"name": "n1", "address": "10.0.0.1"}],
                 "client": {"conf": "/etc/ceph/ceph.conf"}},
    "lab-swift": {"kind": "swift", "chaos": "allowed",
                  "nodes": [{"name": "n1", "address": "10.0.0.2"}]},
}}


@pytest.fixture
def suite_dir(tmp_path, monkeypatch):
    """An inventory and some broken experiment files; the current directory is the repo."""
    monkeypatch.chdir(REPO)
    (tmp_path / "inventory.json").write_text(json.dumps(INVENTORY))  # YAML reads JSON
    experiment = json.loads((REPO / CEPH_EXPERIMENT).read_text())
    bad_rate = json.loads(json.dumps(experiment))
    bad_rate["controls"][0]["provider"]["arguments"]["workload"]["rate"] = -5
    (tmp_path / "bad-rate.json").write_text(json.dumps(bad_rate))
    no_control = {k: v for k, v in experiment.items() if k != "controls"}
    (tmp_path / "no-control.json").write_text(json.dumps(no_control))
    (tmp_path / "not-experiment.json").write_text(json.dumps({"title": "t"}))
    return tmp_path


def _entries(*pairs: tuple[str, str], **extra) -> list[dict]:
    return [{"name": name, "experiment": path, **extra} for name, path in pairs]


GOOD = _entries(("a", CEPH_EXPERIMENT), ("b", CEPH_EXPERIMENT))

SUITE_CASES = [
    ("not-json", "{ nope",
     "suite file {suite} is not valid JSON: Expecting property name enclosed in double "
     "quotes: line 1 column 3 (char 2)"),
    ("not-an-object", [], "invalid suite {suite}: expected a JSON object with 'title' and 'runs'"),
    ("keys", {"titel": "x", "runs": GOOD},
     "invalid suite {suite}: unknown key 'titel'; missing key 'title'"),
    ("no-runs", {"title": "x"}, "invalid suite {suite}: missing key 'runs'"),
    ("one-run", {"title": "x", "runs": GOOD[:1]},
     "invalid suite {suite}: 'runs' must be a list of at least two runs to compare"),
    ("entry-keys", {"title": "x", "runs": [{"name": "a", "file": CEPH_EXPERIMENT},
                                           "b", GOOD[1]]},
     "invalid suite {suite}: runs[0] (a): unknown key 'file'; runs[0] (a): missing key "
     "'experiment'; runs[1] must be an object with 'name' and 'experiment'"),
    ("same-name", {"title": "x", "runs": GOOD + GOOD[:1]},
     "invalid suite {suite}: runs[2] (a): the name 'a' is used twice"),
    ("missing-file", {"title": "x", "runs": _entries(("a", "experiments/nope.json"),
                                                       ("b", CEPH_EXPERIMENT))},
     "invalid suite {suite}: runs[0] (a): experiment file experiments/nope.json does not "
     "exist (relative paths are taken from the current directory, {repo})"),
    ("bad-experiments", {"title": "x", "runs": _entries(
        ("rate", "{tmp}/bad-rate.json"), ("control", "{tmp}/no-control.json"),
        ("invalid", "{tmp}/not-experiment.json"))},
     "invalid suite {suite}: runs[0] (rate): {tmp}/bad-rate.json: invalid workload: rate "
     "must be > 0, not -5; runs[1] (control): {tmp}/no-control.json declares no "
     "service.control control, so Faultline would record nothing; runs[2] (invalid): "
     "{tmp}/not-experiment.json is not a valid experiment: {invalid}"),
    ("unknown-cluster", {"title": "x", "runs": [GOOD[0], {**GOOD[1], "cluster": "lab-nope"}]},
     "invalid suite {suite}: runs[1] (b): unknown cluster 'lab-nope' (known: lab-ceph, "
     "lab-swift)"),
    ("bad-shares", {"title": "x", "workload": {"rate": "0%"}, "runs": GOOD,
                    "calibration": {"stage_s": 1}, "tail_s": -1},
     "invalid suite {suite}: invalid calibration: stage length must be 3 to 600 s, not 1; "
     "invalid tail_s -1: expected seconds from 0 to 3600; "
     "runs[0] (a): experiments/ceph-kill-osd.json: invalid workload: rate must be ops/s or a "
     "share of the calibrated capacity from 0% to 500% (e.g. \"50%\"), not '0%'; runs[1] (b): "
     "experiments/ceph-kill-osd.json: invalid workload: rate must be ops/s or a share of the "
     "calibrated capacity from 0% to 500% (e.g. \"50%\"), not '0%'"),
    ("bad-trials", {"title": "x", "runs": [{**GOOD[0], "trials": 0}, {**GOOD[1], "trials": "3"}]},
     "invalid suite {suite}: runs[0] (a): 'trials' must be a whole number from 1 to 50, not 0; "
     "runs[1] (b): 'trials' must be a whole number from 1 to 50, not '3'"),
]


@pytest.mark.parametrize(("name", "content", "message"), SUITE_CASES,
                         ids=[c[0] for c in SUITE_CASES])
def test_a_bad_suite_is_refused_with_one_message_and_nothing_runs(
        name, content, message, suite_dir, database_url, monkeypatch):
    ran = []
    monkeypatch.setattr(launch, "run", lambda *args: ran.append(args))
    suite = suite_dir / f"{name}.json"
    text = content if isinstance(content, str) else json.dumps(content)
    suite.write_text(text.replace("{tmp}", str(suite_dir)))
    try:
        documents.load(suite_dir / "not-experiment.json")
    except documents.ExperimentError as exc:
        invalid = str(exc).split("is not a valid experiment: ", 1)[1]
    before = _run_count(database_url)

    result = CliRunner().invoke(main, ["suite", str(suite), "--inventory",
                                       str(suite_dir / "inventory.json")],
                                env={"DATABASE_URL": database_url})

    assert result.exit_code == 2
    assert result.stderr.strip() == "error: " + message.format(
        suite=suite, repo=REPO, tmp=suite_dir, invalid=invalid)
    assert ran == []
    assert _run_count(database_url) == before


def test_a_missing_suite_file_is_refused(suite_dir, database_url):
    result = CliRunner().invoke(main, ["suite", "suites/absent.json"],
                                env={"DATABASE_URL": database_url})

    assert result.exit_code == 2
    assert result.stderr.strip() == "error: suite file suites/absent.json does not exist"


def test_a_suite_without_an_inventory_is_refused(suite_dir, database_url):
    suite = suite_dir / "suite.json"
    suite.write_text(json.dumps({"title": "x", "runs": GOOD}))

    result = CliRunner().invoke(main, ["suite", str(suite), "--inventory",
                                       str(suite_dir / "absent.yaml")],
                                env={"DATABASE_URL": database_url})

    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"error: invalid suite {suite}: inventory {suite_dir / 'absent.yaml'} does not exist "
        "(run `faultline lab up` or set FAULTLINE_INVENTORY)")


def test_a_failed_run_still_appears_in_the_suite_comparison_and_fails_the_suite(
        suite_dir, database_url, sessions, made, monkeypatch):
    # A stand-in for the lab: the first experiment records a run, the second cannot start.
    calls = []

    def run(path, cluster, inventory):
        calls.append((path, cluster, inventory))
        if len(calls) == 2:
            raise NodeUnreachable("node n1 (10.0.0.2:22) is unreachable")
        with sessions() as session:
            made.append(make_run(session, figures=figures(baseline_ops=100.0)).id)
        return {"status": "completed", "faultline_run_id": made[-1]}

    monkeypatch.setattr(launch, "run", run)
    suite = suite_dir / "suite.json"
    inventory = str(suite_dir / "inventory.json")
    suite.write_text(json.dumps({"title": "Kill one process", "runs": [
        GOOD[0], {"name": "swift", "experiment": CEPH_EXPERIMENT, "cluster": "lab-swift"}]}))

    result = CliRunner().invoke(main, ["suite", str(suite), "--inventory", inventory,
                                       "--json"], env={"DATABASE_URL": database_url})

    assert result.exit_code == 1, result.output
    assert calls == [(CEPH_EXPERIMENT, "lab-ceph", inventory),
                     (CEPH_EXPERIMENT, "lab-swift", inventory)]
    data = json.loads(result.stdout)
    assert data["ok"] is False
    assert data["runs"][1] == {"name": "swift", "trial": 1, "trials": 1,
                               "experiment": CEPH_EXPERIMENT,
                               "cluster": "lab-swift", "run_id": None, "status": "failed",
                               "error": "node n1 (10.0.0.2:22) is unreachable"}
    comparison = data["comparison"]
    assert comparison["run_ids"] == [made[0], None]
    assert [r["name"] for r in comparison["runs"]] == ["a", "swift"]
    assert comparison["table"]["baseline_ops"] == [
        {"value": 100.0, "reason": None},
        {"value": None, "reason": "the experiment failed before Faultline recorded a run"}]
    assert comparison["caveats"][-1] == (
        "swift (no run recorded) did not complete (status failed): node n1 (10.0.0.2:22) is "
        "unreachable; its figures may be missing or incomplete.")


def _run_count(url: str) -> int:
    with db.session_factory(url)() as session:
        return session.execute(select(func.count(Run.id))).scalar_one()


def test_a_suite_entry_with_trials_runs_them_settled_in_between_as_one_group(
        suite_dir, sessions, made, monkeypatch):
    # stand-ins for the lab: each run recorded, the settling between trials noted
    calls, settled = [], []

    def run(path, cluster, inventory):
        calls.append(cluster)
        with sessions() as session:
            made.append(make_run(session, figures=figures(
                baseline_ops=100.0 + len(calls), time_to_detect_s=1.0 * len(calls))).id)
        return {"status": "completed", "faultline_run_id": made[-1]}

    suite = suite_dir / "trials.json"
    suite.write_text(json.dumps({"title": "trials", "runs": [
        {**GOOD[0], "trials": 3}, {**GOOD[1], "cluster": "lab-swift"}]}))
    loaded = load_suite(suite, suite_dir / "inventory.json")
    result = run_suite(loaded, sessions, runner=run,
                       settle=lambda cluster, inventory: settled.append(cluster))

    assert calls == ["lab-ceph"] * 3 + ["lab-swift"]
    assert settled == ["lab-ceph", "lab-ceph"]  # between trials, not before the first
    assert [(o["name"], o["trial"], o["trials"]) for o in result["runs"]] == [
        ("a", 1, 3), ("a", 2, 3), ("a", 3, 3), ("b", 1, 1)]
    with sessions() as session:
        rows = [session.get(Run, o["run_id"]) for o in result["runs"]]
        assert len({r.trial_group for r in rows[:3]}) == 1 and rows[0].trial_group
        assert [(r.trial_index, r.trials) for r in rows] == [(1, 3), (2, 3), (3, 3),
                                                             (None, None)]
    groups = result["comparison"]["trials"]["groups"]
    assert [g["run_ids"] for g in groups] == [made[:3], made[3:]]
    assert groups[0]["figures"]["time_to_detect_s"]["median"] == 2.0


def test_a_suite_whose_cluster_does_not_settle_stops_that_entry_saying_why(
        suite_dir, sessions, made):
    def run(path, cluster, inventory):
        with sessions() as session:
            made.append(make_run(session, figures=figures(baseline_ops=100.0)).id)
        return {"status": "completed", "faultline_run_id": made[-1]}

    suite = suite_dir / "trials.json"
    suite.write_text(json.dumps({"title": "trials", "runs": [{**GOOD[0], "trials": 3},
                                                              GOOD[1]]}))
    result = run_suite(load_suite(suite, suite_dir / "inventory.json"), sessions, runner=run,
                       settle=lambda cluster, inventory: "lab-ceph was not healthy")

    assert [(o["name"], o["trial"], o["run_id"] is None) for o in result["runs"]] == [
        ("a", 1, False), ("a", 2, True), ("b", 1, False)]
    assert result["runs"][1]["error"] == "trial 2 not run: lab-ceph was not healthy"
    assert result["ok"] is False


def _ctrl_c_in_run(sessions, made, calls, at_call: int):
    """A runner standing in for chaoslib's part: the run numbered `at_call` gets a Ctrl-C,
    which ends it interrupted."""
    import os
    import signal

    def run(path, cluster, inventory):
        calls.append(cluster)
        status = "interrupted" if len(calls) == at_call else "completed"  # as the control
        with sessions() as session:                                        # records it
            made.append(make_run(session, status=status,
                                 figures=figures(baseline_ops=100.0)).id)
        if len(calls) == at_call:
            try:
                os.kill(os.getpid(), signal.SIGINT)
                signal.sigtimedwait([], 0)
            except KeyboardInterrupt:
                return {"status": "interrupted", "faultline_run_id": made[-1]}
        return {"status": "completed", "faultline_run_id": made[-1]}
    return run


def test_a_ctrl_c_during_a_suite_run_interrupts_it_and_starts_no_other(
        suite_dir, sessions, made, python_sigint):
    from service.cli.ctrl_c import REASON, StopOnCtrlC

    calls = []
    run = _ctrl_c_in_run(sessions, made, calls, at_call=1)

    suite = suite_dir / "trials.json"
    suite.write_text(json.dumps({"title": "trials", "runs": [{**GOOD[0], "trials": 3},
                                                              GOOD[1]]}))
    settled = []
    with StopOnCtrlC() as ctrl_c:
        result = run_suite(load_suite(suite, suite_dir / "inventory.json"), sessions,
                           runner=run, settle=lambda c, i: settled.append(c),
                           stopped=ctrl_c.reason)

    assert calls == ["lab-ceph"] and settled == []
    assert [(o["name"], o["trial"], o["run_id"] is None, o["status"], o["error"])
            for o in result["runs"]] == [
        ("a", 1, False, "interrupted", None),
        ("a", 2, True, "not run", f"trial 2 not run: {REASON}"),
        ("b", 1, True, "not run", f"trial 1 not run: {REASON}")]
    assert result["ok"] is False
    # what never started is not compared (no "different faults" against nothing): one run
    # is left, and one run is no comparison
    assert result["comparison"] is None


def test_a_suite_stopped_by_ctrl_c_compares_the_runs_it_made(suite_dir, sessions, made,
                                                             python_sigint):
    from service.cli.ctrl_c import StopOnCtrlC

    calls = []
    suite = suite_dir / "three.json"
    suite.write_text(json.dumps({"title": "three", "runs": [
        *GOOD, {"name": "c", "experiment": CEPH_EXPERIMENT, "cluster": "lab-ceph"}]}))
    with StopOnCtrlC() as ctrl_c:
        result = run_suite(load_suite(suite, suite_dir / "inventory.json"), sessions,
                           runner=_ctrl_c_in_run(sessions, made, calls, at_call=2),
                           stopped=ctrl_c.reason)

    assert len(calls) == 2
    assert [o["status"] for o in result["runs"]] == ["completed", "interrupted", "not run"]
    assert result["comparison"]["run_ids"] == made[-2:]


def test_a_schedule_refuses_a_suite_with_trials_rather_than_run_each_entry_once(suite_dir):
    suite = suite_dir / "trials.json"
    suite.write_text(json.dumps({"title": "trials", "runs": [{**GOOD[0], "trials": 3},
                                                              GOOD[1]]}))
    with pytest.raises(ScheduleError, match=r"a scheduled suite runs each entry once; a asks "
                                            r"for trials: run that suite with `faultline suite`"):
        schedule_check({"name": "nightly", "cron": "0 2 * * *", "timezone": "UTC",
                        "suite_path": str(suite)}, str(suite_dir / "inventory.json"))


def test_a_suite_sets_every_entry_s_workload_and_calibration_and_a_schedule_refuses_the_latter(
        suite_dir):
    suite = suite_dir / "shares.json"
    suite.write_text(json.dumps({"title": "shares", "workload": {"rate": "10%"},
                                 "calibration": {"stage_s": 5, "max_in_flight": 16},
                                 "tail_s": 5, "runs": GOOD}))
    loaded = load_suite(suite, suite_dir / "inventory.json")

    assert [r.workload["rate"] for r in loaded.runs] == ["10%", "10%"]
    document = loaded.document(CEPH_EXPERIMENT)
    arguments = documents.faultline_control(document)["provider"]["arguments"]
    assert arguments["workload"]["rate"] == "10%"
    assert arguments["workload"]["baseline_s"] == 20  # the file's own fields stay
    assert arguments["calibration"] == {"stage_s": 5, "max_in_flight": 16}
    assert arguments["tail_s"] == 5  # the file's 15 s replaced
    with pytest.raises(ScheduleError, match=r"a scheduled suite cannot set how calibrations "
                                            r"are made \('calibration'\)"):
        schedule_check({"name": "nightly", "cron": "0 2 * * *", "timezone": "UTC",
                        "suite_path": str(suite)}, str(suite_dir / "inventory.json"))
