"""The recovery-profile study: runs grouped by the recovery settings they met their fault
under (as each run stored them, not as its experiment's name says), and per group the
recovery's length and what the clients kept of their baseline meanwhile, each as the median
of the trials with its range: client impact against recovery time, one point per setting.

A run that is not `completed` (invalid, failed, interrupted) is kept out and listed with its
status; so is a run whose figures could not be measured, with the reason. `load` reads the
runs; the rest is pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.store.models import Run

from .exceptions import RunNotFound

FIGURES = ("recovery_s", "recovery_ops_ratio", "recovery_p99_ratio",
           "time_to_full_redundancy_s", "recovery_objects")
# derived per run: what the recovery's length is worth when the runs had different amounts
# to rebuild (the clients' own writes during the fault add to it)
RATE = "rebuilt_per_s"
RATE_LABEL = "objects rebuilt per second"
# the settings a group is named by, in this order (Ceph; Swift's replicator next)
NAMED_BY = ("osd_op_queue", "osd_mclock_profile", "osd_max_backfills",
            "osd_recovery_max_active", "osd_mclock_override_recovery_settings",
            "concurrency", "handoffs_first")


@dataclass(frozen=True)
class StudyRun:
    run_id: int
    status: str
    figures: dict[str, Any]
    recovery_settings: dict[str, Any]


@dataclass(frozen=True)
class Spread:
    median: float
    low: float
    high: float
    n: int

    def as_dict(self) -> dict[str, Any]:
        return {"median": self.median, "low": self.low, "high": self.high, "n": self.n}


@dataclass
class Group:
    label: str
    settings: dict[str, str]
    run_ids: list[int] = field(default_factory=list)
    spreads: dict[str, Spread | None] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)  # "run 12: invalid"

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "settings": self.settings, "run_ids": self.run_ids,
                "figures": {k: s.as_dict() if s else None for k, s in self.spreads.items()},
                "left_out": self.left_out}


def load(session: Session, run_ids: list[int]) -> list[StudyRun]:
    """The runs, as the study reads them; RunNotFound names every id that has none."""
    ids = list(dict.fromkeys(run_ids))
    rows = {r.id: r for r in session.execute(select(Run).where(Run.id.in_(ids))).scalars()}
    missing = [str(i) for i in ids if i not in rows]
    if missing:
        raise RunNotFound(f"no run {', '.join(missing)}")
    return [StudyRun(r.id, r.status, r.figures or {}, r.recovery_settings or {})
            for r in rows.values()]


def settings_of(run: StudyRun) -> dict[str, str]:
    """The naming settings as the run met its fault (every OSD's first value)."""
    found = {s.get("name"): s.get("value") for s in
             (run.recovery_settings or {}).get("settings") or [] if isinstance(s, dict)}
    return {name: str(found[name]) for name in NAMED_BY if found.get(name) is not None}


def label_of(settings: dict[str, str]) -> str:
    """"mClock high_recovery_ops", "WPQ, osd_max_backfills 3", "replicator concurrency 4,
    handoffs first", or the settings listed."""
    if "concurrency" in settings:
        first = ", handoffs first" if settings.get("handoffs_first") == "true" else ""
        return f"replicator concurrency {settings['concurrency']}{first}"
    queue = settings.get("osd_op_queue")
    backfills = settings.get("osd_max_backfills")
    if queue == "wpq":
        return f"WPQ, osd_max_backfills {backfills}" if backfills else "WPQ"
    if queue == "mclock_scheduler" and settings.get("osd_mclock_profile"):
        label = f"mClock {settings['osd_mclock_profile']}"
        if settings.get("osd_mclock_override_recovery_settings") == "true" and backfills:
            label += f", osd_max_backfills {backfills}"
        return label
    return ", ".join(f"{k} {v}" for k, v in settings.items()) or "settings not recorded"


def study(runs: list[StudyRun]) -> list[Group]:
    """The groups, in the order their first run came."""
    groups: dict[str, Group] = {}
    for run in sorted(runs, key=lambda r: r.run_id):
        settings = settings_of(run)
        label = label_of(settings)
        group = groups.setdefault(label, Group(label, settings))
        if run.status != "completed":
            group.left_out.append(f"run {run.run_id}: {run.status}")
            continue
        group.run_ids.append(run.run_id)
    by_id = {run.run_id: run for run in runs}
    for group in groups.values():
        for key in (*FIGURES, RATE):
            values = [_figure(by_id[i].figures, key) for i in group.run_ids]
            measured = [float(v) for v in values if isinstance(v, int | float)]
            for run_id, value in zip(group.run_ids, values, strict=True):
                if value is None and key == "recovery_s":
                    why = (by_id[run_id].figures.get("reasons") or {}).get(key, "n/a")
                    group.left_out.append(f"run {run_id}: no recovery figure ({why})")
            group.spreads[key] = (Spread(round(median(measured), 4), min(measured),
                                         max(measured), len(measured)) if measured else None)
    return list(groups.values())


def _figure(figures: dict[str, Any], key: str) -> Any:
    if key != RATE:
        return figures.get(key)
    objects, seconds = figures.get("recovery_objects"), figures.get("recovery_s")
    if isinstance(objects, int | float) and isinstance(seconds, int | float) and seconds > 0:
        return round(objects / seconds, 1)
    return None


AMOUNT_SPREAD = 2.0  # the most rebuilt over the least: past this, times do not compare


def caveats(groups: list[Group]) -> list[str]:
    """What keeps the recovery times from comparing: runs that rebuilt very different
    amounts (the clients' own writes during the fault add to what is rebuilt)."""
    amounts = [s for g in groups if (s := g.spreads.get("recovery_objects"))]
    if not amounts:
        return []
    least, most = min(s.low for s in amounts), max(s.high for s in amounts)
    if least > 0 and most / least <= AMOUNT_SPREAD:
        return []
    ratio = f"{most / least:.0f}x" if least > 0 else "from none"
    return [f"the runs rebuilt between {least:,.0f} and {most:,.0f} objects ({ratio}): "
            "their recovery times do not compare, the rate rebuilt per second does; hold "
            "the amount fixed before judging a setting by its time"]


def _cell(spread: Spread | None, fmt: str) -> str:
    if spread is None:
        return "n/a"
    if spread.n == 1:
        return f"{spread.median:{fmt}} (1 run)"
    return f"{spread.median:{fmt}} ({spread.low:{fmt}}-{spread.high:{fmt}})"


def format_table(groups: list[Group]) -> str:
    """A Markdown table: one row per setting, medians with their range over the trials."""
    lines = ["| settings | runs | recovery, s | client throughput during it / baseline "
             "| client p99 during it / baseline | full redundancy after the fault, s "
             "| objects to rebuild (most degraded) | rebuilt per second |",
             "|---|---|---|---|---|---|---|---|"]
    for g in groups:
        s = g.spreads
        lines.append(f"| {g.label} | {len(g.run_ids)} | {_cell(s.get('recovery_s'), '.1f')} "
                     f"| {_cell(s.get('recovery_ops_ratio'), '.2f')} "
                     f"| {_cell(s.get('recovery_p99_ratio'), '.2f')} "
                     f"| {_cell(s.get('time_to_full_redundancy_s'), '.1f')} "
                     f"| {_cell(s.get('recovery_objects'), ',.0f')} "
                     f"| {_cell(s.get(RATE), ',.0f')} |")
    notes = [f"- {g.label}: {note}" for g in groups for note in g.left_out]
    said = [f"- {caveat}" for caveat in caveats(groups)]
    return "\n".join(lines + (["", "Caveats:", *said] if said else [])
                     + (["", "Left out:", *notes] if notes else []))
