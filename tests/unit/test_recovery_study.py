"""The recovery-profile study's table: runs grouped by the settings they stored, medians
and ranges over the trials, and what was left out said."""

from service.results.recovery_study import StudyRun, caveats, format_table, label_of, study


def settings(queue="mclock_scheduler", profile="balanced", backfills="1", override="false"):
    return {"settings": [
        {"name": "osd_op_queue", "value": queue},
        {"name": "osd_mclock_profile", "value": profile},
        {"name": "osd_max_backfills", "value": backfills},
        {"name": "osd_mclock_override_recovery_settings", "value": override}]}


def run(run_id, profile, recovery_s, ops, p99, status="completed"):
    return StudyRun(run_id, status, {"recovery_s": recovery_s, "recovery_ops_ratio": ops,
                                     "recovery_p99_ratio": p99,
                                     "time_to_full_redundancy_s": recovery_s + 40,
                                     "reasons": {"recovery_s": "no recovery was seen"}},
                    settings(profile=profile))


def test_runs_are_grouped_by_the_settings_they_stored_with_medians_and_ranges():
    groups = study([run(1, "high_client_ops", 120.0, 0.9, 1.5),
                    run(2, "high_recovery_ops", 60.0, 0.5, 4.0),
                    run(3, "high_client_ops", 130.0, 0.8, 1.7),
                    run(4, "high_client_ops", 110.0, 0.85, 1.6),
                    run(5, "high_recovery_ops", 0.0, 0.0, 0.0, status="invalid")])

    first, second = groups
    assert (first.label, first.run_ids) == ("mClock high_client_ops", [1, 3, 4])
    spread = first.spreads["recovery_s"]
    assert (spread.median, spread.low, spread.high, spread.n) == (120.0, 110.0, 130.0, 3)
    assert second.left_out == ["run 5: invalid"]
    table = format_table(groups)
    assert "| mClock high_client_ops | 3 | 120.0 (110.0-130.0) | 0.85 (0.80-0.90) |" in table
    assert "| mClock high_recovery_ops | 1 | 60.0 (1 run) |" in table
    assert "- mClock high_recovery_ops: run 5: invalid" in table


def test_a_run_without_a_recovery_figure_is_said_with_its_reason():
    (group,) = study([StudyRun(7, "completed", {"recovery_s": None, "reasons": {
        "recovery_s": "no recovery was seen"}}, settings())])

    assert group.spreads["recovery_s"] is None
    assert group.left_out == ["run 7: no recovery figure (no recovery was seen)"]


def test_labels_say_the_scheduler_and_what_it_lets_change():
    assert label_of({"osd_op_queue": "wpq", "osd_max_backfills": "3"}) == (
        "WPQ, osd_max_backfills 3")
    assert label_of({"osd_op_queue": "mclock_scheduler", "osd_mclock_profile": "custom",
                     "osd_max_backfills": "4",
                     "osd_mclock_override_recovery_settings": "true"}) == (
        "mClock custom, osd_max_backfills 4")
    assert label_of({}) == "settings not recorded"
    assert label_of({"concurrency": "1", "handoffs_first": "false"}) == (
        "replicator concurrency 1")
    assert label_of({"concurrency": "4", "handoffs_first": "true"}) == (
        "replicator concurrency 4, handoffs first")


def test_the_rebuild_rate_sets_recoveries_of_different_amounts_side_by_side():
    slow_but_big = StudyRun(1, "completed", {"recovery_s": 400.0, "recovery_objects": 40_000},
                            settings(profile="balanced"))
    fast_but_small = StudyRun(2, "completed", {"recovery_s": 100.0,
                                               "recovery_objects": 10_000},
                              settings(profile="high_client_ops"))

    first, second = study([slow_but_big, fast_but_small])

    assert first.spreads["rebuilt_per_s"].median == second.spreads["rebuilt_per_s"].median == 100
    assert "| 40,000 (1 run) | 100 (1 run) |" in format_table([first])


def test_recoveries_of_very_different_amounts_are_said_not_to_compare_by_time():
    (group,) = study([StudyRun(1, "completed", {"recovery_s": 4.0, "recovery_objects": 664},
                               settings()),
                      StudyRun(2, "completed", {"recovery_s": 388.0,
                                                "recovery_objects": 37_798}, settings())])

    (caveat,) = caveats([group])
    assert caveat.startswith("the runs rebuilt between 664 and 37,798 objects (57x)")
    assert "Caveats:\n- the runs rebuilt between 664" in format_table([group])
    assert caveats(study([run(3, "balanced", 100.0, 0.9, 1.0)])) == []  # no amount known
