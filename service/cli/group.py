"""The `faultline` command group: one clear line and exit 2 for any error a user or the
machine can cause, never a traceback (the commands live in the modules beside this one).

A command's module is imported when the command is used (`LAZY`): importing all of them
(SQLAlchemy, Flask, the load generators) took 2.3 s, which every `faultline lab up` paid."""

from __future__ import annotations

import importlib
import subprocess
import sys

import click

from clusters.exceptions import ClusterError
from lab.exceptions import LabError
from loadgen.exceptions import LoadError
from service.exceptions import FaultlineError
from service.store import secret_files

USER_ERRORS = (ClusterError, LoadError, FaultlineError)
# Errors of the machine or the lab: one clear line too, never a traceback.
SETUP_ERRORS = (LabError, PermissionError,
                subprocess.CalledProcessError, subprocess.TimeoutExpired)
# command name: "module of service.cli:attribute"
LAZY = {
    "run": "runs:run_cmd", "runs": "runs:runs_cmd", "report": "runs:report_cmd",
    "compare": "runs:compare_cmd", "recovery-study": "runs:recovery_study_cmd",
    "suite": "runs:suite_cmd", "verify": "runs:verify_cmd", "clean": "runs:clean_cmd",
    "faults": "faults:faults_cmd", "heal": "faults:heal_cmd", "lab": "lab:lab_group",
    "serve": "serve:serve_cmd", "worker": "jobs:worker_cmd", "enqueue": "jobs:enqueue_cmd",
    "cancel": "jobs:cancel_cmd", "schedule": "schedules:schedule_group",
    "user": "accounts:user_group", "token": "accounts:token_group",
    "monitoring": "monitoring:monitoring_group", "calibrate": "calibration:calibrate_cmd",
    "calibration": "calibration:calibration_group", "inventory": "inventory:inventory_group",
}


def fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def _database_error(exc: Exception) -> bool:
    """An SQLAlchemy OperationalError (only a command that imported SQLAlchemy raises one)."""
    errors = sys.modules.get("sqlalchemy.exc")
    return errors is not None and isinstance(exc, errors.OperationalError)


class FaultlineGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in LAZY:
            module, attribute = LAZY[name].split(":")
            command = getattr(importlib.import_module(f"service.cli.{module}"), attribute)
            self.add_command(command, name)
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except USER_ERRORS + SETUP_ERRORS as exc:
            fail(str(exc))
        except Exception as exc:
            if not _database_error(exc):
                raise
            fail(f"cannot use the database: {str(exc.orig).strip().splitlines()[0]}")


@click.group(cls=FaultlineGroup)
def main() -> None:
    """Faultline: chaos and degraded-mode testing for Ceph and Swift."""
    secret_files.check()
