"""The `faultline` command group: one clear line and exit 2 for any error a user or the
machine can cause, never a traceback (the commands live in the modules beside this one)."""

from __future__ import annotations

import subprocess
import sys

import click
from sqlalchemy.exc import OperationalError

from clusters.exceptions import ClusterError
from lab.exceptions import LabError
from loadgen.exceptions import LoadError
from service.exceptions import FaultlineError
from service.runs.reaper import interrupt_dead_runs
from service.store import db, secret_files

USER_ERRORS = (ClusterError, LoadError, FaultlineError)
# Errors of the machine or the lab: one clear line too, never a traceback.
SETUP_ERRORS = (LabError, PermissionError,
                subprocess.CalledProcessError, subprocess.TimeoutExpired)


def fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def close_dead_runs(found_by: str) -> None:
    """Mark interrupted the runs whose process died (service.runs.reaper), saying so on
    stderr, so that a command's own output stays as it is."""
    for closed in interrupt_dead_runs(db.session_factory(), found_by):
        click.echo(f"run {closed.run_id} interrupted: {closed.error}", err=True)


class FaultlineGroup(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except USER_ERRORS + SETUP_ERRORS as exc:
            fail(str(exc))
        except OperationalError as exc:
            fail(f"cannot use the database: {str(exc.orig).strip().splitlines()[0]}")


@click.group(cls=FaultlineGroup)
def main() -> None:
    """Faultline: chaos and degraded-mode testing for Ceph and Swift."""
    secret_files.check()
