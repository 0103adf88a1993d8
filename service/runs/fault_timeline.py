"""When a run's fault happened, read from Chaos Toolkit's journal: the fault activity (the
method's first action unless the control names one), the times of its activities, and the
fault of a run interrupted before its action reported. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class UnreportedFault:
    failed: bool  # the action failed: nothing was injected
    ts: float  # when the fault happened (or when the action failed)
    text: str  # a note on what is known of it, or the action's error


def first_action(experiment: dict) -> str | None:
    for activity in experiment.get("method", []):
        if activity.get("type") == "action":
            return activity.get("name")
    return None


def timestamp(value: Any) -> float | None:
    """A journal's ISO time as a Unix time; None for anything else."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            return None
    return None


def unreported_fault(journal: dict | None, fault_name: str | None, started_ts: float,
                     now: float) -> UnreportedFault:
    """The fault of a run interrupted before its action reported (started at `started_ts`;
    `now` dates a failure whose end the journal lacks): the journal has the action's end
    and status even when its pause after was cut short."""
    run = next((r for r in (journal or {}).get("run") or []
                if (r.get("activity") or {}).get("name") == fault_name), None)
    if run is not None and run.get("status") == "succeeded":
        return UnreportedFault(False, timestamp(run.get("end")) or started_ts,
                               "the run was interrupted during the pause after the fault's "
                               "action")
    if run is not None and run.get("status") == "failed":
        return UnreportedFault(True, timestamp(run.get("end")) or now,
                               str(run.get("exception") or "")[:2000])
    return UnreportedFault(False, started_ts,
                           "the run was interrupted during the fault's action: this is when "
                           "it began, and the fault may be partial")
