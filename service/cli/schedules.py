"""`faultline schedule ...`: nightly (or any cron) runs from the command line."""

from __future__ import annotations

import json

import click

from service.schedules import services as schedules
from service.store import db


@click.group("schedule")
def schedule_group() -> None:
    """Schedules: a cron expression in a time zone, an experiment or a suite, clusters."""


@schedule_group.command("add")
@click.argument("name")
@click.option("--cron", required=True, help='Cron expression, e.g. "0 2 * * *".')
@click.option("--tz", "timezone", default="UTC", show_default=True, help="IANA time zone.")
@click.option("--experiment", help="Experiment file (with one or more --cluster).")
@click.option("--cluster", "clusters", multiple=True, help="Cluster for the experiment.")
@click.option("--suite", help="Suite file (it names its clusters).")
@click.option("--workload", default="{}", help="Workload fields to override, as JSON.")
@click.option("--inventory", help="Inventory file (default: the lab's).")
def add_cmd(name, cron, timezone, experiment, clusters, suite, workload, inventory) -> None:
    """Add a schedule; print its id and when it runs next."""
    try:
        overrides = json.loads(workload)
    except json.JSONDecodeError as exc:
        raise schedules.ScheduleError(f"--workload is not JSON: {exc}") from None
    sessions = db.session_factory()
    schedule_id = schedules.create(sessions, name=name, cron=cron, timezone=timezone,
                                   experiment=experiment, suite=suite, clusters=list(clusters),
                                   workload=overrides, created_by="cli", inventory=inventory)
    with sessions() as session:
        shown = schedules.describe(schedules.get(session, schedule_id))
    click.echo(f"schedule {schedule_id} ({name}): next run at {shown['next_run_at']}")


@schedule_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_cmd(as_json: bool) -> None:
    """List the schedules and when each runs next."""
    with db.session_factory()() as session:
        rows = [schedules.describe(s) for s in schedules.all_schedules(session)]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        what = r["suite"] or f"{r['experiment']} on {', '.join(r['clusters'])}"
        state = f"next {r['next_run_at'][:16]}" if r["enabled"] else "disabled"
        click.echo(f"{r['id']:>4}  {r['name']:<24} {r['cron']:<14} {r['timezone']:<16} "
                   f"{state:<22} {what}")


@schedule_group.command("remove")
@click.argument("schedule_id", type=int)
def remove_cmd(schedule_id: int) -> None:
    """Delete a schedule (its runs stay)."""
    schedules.delete(db.session_factory(), schedule_id)
    click.echo(f"schedule {schedule_id} removed")
