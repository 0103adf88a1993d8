"""The `faultline` command line: thin wrappers over the service's functions."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import click
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from clusters.exceptions import ClusterError
from lab.ceph_layout import LabError
from lab.disks import DiskError
from lab.procs import DaemonError
from loadgen.exceptions import LoadError

from . import (
    cli_accounts,
    cli_monitoring,
    cli_queue,
    cli_schedules,
    compare,
    db,
    experiments,
    figures,
    heal,
    run_queue,
    schedules,
    suite,
)
from .accounts.exceptions import AccountError
from .cluster_lock import ClusterBusy
from .models import Run
from .pgserver import DatabaseSetupError
from .preflight import PreflightError
from .report import format_report, report_dict

USER_ERRORS = (ClusterError, LoadError, experiments.ExperimentError, figures.RunNotFound,
               PreflightError, compare.CompareError, suite.SuiteError, run_queue.QueueError,
               ClusterBusy, schedules.ScheduleError, schedules.ScheduleNotFound,
               AccountError)
# Errors of the machine or the lab: one clear line too, never a traceback.
SETUP_ERRORS = (LabError, DaemonError, DiskError, DatabaseSetupError, PermissionError,
                subprocess.CalledProcessError, subprocess.TimeoutExpired)


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


class FaultlineGroup(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except USER_ERRORS + SETUP_ERRORS as exc:
            _fail(str(exc))
        except OperationalError as exc:
            _fail(f"cannot use the database: {str(exc.orig).strip().splitlines()[0]}")


@click.group(cls=FaultlineGroup)
def main() -> None:
    """Faultline: chaos and degraded-mode testing for Ceph and Swift."""


for command in (cli_queue.worker_cmd, cli_queue.enqueue_cmd, cli_queue.cancel_cmd,
                cli_schedules.schedule_group, cli_accounts.user_group,
                cli_accounts.token_group, cli_monitoring.monitoring_group):
    main.add_command(command)


@main.command("run")
@click.argument("experiment", type=click.Path())
@click.option("--cluster", help="Cluster name in the inventory (default: lab-ceph).")
@click.option("--inventory", help="Inventory file (default: the lab's).")
def run_cmd(experiment: str, cluster: str | None, inventory: str | None) -> None:
    """Run an experiment file through Chaos Toolkit with the Faultline control."""
    experiments.load(experiment)  # a bad file changes nothing, not even a heal
    _heal_orphans([experiments.target_cluster(cluster)], inventory)
    _log_to_terminal()
    try:
        journal = experiments.run(experiment, cluster, inventory)
    except USER_ERRORS as exc:
        _fail(str(exc))
    run_id = journal.get("faultline_run_id")
    if run_id is None:
        _fail(f"the experiment ended {journal.get('status')} before Faultline started a run")
    data = _print_report(run_id, as_json=False)
    click.echo(f"\nRun page: `faultline serve`, then http://127.0.0.1:8080/runs/{run_id}")
    sys.exit(0 if data["status"] == "completed" else 1)


@main.command("runs")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--limit", default=50, show_default=True)
def runs_cmd(as_json: bool, limit: int) -> None:
    """List recent runs."""
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


@main.command("report")
@click.argument("run_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def report_cmd(run_id: int, as_json: bool) -> None:
    """Print a run's figures."""
    try:
        _print_report(run_id, as_json)
    except figures.RunNotFound as exc:
        _fail(str(exc))


@main.command("compare")
@click.argument("run_ids", nargs=-1, type=int)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def compare_cmd(run_ids: tuple[int, ...], as_json: bool) -> None:
    """Put two or more runs side by side: figures, caveats, and why a figure is n/a."""
    with db.session_factory()() as session:
        data = compare.compare(session, list(run_ids))
    click.echo(json.dumps(data, indent=2) if as_json else compare.format_comparison(data))


@main.command("suite")
@click.argument("suite_file", type=click.Path())
@click.option("--inventory", help="Inventory file (default: the lab's).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def suite_cmd(suite_file: str, inventory: str | None, as_json: bool) -> None:
    """Run a suite's experiments one after the other, then compare their runs.

    Exits 1 if any run did not complete (after printing the comparison).
    """
    loaded = suite.load_suite(suite_file, inventory)  # every problem before anything runs
    _heal_orphans([item.cluster for item in loaded.runs], loaded.inventory)
    _log_to_terminal()
    result = suite.run_suite(loaded, db.session_factory())
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(f"\nSuite: {result['title']}")
        for o in result["runs"]:
            outcome = f"run {o['run_id']}" if o["run_id"] is not None else "no run recorded"
            click.echo(f"  {o['name']}: {outcome}, {o['status']}"
                       + (f" ({o['error']})" if o["error"] else ""))
        click.echo("")
        click.echo(compare.format_comparison(result["comparison"]))
    sys.exit(0 if result["ok"] else 1)


@main.command("verify")
@click.argument("run_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def verify_cmd(run_id: int, as_json: bool) -> None:
    """Read back every object a run acknowledged; exit 1 if any is missing or corrupt."""
    from .audit import reverify

    try:
        result = reverify(run_id)
    except USER_ERRORS as exc:
        _fail(str(exc))
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2))
    else:
        click.echo(f"run {run_id}: {result.checked} objects checked, {len(result.missing)} "
                   f"missing, {len(result.corrupt)} corrupt, {len(result.unreadable)} unreadable")
        for name in result.missing[:20]:
            click.echo(f"  missing: {name}")
    sys.exit(0 if result.ok else 1)


@main.command("faults")
@click.option("--cluster", help="Only this cluster's faults (default: every cluster).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def faults_cmd(cluster: str | None, as_json: bool) -> None:
    """List the faults injected and not restored yet (the database's fault ledger, then this
    machine's ledger file), with their age and whether the process that injected them runs."""
    rows = heal.outstanding_rows(db.session_factory(), cluster)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no outstanding fault")
    owner = {True: "running", False: "dead", None: "on another host"}
    for r in rows:
        run = f" (run {r['run_id']})" if r["run_id"] is not None else ""
        click.echo(f"{_age(r['age_s']):>6}  {r['cluster']:<12} {r['key']:<20} "
                   f"{r['description']}{run}; injected by pid {r['owner_pid']} on "
                   f"{r['owner_host']}, {owner[r['owner_alive']]}")


@main.command("heal")
@click.option("--cluster", help="Only this cluster's faults (default: every cluster).")
@click.option("--inventory", help="Inventory file (default: the lab's).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def heal_cmd(cluster: str | None, inventory: str | None, as_json: bool) -> None:
    """Restore every fault still in the fault ledger, newest first, whoever injected it.

    Covers the database's ledger, then this machine's ledger file. Exits 1 if any restore
    failed (that fault stays in the ledger).
    """
    results = heal.heal_everywhere(db.session_factory(), cluster, inventory)
    if as_json:
        click.echo(json.dumps(results, indent=2, default=str))
    elif not results:
        click.echo("no outstanding fault")
    else:
        for result in results:
            click.echo(heal.format_result(result))
    sys.exit(0 if all(r["restored"] for r in results) else 1)


@main.group("lab")
def lab_group() -> None:
    """The embedded lab: real clusters on this machine."""


SYSTEMS = ("ceph", "swift")


def _lab_module(system: str):
    from lab import ceph, swift

    return {"ceph": ceph, "swift": swift}[system]


def _systems(system: str) -> tuple[str, ...]:
    return SYSTEMS if system == "all" else (system,)


@lab_group.command("up")
@click.argument("system", type=click.Choice([*SYSTEMS, "all"]), default="all")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def lab_up(system: str, as_json: bool) -> None:
    """Start the lab (idempotent): Ceph (HEALTH_OK), Swift (PUT/GET through the proxy), or
    both; write them into the inventory."""
    infos = {name: _lab_module(name).up() for name in _systems(system)}
    if as_json:
        click.echo(json.dumps(infos, indent=2, default=str))
        return
    for name, info in infos.items():
        if name == "ceph":
            state = info["state"]
            click.echo(f"{info['cluster']} is up ({info['mode']} start, HEALTH_OK after "
                       f"{info['seconds_to_health_ok']} s): {state['num_up_osds']}/"
                       f"{state['num_osds']} OSDs up, {state['num_pgs']} PGs active+clean")
        else:
            click.echo(f"{info['cluster']} is up ({info['mode']} start, first PUT/GET through "
                       f"the proxy after {info['seconds_to_first_put_get']} s): "
                       f"{info['auth_url']}")
        click.echo(f"inventory: {info['inventory']}")


@lab_group.command("down")
@click.argument("system", type=click.Choice([*SYSTEMS, "all"]), default="all")
@click.option("--purge", is_flag=True, help="Also delete the lab's data.")
def lab_down(system: str, purge: bool) -> None:
    """Stop the lab and remove every process, mount, loop device and namespace."""
    problems = []
    for name in _systems(system):  # every lab goes down, whatever happened to the others
        try:
            result = _lab_module(name).down(purge=purge)
        except SETUP_ERRORS as exc:
            problems.append(f"the {name} lab could not be taken down: {exc}")
            continue
        left = {kind: items for kind, items in result["leftovers"].items() if items}
        if left:
            problems.append(f"the {name} lab left things behind: {left}")
            continue
        click.echo(f"{name} lab down in {result['seconds']} s"
                   f"{', data purged' if purge else ''}; nothing left behind")
    if problems:
        _fail("; ".join(problems))


@lab_group.command("status")
@click.argument("system", type=click.Choice([*SYSTEMS, "all"]), default="all")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def lab_status(system: str, as_json: bool) -> None:
    """Show the lab's daemons, disks and health; a daemon that is down says so."""
    statuses = {name: _lab_module(name).status() for name in _systems(system)}
    if as_json:
        click.echo(json.dumps(statuses, indent=2, default=str))
        return
    for name, status in statuses.items():
        click.echo(f"{name} lab ({status['home']}):")
        for daemon_name, daemon in status["daemons"].items():
            if daemon["alive"]:
                click.echo(f"  {daemon_name:<28} running  pid {daemon['pid']:<8} "
                           f"rss {(daemon['rss_bytes'] or 0) // 2**20} MiB")
            else:
                click.echo(f"  {daemon_name:<28} DOWN")
        for mount, mounted in status["mounts"].items():
            click.echo(f"  disk {mount}: {'mounted' if mounted else 'NOT MOUNTED'}")
        if name == "swift":
            click.echo(f"  proxy healthcheck: {'OK' if status['proxy_healthcheck'] else 'FAIL'}")
            continue
        health = status.get("health")
        if health is None:
            click.echo("  cluster: monitor not running")
        elif "error" in health:
            click.echo(f"  cluster: {health['error']}")
        else:
            click.echo(f"  cluster: {health['summary']}")


@main.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True)
@click.option("--workers", default=1, show_default=True, help="gunicorn worker processes")
@click.option("--threads", default=8, show_default=True, help="threads per worker")
def serve_cmd(host: str, port: int, workers: int, threads: int) -> None:
    """Serve the dashboard and the API (gunicorn)."""
    from .web.server import serve

    serve(host, port, workers, threads)


def _print_report(run_id: int, as_json: bool) -> dict:
    with db.session_factory()() as session:
        data = report_dict(figures.get_run(session, run_id))
    click.echo(json.dumps(data, indent=2) if as_json else format_report(data))
    return data


def _heal_orphans(clusters: list[str], inventory: str | None) -> None:
    """Before anything runs: undo the faults runs that died left in these clusters."""
    results = []
    for cluster in dict.fromkeys(clusters):
        results += heal.heal_everywhere(db.session_factory(), cluster, inventory,
                                        only_orphaned=True)
    for r in results:
        if r["restored"]:
            click.echo(f"healed a fault left by a run that died: {r['description']}", err=True)
    failed = [f"could not heal {r['description']}: {r['error']}"
              for r in results if not r["restored"]]
    if failed:
        _fail("; ".join(failed) + "; run `faultline heal`")


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"


def _log_to_terminal() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("[%(asctime)s %(levelname)s] %(message)s",
                                           "%H:%M:%S"))
    logger = logging.getLogger("chaostoolkit")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
