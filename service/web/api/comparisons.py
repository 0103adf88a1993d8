"""GET /comparisons?runs=1,2,3: runs side by side, with the caveats (service.results.comparison)."""

from __future__ import annotations

from flask import request

from service.results.comparison import compare, parse_run_ids

from .blueprint import bp
from .context import sessions
from .params import check_query


@bp.get("/comparisons")
def compare_runs():
    check_query(("runs",))
    run_ids = parse_run_ids(request.args.getlist("runs"))
    with sessions()() as session:
        return compare(session, run_ids)
