"""Whether the seconds of P8's baselines are independent, as the trend test assumes.

The baseline check calls a queue when Mann–Kendall's one-sided p-value on the window's 1 s
p50s is under 1% (service/results/steady.py). That rate holds for independent seconds. A
cluster whose latency comes in bursts lasting several seconds (a background sweep, a
scrub) gives autocorrelated seconds, and there the test rises falsely more often (each
queue the check calls says that rate for its own seconds).

For each P8 shape (cluster, size, share) this reads the stored runs' baseline windows from
their per-second histograms (the check's own series, service.results.baseline.window_of),
takes the lag-1 autocorrelation of each series as the check takes it (steady.residuals: what
is left after the Sen line or one step, whichever fits better), and gives the shape's median
and 90th percentile; `rho_sen` is the same after the Sen line alone, the definition of the
figures stored before 2026-11-28 (a step that stayed then reads as autocorrelation). Then,
by simulation, Mann–Kendall's false-alarm rate at 1% on stationary AR(1) series of 20 points
with those autocorrelations (2,000 each, seeded).
Reads the database of DATABASE_URL; changes nothing.

    .venv/bin/python -m bench.p8_autocorrelation [--title-prefix "P8 baseline"] [--json FILE]
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict

from sqlalchemy import select

from service.results import steady
from service.results.analysis import Second
from service.results.baseline import window_of
from service.store import db
from service.store.models import LoadSample, Run

from .p8_baseline import shape_of
from .results import arguments, percentile

SIMULATED = 2000
POINTS = 20


def detrended_lag1(series: list[float]) -> float:
    """The check's autocorrelation (service.results.baseline): of the residuals."""
    return steady.lag1(steady.residuals(series, steady.sen_slope(series)))


def sen_lag1(series: list[float]) -> float:
    slope = steady.sen_slope(series)
    return steady.lag1([v - slope * i for i, v in enumerate(series)])


def mann_kendall_false_rate(rho: float, seed: int = 8) -> float:
    """Share of stationary AR(1) series on which the test rises at ALPHA."""
    return steady.false_alarm_rate(POINTS, rho, series=SIMULATED, seed=seed)


def baseline_series(session, run: Run) -> list[float]:
    start = run.load_started_ts + float(run.workload.get("ramp_s") or 0)
    end = start + float(run.workload["baseline_s"])
    by_second: dict[float, list[LoadSample]] = defaultdict(list)
    for sample in session.execute(select(LoadSample).where(
            LoadSample.run_id == run.id, LoadSample.ts >= start,
            LoadSample.ts < end)).scalars():
        by_second[sample.ts].append(sample)
    seconds = [Second(ts=ts, ops=sum(s.ops for s in samples),
                      errors=sum(s.errors for s in samples), errors_by_class={},
                      histograms=tuple(s.histogram for s in samples if s.histogram))
               for ts, samples in sorted(by_second.items())]
    window = window_of(seconds, start, end, None, None, None, [])
    return list(window.p50_series_ms)


def shapes_of(title_prefix: str) -> dict[str, dict]:
    found: dict[str, dict] = defaultdict(lambda: {"runs": 0, "judged_invalid": 0, "rho": [],
                                                  "rho_sen": []})
    with db.session_factory()() as session:
        runs = session.execute(select(Run).where(
            Run.title.like(f"{title_prefix}%"), Run.status.in_(("completed", "invalid")),
            Run.rate_requested.in_(("10%", "50%"))).order_by(Run.id)).scalars().all()
        for run in runs:
            series = baseline_series(session, run)
            if len(series) < steady.MIN_SECONDS:
                continue
            shape = found[shape_of(run.title)]
            shape["runs"] += 1
            shape["judged_invalid"] += ((run.figures or {}).get("validity") or {}).get(
                "valid") is False
            shape["rho"].append(round(detrended_lag1(series), 3))
            shape["rho_sen"].append(round(sen_lag1(series), 3))
    for shape in found.values():
        rho = sorted(shape["rho"])
        shape["rho_median"] = round(statistics.median(rho), 2)
        shape["rho_p90"] = round(percentile(rho, 90), 2)
        shape["rho_sen_median"] = round(statistics.median(shape["rho_sen"]), 2)
        shape["mann_kendall_false_rate_at_median"] = mann_kendall_false_rate(
            shape["rho_median"])
    return dict(sorted(found.items()))


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--title-prefix", default="P8 baseline")
    args = parser.parse_args()
    shapes = shapes_of(args.title_prefix)
    for name, shape in shapes.items():
        print(f"{name}: {shape['runs']} runs ({shape['judged_invalid']} judged invalid); "
              f"lag-1 autocorrelation of the 1 s p50s median {shape['rho_median']:+.2f}, "
              f"p90 {shape['rho_p90']:+.2f} (after the Sen line alone: median "
              f"{shape['rho_sen_median']:+.2f}); Mann–Kendall's false-alarm rate at 1% on AR(1) "
              f"series with the median: {shape['mann_kendall_false_rate_at_median']:.1%}")
    for rho in (0.0, 0.3, 0.5, 0.7):
        print(f"AR(1), autocorrelation {rho}: Mann–Kendall rises falsely on "
              f"{mann_kendall_false_rate(rho):.1%} of {SIMULATED} stationary series")
    if args.json:
        args.json.write_text(json.dumps(shapes, indent=2))


if __name__ == "__main__":
    main()
