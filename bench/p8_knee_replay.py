"""P8's runs judged again by the knee rule (service.results.baseline: a rate resolved from a
calibration is past the knee when more than `knee_allowance` of the baseline window's
operations took longer than that calibration's p99 bound). For runs P8 stored before the
rule existed: each run's baseline window is read back from its stored per-second
histograms, [load start + ramp, + the seconds the check measured), against the bound of
the calibration its rate came from (service.runs.calibration.knee_bound_ms). Reads the
database of DATABASE_URL; changes nothing.

    .venv/bin/python -m bench.p8_knee_replay [--title-prefix "P8 baseline"] [--json FILE]
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from sqlalchemy import select

from loadgen.samples import merge_histograms
from service.results.baseline import BaselineLimits, knee_allowance
from service.results.deficit import on_time_ops
from service.runs.calibration import knee_bound_ms
from service.store import db
from service.store.models import Calibration, LoadSample, Run

from .p8_baseline import shape_of
from .results import arguments


def replay(title_prefix: str) -> dict:
    limits = BaselineLimits()
    shapes: dict[str, dict] = defaultdict(lambda: {"runs": 0, "flagged": 0, "judged_invalid": 0,
                                                   "worst_share": 0.0, "detail": []})
    with db.session_factory()() as session:
        runs = session.execute(select(Run).where(
            Run.title.like(f"{title_prefix}%"), Run.status.in_(("completed", "invalid")),
            Run.calibration_id.is_not(None)).order_by(Run.id)).scalars().all()
        bounds: dict[int, float | None] = {}
        for run in runs:
            if run.calibration_id not in bounds:
                bounds[run.calibration_id] = knee_bound_ms(
                    session.get(Calibration, run.calibration_id))
            bound = bounds[run.calibration_id]
            validity = (run.figures or {}).get("validity") or {}
            start = run.load_started_ts + float(run.workload.get("ramp_s") or 0)
            end = start + float(validity.get("measured_s") or run.workload["baseline_s"])
            merged = merge_histograms([s.histogram for s in session.execute(
                select(LoadSample).where(LoadSample.run_id == run.id, LoadSample.ts >= start,
                                         LoadSample.ts < end)).scalars() if s.histogram])
            ops = merged.get_total_count()
            over = ops - on_time_ops(merged, bound / 1000) if bound and ops else 0
            flagged = bool(ops) and over > knee_allowance(ops, limits)
            shape = shapes[shape_of(run.title)]
            shape["runs"] += 1
            shape["flagged"] += flagged
            shape["judged_invalid"] += validity.get("valid") is False
            shape["worst_share"] = max(shape["worst_share"], over / ops if ops else 0.0)
            shape["detail"].append({"run_id": run.id, "over": over, "ops": ops,
                                    "bound_ms": round(bound or 0, 1), "flagged": flagged,
                                    "valid_then": validity.get("valid")})
    return dict(sorted(shapes.items()))


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--title-prefix", default="P8 baseline")
    args = parser.parse_args()
    shapes = replay(args.title_prefix)
    for name, shape in shapes.items():
        print(f"{name}: {shape['flagged']} of {shape['runs']} past the knee (judged invalid "
              f"then: {shape['judged_invalid']}); most past the bound: "
              f"{shape['worst_share']:.1%}")
    if args.json:
        Path(args.json).write_text(json.dumps(shapes, indent=2))


if __name__ == "__main__":
    main()
