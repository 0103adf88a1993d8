"""`faultline run`, `runs`, `report`, `compare`, `recovery-study`, `suite`, `verify`, `clean`:
experiments and their runs from the command line."""

from __future__ import annotations

import json
import logging
import sys

import click
from sqlalchemy import select

from service.experiments import documents
from service.experiments import suites as suite
from service.experiments.repeats import MAX_TRIALS, final
from service.results import comparison as compare
from service.results import figures, recovery_study
from service.results.report import format_report, report_dict
from service.runs import launch, trials
from service.runs.audit import clean, reverify
from service.store import db
from service.store.models import Run

from .ctrl_c import REASON, StopOnCtrlC
from .dead_runs import close_dead_runs
from .faults import heal_orphans
from .group import USER_ERRORS, fail


@click.command("run")
@click.argument("experiment", type=click.Path())
@click.option("--cluster", help="Cluster name in the inventory (default: lab-ceph).")
@click.option("--inventory", help="Inventory file (default: the lab's).")
@click.option("--trials", type=click.IntRange(1, MAX_TRIALS), default=1,
              show_default=True, help="Repeat the experiment, healing and waiting for health "
              "in between; the runs are one group, compared with their spread.")
def run_cmd(experiment: str, cluster: str | None, inventory: str | None,
            trials: int) -> None:
    """Run an experiment file through Chaos Toolkit with the Faultline control."""
    documents.load(experiment)  # a bad file changes nothing, not even a heal
    close_dead_runs("faultline run")
    heal_orphans([documents.target_cluster(cluster)], inventory)
    log_to_terminal()
    if trials > 1:
        sys.exit(run_trials(experiment, cluster, inventory, trials))
    try:
        journal = launch.run(experiment, cluster, inventory)
    except USER_ERRORS as exc:
        fail(str(exc))
    run_id = journal.get("faultline_run_id")
    if run_id is None:
        fail(f"the experiment ended {journal.get('status')} before Faultline started a run")
    data = print_report(run_id, as_json=False)
    click.echo(f"\nRun page: `faultline serve`, then http://127.0.0.1:8080/runs/{run_id}")
    sys.exit(0 if data["status"] == "completed" else 1)


def run_trials(experiment: str, cluster: str | None, inventory: str | None,
               count: int) -> int:
    """The trials, then their comparison with each figure's spread; the exit status."""
    try:
        result = trials.run_trials(db.session_factory(), experiment, cluster, inventory, count)
    except USER_ERRORS as exc:
        fail(str(exc))
    click.echo(f"\nTrials of {experiment} on {result['cluster']} "
               f"(group {result['trial_group']}):")
    for t in result["trials"]:
        what = f"run {t['run_id']}" if t["run_id"] is not None else "no run recorded"
        if t.get("superseded"):
            what += " (its baseline did not hold: run again)"
        click.echo(f"  trial {t['trial']}: {what}" + (f" ({t['error']})" if t["error"] else ""))
    run_ids = [t["run_id"] for t in result["trials"] if t["run_id"] is not None]
    last = [t["run_id"] for t in final(result["trials"])]
    with db.session_factory()() as session:
        statuses = {r.id: r.status for r in session.execute(
            select(Run).where(Run.id.in_(run_ids))).scalars()}
        if len(run_ids) >= 2:
            click.echo("")
            click.echo(compare.format_comparison(compare.compare(session, run_ids)))
    done = len(last) == count and all(statuses.get(r) == "completed" for r in last)
    return 0 if done else 1


@click.command("runs")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--limit", default=50, show_default=True)
def runs_cmd(as_json: bool, limit: int) -> None:
    """List recent runs (a run whose process died is marked interrupted first)."""
    close_dead_runs("faultline runs")
    with db.session_factory()() as session:
        runs = session.execute(select(Run).order_by(Run.id.desc()).limit(limit)).scalars().all()
        rows = [{"run_id": r.id, "title": r.title, "cluster": r.cluster, "status": r.status,
                 "started_at": r.started_at.isoformat(),
                 "lost_objects": (r.figures or {}).get("lost_objects")} for r in runs]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        click.echo(f"{r['run_id']:>5}  {r['started_at'][:19]}  {r['status']:<11} "
                   f"{r['cluster']:<12} {r['title']}")


@click.command("report")
@click.argument("run_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def report_cmd(run_id: int, as_json: bool) -> None:
    """Print a run's figures."""
    try:
        print_report(run_id, as_json)
    except figures.RunNotFound as exc:
        fail(str(exc))


@click.command("compare")
@click.argument("run_ids", nargs=-1, type=int)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def compare_cmd(run_ids: tuple[int, ...], as_json: bool) -> None:
    """Put two or more runs side by side: figures, caveats, and why a figure is n/a."""
    with db.session_factory()() as session:
        data = compare.compare(session, list(run_ids))
    click.echo(json.dumps(data, indent=2) if as_json else compare.format_comparison(data))


@click.command("recovery-study")
@click.argument("run_ids", nargs=-1, type=int, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def recovery_study_cmd(run_ids: tuple[int, ...], as_json: bool) -> None:
    """Group runs by the recovery settings they met their fault under (e.g. the runs of
    experiments/suites/recovery-profiles.json) and give, per group, the recovery's length
    and the clients' throughput and p99 during it against their baseline: medians and
    ranges over the trials."""
    ids = list(dict.fromkeys(run_ids))
    try:
        with db.session_factory()() as session:
            groups = recovery_study.study(recovery_study.load(session, ids))
    except figures.RunNotFound as exc:
        fail(str(exc))
    if as_json:
        click.echo(json.dumps([g.as_dict() for g in groups], indent=2))
    else:
        click.echo(recovery_study.format_table(groups))
        click.echo(f"\nThe chart: /studies/recovery?runs={','.join(map(str, ids))} on the "
                   "dashboard")


@click.command("suite")
@click.argument("suite_file", type=click.Path())
@click.option("--inventory", help="Inventory file (default: the lab's).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def suite_cmd(suite_file: str, inventory: str | None, as_json: bool) -> None:
    """Run a suite's experiments one after the other, then compare their runs.

    Exits 1 if any run did not complete (after printing the comparison).
    """
    loaded = suite.load_suite(suite_file, inventory)  # every problem before anything runs
    close_dead_runs("faultline suite")
    heal_orphans([item.cluster for item in loaded.runs], loaded.inventory)
    log_to_terminal()
    sessions = db.session_factory()
    with StopOnCtrlC() as ctrl_c:
        try:
            result = suite.run_suite(
                loaded, sessions, launch.for_suite(loaded),
                settle=lambda cluster, inv: trials.settle(sessions, cluster, inv),
                stopped=ctrl_c.reason)
        except KeyboardInterrupt:  # outside the experiment chaoslib interrupts with rollbacks
            fail(f"{REASON} between two runs' experiments; `faultline runs` lists the runs "
                 "it made")
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(f"\nSuite: {result['title']}")
        for o in result["runs"]:
            outcome = f"run {o['run_id']}" if o["run_id"] is not None else "no run recorded"
            trial = f" trial {o['trial']} of {o['trials']}" if o["trials"] > 1 else ""
            again = " (its baseline did not hold: run again)" if o.get("superseded") else ""
            click.echo(f"  {o['name']}{trial}: {outcome}, {o['status']}{again}"
                       + (f" ({o['error']})" if o["error"] else ""))
        click.echo("")
        if result["comparison"] is not None:
            click.echo(compare.format_comparison(result["comparison"]))
    sys.exit(0 if result["ok"] else 1)


@click.command("verify")
@click.argument("run_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def verify_cmd(run_id: int, as_json: bool) -> None:
    """Read back every object a run acknowledged; exit 1 if any is missing or corrupt."""
    try:
        result = reverify(run_id)
    except USER_ERRORS as exc:
        fail(str(exc))
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2))
    else:
        click.echo(f"run {run_id}: {result.checked} objects checked, {len(result.missing)} "
                   f"missing, {len(result.corrupt)} corrupt, {len(result.unreadable)} unreadable")
        for name in result.missing[:20]:
            click.echo(f"  missing: {name}")
    sys.exit(0 if result.ok else 1)


@click.command("clean")
@click.argument("run_ids", metavar="RUN_ID...", type=int, nargs=-1, required=True)
@click.option("--inventory", help="Inventory file (default: the lab's).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def clean_cmd(run_ids: tuple[int, ...], inventory: str | None, as_json: bool) -> None:
    """Delete from the cluster the objects these runs acknowledged; their figures stay.
    Exit 1 if a delete failed (run it again to retry those)."""
    done: dict[int, dict] = {}
    for run_id in run_ids:
        try:
            done[run_id] = clean(run_id, inventory)
        except USER_ERRORS as exc:
            if as_json:
                click.echo(json.dumps({str(k): v for k, v in done.items()}, indent=2))
            fail(str(exc))
        if not as_json:
            r = done[run_id]
            click.echo(f"run {run_id}: {r['deleted']} of {r['objects']} objects deleted, "
                       f"{r['already_gone']} already gone, {r['failed']} failed")
            for name, error in list(r["failures"].items())[:20]:
                click.echo(f"  failed: {name} ({error})")
    if as_json:
        click.echo(json.dumps({str(k): v for k, v in done.items()}, indent=2))
    sys.exit(0 if all(r["failed"] == 0 for r in done.values()) else 1)


def print_report(run_id: int, as_json: bool) -> dict:
    with db.session_factory()() as session:
        data = report_dict(figures.get_run(session, run_id))
    click.echo(json.dumps(data, indent=2) if as_json else format_report(data))
    return data


def log_to_terminal() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("[%(asctime)s %(levelname)s] %(message)s",
                                           "%H:%M:%S"))
    logger = logging.getLogger("chaostoolkit")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
