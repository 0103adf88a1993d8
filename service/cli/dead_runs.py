"""What the commands that start or list runs do first: mark interrupted the runs whose
process died (service.runs.reaper), saying so on stderr, so that a command's own output
stays as it is."""

from __future__ import annotations

import click

from service.runs.reaper import interrupt_dead_runs
from service.store import db


def close_dead_runs(found_by: str) -> None:
    for closed in interrupt_dead_runs(db.session_factory(), found_by):
        click.echo(f"run {closed.run_id} interrupted: {closed.error}", err=True)
