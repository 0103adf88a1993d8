"""The `faultline` command line: thin wrappers over the service's functions, one module per
command group, all on the one group of service.cli.group (its error handling included)."""

from __future__ import annotations

from . import (
    accounts,
    calibration,
    faults,
    inventory,
    jobs,
    lab,
    monitoring,
    runs,
    schedules,
    serve,
)
from .group import main

for command in (runs.run_cmd, runs.runs_cmd, runs.report_cmd, runs.compare_cmd,
                runs.recovery_study_cmd,
                runs.suite_cmd, runs.verify_cmd, runs.clean_cmd, faults.faults_cmd, faults.heal_cmd,
                lab.lab_group, serve.serve_cmd, jobs.worker_cmd, jobs.enqueue_cmd,
                jobs.cancel_cmd, schedules.schedule_group, accounts.user_group,
                accounts.token_group, monitoring.monitoring_group,
                calibration.calibrate_cmd, calibration.calibration_group,
                inventory.inventory_group):
    main.add_command(command)

__all__ = ["main"]
