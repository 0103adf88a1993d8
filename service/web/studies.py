"""The recovery-profile study's page, `/studies/recovery?runs=1,2,3`: the runs grouped by
the recovery settings they met their fault under, one row and one point each
(service.results.recovery_study), as `faultline recovery-study` prints them."""

from __future__ import annotations

from flask import Blueprint, Flask, abort, render_template, request
from sqlalchemy import select

from service.results import recovery_study
from service.results.comparison import CompareError, parse_run_ids
from service.results.figure_definitions import BY_KEY
from service.store.models import Run

from .context import sessions

bp = Blueprint("studies", __name__)


@bp.get("/studies/recovery")
def recovery():
    try:
        run_ids = list(dict.fromkeys(parse_run_ids(request.args.getlist("runs"))))
    except CompareError as exc:
        abort(400, description=str(exc))
    if not run_ids:
        abort(400, description="name the study's runs: /studies/recovery?runs=1,2,3")
    with sessions()() as session:
        rows = {r.id: r for r in session.execute(select(Run).where(Run.id.in_(run_ids)))
                .scalars()}
        missing = [str(i) for i in run_ids if i not in rows]
        if missing:
            abort(404, description=f"no run {', '.join(missing)}")
        runs = [recovery_study.StudyRun(r.id, r.status, r.figures or {},
                                        r.recovery_settings or {}) for r in rows.values()]
    studied = recovery_study.study(runs)
    groups = [g.as_dict() for g in studied]
    labels = {key: BY_KEY[key].label for key in recovery_study.FIGURES}
    labels[recovery_study.RATE] = "objects rebuilt per second"
    return render_template("recovery_study.html", groups=groups, labels=labels,
                           run_ids=run_ids, caveats=recovery_study.caveats(studied))


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
