"""The run history: stored runs, newest first, filtered and one page at a time.

Filters (each optional, combined with AND): the status, the cluster, the cluster kind,
and a text that matches the title or the experiment file (case-insensitive), or the run
id when it is a number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session, selectinload

from service.store.models import Run

from . import queries as run_queries
from .exceptions import HistoryError
from .queries import KINDS, STATUSES
from .report import report_dict

__all__ = ["KINDS", "STATUSES", "HistoryError", "HistoryPage", "RunFilter", "clusters_seen",
           "find_runs"]
PER_PAGE = 50


@dataclass(frozen=True)
class RunFilter:
    status: str = ""
    cluster: str = ""
    kind: str = ""
    text: str = ""

    def __post_init__(self) -> None:
        if self.status and self.status not in STATUSES:
            raise HistoryError(f"unknown status {self.status!r} (one of: {', '.join(STATUSES)})")
        if self.kind and self.kind not in KINDS:
            raise HistoryError(f"unknown cluster kind {self.kind!r} (one of: "
                               f"{', '.join(KINDS)})")

    def as_dict(self) -> dict[str, str]:
        return {k: v for k, v in vars(self).items() if v}


@dataclass(frozen=True)
class HistoryPage:
    runs: list[dict[str, Any]]  # report dicts, with the experiment file
    total: int
    page: int
    pages: int


def find_runs(session: Session, where: RunFilter, page: int = 1,
              per_page: int = PER_PAGE) -> HistoryPage:
    if page < 1:
        raise HistoryError(f"page must be 1 or more, not {page}")
    # the API's conditions, plus the run id for a number
    conditions = run_queries.matching(run_queries.RunFilter(
        status=where.status or None, cluster=where.cluster or None, kind=where.kind or None))
    text = where.text.strip()
    if text:
        matches = run_queries.text_matches(text)
        if text.isdigit():
            matches.append(Run.id == int(text))
        conditions.append(or_(*matches))
    query = select(Run).where(*conditions)
    total = session.execute(select(func.count()).select_from(query.subquery())).scalar_one()
    runs = session.execute(query.options(selectinload(Run.events)).order_by(Run.id.desc())
                           .offset((page - 1) * per_page).limit(per_page)).scalars().all()
    rows = [{**report_dict(r), "experiment_path": r.experiment_path,
             "requested_by": r.requested_by} for r in runs]
    return HistoryPage(rows, total, page, max(1, -(-total // per_page)))


def clusters_seen(session: Session) -> list[str]:
    """Every cluster some run targeted, for the filter's choices."""
    return list(session.execute(select(Run.cluster).distinct().order_by(Run.cluster)).scalars())
