"""Judge a scheduled run against its series and keep the verdict on the run."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from service.results.regression import RegressionPolicy, judge
from service.store.models import Run

from . import services as schedules


def judge_run(sessions: sessionmaker[Session], run_id: int,
              policy: RegressionPolicy | None = None) -> dict[str, Any] | None:
    """The run's verdict (stored on it), or None for a run of no schedule."""
    policy = policy or RegressionPolicy()
    with sessions.begin() as session:
        run = session.get(Run, run_id)
        if run is None or run.schedule_id is None or run.status in ("queued", "running"):
            return None
        if run.status == "invalid":  # nothing injected: the night says why, judges nothing
            verdict = {"status": "failure", "findings": [], "history_runs": 0, "judged": [],
                       "summary": f"invalid run: {run.error}"}
        elif run.figures is None:  # it never measured anything: a failure of the night
            verdict = {"status": "failure", "findings": [], "history_runs": 0, "judged": [],
                       "summary": f"run {run.status} without figures: {run.error or 'no error'}"}
        else:
            history = [r.figures for r in schedules.series(session, run, limit=policy.window)]
            verdict = judge(run.figures, history, policy).as_dict()
            validity = run.figures.get("validity") or {}
            if validity.get("valid") is False:  # injected anyway: say so beside the verdict
                verdict["warning"] = ("the baseline did not hold (the fault was injected "
                                      "anyway): " + "; ".join(validity.get("reasons") or []))
        run.verdict = verdict
        return verdict
