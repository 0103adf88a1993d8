"""`faultline faults` and `faultline heal`: the faults left in the fault ledgers, and
their restore."""

from __future__ import annotations

import json
import sys

import click

from service.accounts import audit
from service.runs import heal
from service.store import db

from .dead_runs import close_dead_runs
from .group import fail


@click.command("faults")
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
        click.echo(f"{age(r['age_s']):>6}  {r['cluster']:<12} {r['key']:<20} "
                   f"{r['description']}{run}; injected by pid {r['owner_pid']} on "
                   f"{r['owner_host']}, {owner[r['owner_alive']]}")


@click.command("heal")
@click.option("--cluster", help="Only this cluster's faults (default: every cluster).")
@click.option("--inventory", help="Inventory file (default: the lab's).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def heal_cmd(cluster: str | None, inventory: str | None, as_json: bool) -> None:
    """Restore every fault still in the fault ledger, newest first, whoever injected it.

    Covers the database's ledger, then this machine's ledger file. Exits 1 if any restore
    failed (that fault stays in the ledger). Runs whose process died are marked interrupted
    first.
    """
    close_dead_runs("faultline heal")
    results = heal.heal_everywhere(db.session_factory(), cluster, inventory)
    with db.session_factory().begin() as session:
        audit.record(session, audit.local_actor(), "cluster.heal",
                     f"cluster {cluster}" if cluster else "every cluster",
                     {"restored": sum(1 for r in results if r["restored"]),
                      "failed": sum(1 for r in results if not r["restored"])})
    if as_json:
        click.echo(json.dumps(results, indent=2, default=str))
    elif not results:
        click.echo("no outstanding fault")
    else:
        for result in results:
            click.echo(heal.format_result(result))
    sys.exit(0 if all(r["restored"] for r in results) else 1)


def heal_orphans(clusters: list[str], inventory: str | None) -> None:
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
        fail("; ".join(failed) + "; run `faultline heal`")


def age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"


