"""`faultline worker`, `faultline enqueue`, `faultline cancel`: the queue from the command
line (registered on the main group in service.cli.group, whose error handling they share)."""

from __future__ import annotations

import os
import socket

import click

from service.accounts import audit
from service.experiments import documents
from service.jobs import run_queue
from service.jobs.app import make_app
from service.jobs.names import LOAD_QUEUE, RUNS_QUEUE, SCHEDULES_QUEUE
from service.store import db
from service.store.scrub import scrub_logs
from service.worker.app import make_worker_app
from service.worker.auto_heal import PERIOD_S, AutoHeal

from .dead_runs import close_dead_runs


@click.command("worker")
@click.option("--concurrency", type=int, default=None,
              help="Jobs at once (default 4; 1 for --queue load alone). Runs on one cluster "
                   "run one at a time whatever this is.")
@click.option("--name", default=None, help="Worker name in logs (default: host and PID).")
@click.option("--queue", "queues", multiple=True,
              type=click.Choice([RUNS_QUEUE, SCHEDULES_QUEUE, LOAD_QUEUE]),
              help=f"Queues to take jobs from (repeatable; default: {RUNS_QUEUE} and "
                   f"{SCHEDULES_QUEUE}). A driver host of runs on several hosts runs "
                   f"`--queue {LOAD_QUEUE}`, one job at a time by default.")
@click.option("--auto-heal/--no-auto-heal", default=True,
              help="As it starts and every 2 min, restore the faults that runs whose process "
                   f"died left in the fault ledger (default: on; a `--queue {LOAD_QUEUE}` "
                   "worker alone never heals).")
def worker_cmd(concurrency: int | None, name: str | None, queues: tuple[str, ...],
               auto_heal: bool) -> None:
    """Run queued experiments until stopped (Ctrl-C waits for the runs in progress)."""
    queues = queues or (RUNS_QUEUE, SCHEDULES_QUEUE)
    if concurrency is None:  # a load driver takes a host's CPU: one per host
        concurrency = 1 if queues == (LOAD_QUEUE,) else 4
    if concurrency < 1:
        raise click.BadParameter("must be at least 1", param_hint="--concurrency")
    url = db.database_url()
    app = make_worker_app(url)
    scrub_logs()
    close_dead_runs("faultline worker")
    name = name or f"{socket.gethostname()}-{os.getpid()}"
    healer = AutoHeal(url, name) if auto_heal and RUNS_QUEUE in queues else None
    click.echo(f"faultline worker on {db.libpq_url(url).split('@')[-1]}: queues "
               f"{', '.join(queues)}; {concurrency} at once; auto-heal "
               + (f"every {PERIOD_S:.0f} s" if healer else "off"), err=True)
    if healer:
        healer.start()
    try:
        app.run_worker(queues=list(queues), concurrency=concurrency, name=name,
                       additional_context={"database_url": url},
                       # a run ends with its rollbacks: never cut one short on shutdown
                       shutdown_graceful_timeout=None)
    finally:
        if healer:
            healer.stop()


@click.command("enqueue")
@click.argument("experiment", type=click.Path())
@click.option("--cluster", help="Cluster name in the inventory (default: lab-ceph).")
@click.option("--inventory", help="Inventory file (default: the lab's).")
def enqueue_cmd(experiment: str, cluster: str | None, inventory: str | None) -> None:
    """Queue a run of an experiment file for the workers; print its run id."""
    document = documents.load(experiment)
    url = db.database_url()
    run_id = run_queue.enqueue(db.session_factory(url), make_app(url), document,
                               cluster=cluster, inventory=inventory, experiment_path=experiment,
                               # whoever can reach the database is trusted with the guard
                               requested_by="cli", role="admin")
    with db.session_factory(url).begin() as session:
        audit.record(session, audit.local_actor(), "run.queue", f"run {run_id}",
                     {"experiment": experiment, "cluster": cluster})
    click.echo(run_id)


@click.command("cancel")
@click.argument("run_id", type=int)
def cancel_cmd(run_id: int) -> None:
    """Cancel a queued run, or interrupt a running one (its rollbacks still run)."""
    url = db.database_url()
    outcome = run_queue.cancel(db.session_factory(url), make_app(url), run_id)
    with db.session_factory(url).begin() as session:
        audit.record(session, audit.local_actor(), "run.cancel", f"run {run_id}",
                     {"outcome": outcome})
    click.echo(f"run {run_id}: {outcome}")
