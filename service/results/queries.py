"""Reading runs for the API and the dashboard: a filtered, paged list (one model for both),
one run in full, its figures, its events and its Chaos Toolkit journal. Each function opens
and closes its own session."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session, selectinload, sessionmaker

from service.store.models import Run
from service.store.paging import Page
from service.store.scrub import scrub_json

from .event_labels import event_label
from .exceptions import JournalNotRecorded, RunQueryError
from .figures import get_run
from .report import API_KEYS, figure_labels, report_dict

STATUSES = ("queued", "cancelled", "running", "completed", "deviated", "interrupted", "invalid",
            "failed")
KINDS = ("ceph", "swift")
MAX_PER_PAGE = 200


@dataclass(frozen=True)
class RunFilter:
    """Which runs to list (the API's list and the dashboard's alike); None or "" means any.
    `experiment` matches a substring of the experiment file's path or of the title,
    case-insensitively, or, when it is a number, the run of that id too."""

    status: str | None = None
    cluster: str | None = None
    kind: str | None = None
    experiment: str | None = None
    schedule_id: int | None = None

    def check(self) -> None:
        if self.status and self.status not in STATUSES:
            raise RunQueryError(f"unknown status {self.status!r} (known: {', '.join(STATUSES)})")
        if self.kind and self.kind not in KINDS:
            raise RunQueryError(f"unknown kind {self.kind!r} (known: {', '.join(KINDS)})")

    def as_dict(self) -> dict[str, Any]:
        """The fields that filter, by name (the dashboard's links keep them)."""
        return {k: v for k, v in vars(self).items() if v not in (None, "")}


def list_runs(sessions: sessionmaker[Session], where: RunFilter, page: int = 1,
              per_page: int = 50, row: Callable[[Run], dict[str, Any]] | None = None) -> Page:
    """Newest first. `page` counts from 1; `per_page` above MAX_PER_PAGE is capped to it; a
    page past the last is empty (with the total). Each run as `row` makes it: the list's
    summary by default, the dashboard's report rows (`report_row`)."""
    where.check()
    if page < 1:
        raise RunQueryError(f"page must be 1 or more, not {page}")
    if per_page < 1:
        raise RunQueryError(f"per_page must be 1 or more, not {per_page}")
    per_page = min(per_page, MAX_PER_PAGE)
    conditions = matching(where)
    with sessions() as session:
        total = session.execute(select(func.count(Run.id)).where(*conditions)).scalar_one()
        query = select(Run).where(*conditions)
        if row is not None:  # a report reads the events
            query = query.options(selectinload(Run.events))
        runs = session.execute(query.order_by(Run.id.desc()).offset((page - 1) * per_page)
                               .limit(per_page)).scalars().all()
        return Page([(row or summary)(r) for r in runs], page, per_page, total)


def matching(where: RunFilter) -> list:
    """The WHERE conditions of a filter (the API's list and the dashboard's history)."""
    conditions = []
    if where.status:
        conditions.append(Run.status == where.status)
    if where.cluster:
        conditions.append(Run.cluster == where.cluster)
    if where.kind:
        conditions.append(Run.cluster_kind == where.kind)
    if where.schedule_id is not None:
        conditions.append(Run.schedule_id == where.schedule_id)
    if where.experiment:
        matches = text_matches(where.experiment)
        if (run_id := _run_id(where.experiment)) is not None:
            matches.append(Run.id == run_id)
        conditions.append(or_(*matches))
    return conditions


def text_matches(text: str) -> list:
    """A run whose experiment file or title holds the text, case-insensitively (any of)."""
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    return [Run.experiment_path.ilike(pattern, escape="\\"),
            Run.title.ilike(pattern, escape="\\")]


def _run_id(text: str) -> int | None:
    """The run id a search text is, if it is one (ASCII digits within the column's range:
    "²" is a digit to Python, and PostgreSQL refuses an integer past 2^31 - 1)."""
    if text.isascii() and text.isdigit() and int(text) < 2**31:
        return int(text)
    return None


def report_row(run: Run) -> dict[str, Any]:
    """A run as the dashboard's list shows it: its report, with who asked and the file."""
    return {**report_dict(run), "experiment_path": run.experiment_path,
            "requested_by": run.requested_by}


def clusters_seen(session: Session) -> list[str]:
    """Every cluster some run targeted, for the filter's choices."""
    return list(session.execute(select(Run.cluster).distinct().order_by(Run.cluster)).scalars())


def summary(run: Run) -> dict[str, Any]:
    """A run as the list shows it."""
    return {"run_id": run.id, "title": run.title, "experiment_path": run.experiment_path,
            "cluster": run.cluster, "cluster_kind": run.cluster_kind, "status": run.status,
            "queued_at": _iso(run.queued_at), "started_at": _iso(run.started_at),
            "ended_at": _iso(run.ended_at), "requested_by": run.requested_by,
            "schedule_id": run.schedule_id,
            "verdict": (run.verdict or {}).get("status"),
            "lost_objects": (run.figures or {}).get("lost_objects")}


def detail(sessions: sessionmaker[Session], run_id: int) -> dict[str, Any]:
    """The run's report (report.report_dict) with its queue fields and verdict."""
    with sessions() as session:
        run = get_run(session, run_id)
        return {**report_dict(run), "experiment_path": run.experiment_path,
                "load_api": run.load_api, "queued_at": _iso(run.queued_at),
                "job_id": run.job_id, "requested_by": run.requested_by,
                "schedule_id": run.schedule_id, "verdict": run.verdict}


def figures(sessions: sessionmaker[Session], run_id: int) -> dict[str, Any]:
    """The run's figures, for each one that is null, why, and each one's label."""
    with sessions() as session:
        run = get_run(session, run_id)
        data = report_dict(run)  # as the report reads them (an old run's reasons included)
        values = {key: data.get(key) for key in API_KEYS}
        why = {key: data["reasons"].get(key) or _missing(run)
               for key, v in values.items() if v is None}
        return {"run_id": run.id, "status": run.status, "figures": values, "reasons": why,
                "labels": figure_labels()}


def _missing(run: Run) -> str:
    if run.error:
        return f"the run failed: {run.error}"
    if run.figures is None:
        return f"the run is {run.status} and has no figures"
    return "not measured"


def events(sessions: sessionmaker[Session], run_id: int) -> dict[str, Any]:
    """The run's timeline: each event at `ts` (epoch seconds) and `t` (seconds from the
    fault, or from the start of the load)."""
    with sessions() as session:
        run = get_run(session, run_id)
        origin = run.fault_ts or run.load_started_ts
        return {"run_id": run.id,
                "origin": "fault" if run.fault_ts else "load start" if origin else None,
                "events": [{"t": round(e.ts - origin, 3) if origin else None, "ts": e.ts,
                            "kind": e.kind, "label": event_label(e.kind), "detail": e.detail}
                           for e in run.events]}


def journal(sessions: sessionmaker[Session], run_id: int) -> dict[str, Any]:
    with sessions() as session:
        run = get_run(session, run_id)
        if run.journal is None:
            raise JournalNotRecorded(f"run {run_id} has no journal yet (it is {run.status})")
        return scrub_json(run.journal)  # also a journal stored before it was scrubbed


def waiting_for(sessions: sessionmaker[Session], run_id: int) -> list[int]:
    """The runs on the same cluster queued or running before this one: a queued run starts
    after them."""
    with sessions() as session:
        run = get_run(session, run_id)
        return list(session.execute(
            select(Run.id).where(Run.cluster == run.cluster, Run.id < run.id,
                                 Run.status.in_(("queued", "running"))).order_by(Run.id))
            .scalars())


def _iso(value) -> str | None:
    return value.isoformat() if value is not None else None
