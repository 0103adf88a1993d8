"""The recovery-profile study's page, `/studies/recovery?runs=1,2,3`: the runs grouped by
the recovery settings they met their fault under, one row and one point each
(service.results.recovery_study), as `faultline recovery-study` prints them."""

from __future__ import annotations

from flask import Blueprint, Flask, abort, render_template, request

from service.results import recovery_study
from service.results.comparison import CompareError, parse_run_ids
from service.results.exceptions import RunNotFound
from service.results.figure_definitions import BY_KEY

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
    try:
        with sessions()() as session:
            studied = recovery_study.study(recovery_study.load(session, run_ids))
    except RunNotFound as exc:
        abort(404, description=str(exc))
    groups = [g.as_dict() for g in studied]
    labels = {key: BY_KEY[key].label for key in recovery_study.FIGURES}
    labels[recovery_study.RATE] = recovery_study.RATE_LABEL
    return render_template("recovery_study.html", groups=groups, labels=labels,
                           run_ids=run_ids, caveats=recovery_study.caveats(studied))


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
