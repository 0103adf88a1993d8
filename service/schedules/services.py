"""Schedules: create, change and delete them, and enqueue what is due, once per slot.

A worker ticks every 10 seconds (procrastinate's periodic task, itself deferred once
per tick however many workers run), so a slot is queued within 10 s of its minute.
Each due slot is claimed by inserting its (schedule, slot) row: the primary key lets
exactly one tick win, and the runs of the slot are queued in the same transaction, so a
slot is never enqueued twice nor claimed without its runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from service.experiments import documents, suites
from service.jobs import run_queue
from service.store.models import Run, Schedule, ScheduleSlot

from .exceptions import ScheduleExists, ScheduleNotFound
from .slots import ScheduleError, due_slots, next_slot, validate


@dataclass(frozen=True)
class PlannedRun:
    """One run a slot of a schedule queues."""

    experiment_path: str
    cluster: str
    workload: dict[str, Any]


def create(sessions: sessionmaker[Session], *, name: str, cron: str, timezone: str = "UTC",
           experiment: str | None = None, suite: str | None = None,
           clusters: list[str] | None = None, workload: dict[str, Any] | None = None,
           created_by: str | None = None, inventory: str | None = None) -> int:
    """Check everything a slot will need, then store the schedule; return its id."""
    values = dict(name=name, cron=cron, timezone=timezone, experiment_path=experiment,
                  suite_path=suite, clusters=list(clusters or []), workload=workload or {})
    check(values, inventory)
    try:
        with sessions.begin() as session:
            if session.execute(select(Schedule.id).where(Schedule.name == name)).first():
                raise ScheduleExists(f"a schedule named '{name}' exists already")
            schedule = Schedule(created_by=created_by, enabled=True, **values)
            session.add(schedule)
            session.flush()
            return schedule.id
    except IntegrityError:  # made by someone else since the check
        raise ScheduleExists(f"a schedule named '{name}' exists already") from None


def change(sessions: sessionmaker[Session], schedule_id: int, inventory: str | None = None,
           **changes: Any) -> None:
    """Change fields (cron, timezone, clusters, workload, enabled, ...), checked as on create."""
    allowed = {"name", "cron", "timezone", "experiment_path", "suite_path", "clusters",
               "workload", "enabled"}
    unknown = set(changes) - allowed
    if unknown:
        raise ScheduleError(f"cannot change {', '.join(sorted(unknown))} of a schedule")
    with sessions.begin() as session:
        schedule = get(session, schedule_id)
        values = {key: getattr(schedule, key) for key in allowed} | changes
        if changes != {"enabled": False}:  # stopping a schedule never needs its files
            check(values, inventory)
        for key, value in changes.items():
            setattr(schedule, key, value)
        try:
            session.flush()
        except IntegrityError:
            raise ScheduleExists(f"a schedule named '{values['name']}' exists already") from None


def delete(sessions: sessionmaker[Session], schedule_id: int) -> None:
    """Delete a schedule; its runs stay, no longer tied to it."""
    with sessions.begin() as session:
        session.delete(get(session, schedule_id))


def get(session: Session, schedule_id: int) -> Schedule:
    schedule = session.get(Schedule, schedule_id)
    if schedule is None:
        raise ScheduleNotFound(f"schedule {schedule_id} does not exist")
    return schedule


def all_schedules(session: Session) -> list[Schedule]:
    return list(session.execute(select(Schedule).order_by(Schedule.id)).scalars())


def describe(schedule: Schedule, now: datetime | None = None) -> dict[str, Any]:
    """A schedule as the API and the dashboard show it."""
    now = now or datetime.now(UTC)
    return {"id": schedule.id, "name": schedule.name, "cron": schedule.cron,
            "timezone": schedule.timezone, "experiment": schedule.experiment_path,
            "suite": schedule.suite_path, "clusters": schedule.clusters,
            "workload": schedule.workload, "enabled": schedule.enabled,
            "created_by": schedule.created_by,
            "next_run_at": (next_slot(schedule.cron, schedule.timezone, now).isoformat()
                            if schedule.enabled else None)}


def check(values: dict[str, Any], inventory: str | None = None) -> list[PlannedRun]:
    """Everything a slot will need, or a ScheduleError/ExperimentError/... saying what is
    wrong; return the runs each slot queues."""
    if not str(values.get("name") or "").strip():
        raise ScheduleError("a schedule needs a name")
    validate(values["cron"], values["timezone"])
    if bool(values.get("experiment_path")) == bool(values.get("suite_path")):
        raise ScheduleError("a schedule runs either an experiment or a suite (give one)")
    workload = values.get("workload") or {}
    if values.get("suite_path"):
        if values.get("clusters"):
            raise ScheduleError("a suite names its own clusters; give no clusters with it")
        loaded = suites.load_suite(values["suite_path"], inventory)
        repeated = [r.name for r in loaded.runs if r.trials > 1]
        if repeated:  # each slot queues each entry once: trials would be silently dropped
            raise ScheduleError(f"a scheduled suite runs each entry once; {', '.join(repeated)} "
                                "asks for trials: run that suite with `faultline suite`")
        if loaded.calibration is not None:  # a queued run carries its workload, not this
            raise ScheduleError("a scheduled suite cannot set how calibrations are made "
                                "('calibration'): run that suite with `faultline suite`")
        planned = [PlannedRun(r.experiment, r.cluster, {**loaded.workload, **workload})
                   for r in loaded.runs]
    else:
        if not values.get("clusters"):
            raise ScheduleError("a scheduled experiment needs at least one cluster")
        planned = [PlannedRun(values["experiment_path"], c, workload)
                   for c in values["clusters"]]
    for run in planned:  # each with its cluster, as the slot will queue it
        document = documents.load(run.experiment_path)
        if run.workload:
            document = documents.with_workload(document, run.workload)
        documents.check_static(document, run.cluster, inventory)
    return planned


def claim_due(sessions: sessionmaker[Session], now: datetime | None = None,
              inventory: str | None = None) -> list[tuple[int, str]]:
    """Claim every due slot and queue its runs; return (run id, cluster) pairs to defer.

    A slot that another tick claimed first is skipped. A slot whose runs cannot be
    queued (the experiment file went away) is claimed with no runs, and the error is
    kept on the slot, so it is not retried every tick.
    """
    now = now or datetime.now(UTC)
    to_defer: list[tuple[int, str]] = []
    with sessions() as session:
        ids = session.execute(select(Schedule.id).where(Schedule.enabled)).scalars().all()
    for schedule_id in ids:
        with sessions.begin() as session:
            schedule = session.get(Schedule, schedule_id, with_for_update=True)
            if schedule is None or not schedule.enabled:
                continue
            slots = due_slots(schedule.cron, schedule.timezone, schedule.checked_until, now)
            schedule.checked_until = max(schedule.checked_until, now)
            for slot in slots:
                claimed = session.execute(
                    insert(ScheduleSlot).values(schedule_id=schedule_id, slot=slot, run_ids=[])
                    .on_conflict_do_nothing().returning(ScheduleSlot.slot)).first()
                if claimed is None:
                    continue
                error = None
                try:
                    with session.begin_nested():
                        runs = _queue_slot(session, schedule, inventory)
                except Exception as exc:  # kept on the slot; the next slot tries afresh
                    runs, error = [], f"{type(exc).__name__}: {exc}"
                session.execute(update(ScheduleSlot).where(
                    ScheduleSlot.schedule_id == schedule_id, ScheduleSlot.slot == slot)
                    .values(run_ids=[r.id for r in runs], error=error))
                to_defer += [(r.id, r.cluster) for r in runs]
    return to_defer


def _queue_slot(session: Session, schedule: Schedule, inventory: str | None) -> list[Run]:
    runs = []
    for planned in check(_values(schedule), inventory):
        runs.append(run_queue.queued_run(
            session, documents.load(planned.experiment_path), cluster=planned.cluster,
            inventory=inventory, experiment_path=planned.experiment_path,
            workload=planned.workload, requested_by=f"schedule {schedule.name}",
            schedule_id=schedule.id))
    return runs


def _values(schedule: Schedule) -> dict[str, Any]:
    return {"name": schedule.name, "cron": schedule.cron, "timezone": schedule.timezone,
            "experiment_path": schedule.experiment_path, "suite_path": schedule.suite_path,
            "clusters": schedule.clusters, "workload": schedule.workload}


def series(session: Session, run: Run, limit: int = 50) -> list[Run]:
    """The runs before this one of its series (same schedule, cluster and experiment file)
    that ran to the end on a baseline that held: a failed or interrupted night, or one that
    injected anyway on an overloaded cluster, would blur the history."""
    if run.schedule_id is None:
        return []
    return [r for r in session.execute(
        select(Run).where(Run.schedule_id == run.schedule_id, Run.cluster == run.cluster,
                          Run.experiment_path == run.experiment_path, Run.id < run.id,
                          Run.status.in_(("completed", "deviated")), Run.figures.is_not(None))
        .order_by(Run.id.desc()).limit(limit)).scalars()
        if (r.figures.get("validity") or {}).get("valid") is not False][::-1]
