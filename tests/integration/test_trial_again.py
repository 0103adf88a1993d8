"""A trial whose baseline did not hold (its run invalid, nothing injected) is run once more
after the cluster settles; the invalid run stays in the group, and a second invalid run
of the same trial is the trial's outcome (service.experiments.repeats), on PostgreSQL."""

from __future__ import annotations

from factories import make_run

from service.experiments.repeats import final, repeat
from service.store.models import Run


def _runner(sessions, statuses: list[str], made: list[int]):
    """run_once that records a run of each status in turn, its id into `made`."""
    def run_once():
        with sessions() as session:
            run = make_run(session, title="trial again", status=statuses[len(made)])
            made.append(run.id)
        return made[-1], None
    return run_once


def test_an_invalid_trial_is_run_again_once_and_both_runs_are_in_the_group(sessions, made):
    run_once = _runner(sessions, ["completed", "invalid", "completed", "completed"], made)
    settles = []
    group, outcomes = repeat(sessions, 3, "lab-ceph", "inv", run_once,
                             lambda c, i: settles.append(c), "again")
    assert len(made) == 4
    assert [(o["trial"], o["run_id"], bool(o.get("superseded"))) for o in outcomes] == [
        (1, made[0], False), (2, made[1], True), (2, made[2], False), (3, made[3], False)]
    assert outcomes[2]["again"] == made[1]
    assert [o["run_id"] for o in final(outcomes)] == [made[0], made[2], made[3]]
    assert len(settles) == 3  # before trial 2, before its second run, before trial 3
    with sessions() as session:
        stamped = [(r.trial_group, r.trial_index) for r in
                   (session.get(Run, run_id) for run_id in made)]
    assert stamped == [(group, 1), (group, 2), (group, 2), (group, 3)]


def test_a_trial_invalid_twice_keeps_its_invalid_outcome(sessions, made):
    run_once = _runner(sessions, ["invalid", "invalid", "completed", "completed"], made)
    _, outcomes = repeat(sessions, 2, "lab-ceph", "inv", run_once, lambda c, i: None, "again")
    assert [o["run_id"] for o in final(outcomes)] == [made[1], made[2]]
    with sessions() as session:
        assert session.get(Run, final(outcomes)[0]["run_id"]).status == "invalid"


def test_a_single_run_is_not_run_again(sessions, made):
    run_once = _runner(sessions, ["invalid", "completed"], made)
    group, outcomes = repeat(sessions, 1, "lab-ceph", "inv", run_once, None, "again")
    assert group is None and len(made) == 1 and final(outcomes) == outcomes
