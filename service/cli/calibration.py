"""`faultline calibrate` and `faultline calibration show`: a cluster's capacity for one
workload shape, measured and read back."""

from __future__ import annotations

import json

import click

from clusters.access.inventory import load_cluster
from clusters.paths import default_inventory
from loadgen.workload import parse_workload
from service.experiments.preflight import default_api
from service.results import calibration_report as report
from service.results.capacity import REPEATS, Limits, Settings, Stage
from service.runs import calibration
from service.store import db

from .group import fail


@click.command("calibrate")
@click.argument("cluster")
@click.option("--inventory", help="Inventory file (default: the lab's).")
@click.option("--api", help="Load API: rados, swift or s3 (default: the cluster's first).")
@click.option("--object-size", type=int, default=4096, show_default=True, help="Bytes.")
@click.option("--object-size-max", type=int, help="Bytes; sizes are drawn up to this.")
@click.option("--mix", default="read=80,write=15,delete=5", show_default=True,
              help="Operation shares in percent, e.g. write=100.")
@click.option("--containers", type=int, default=1, show_default=True)
@click.option("--objects", "objects_per_container", type=int, default=200, show_default=True,
              help="Objects prefilled per container.")
@click.option("--stage-s", type=int, default=10, show_default=True,
              help="Measured seconds per stage.")
@click.option("--warmup-s", type=int, default=2, show_default=True,
              help="Seconds left out at the start of each stage.")
@click.option("--max-in-flight", type=int, default=64, show_default=True)
@click.option("--repeats", type=int, default=REPEATS, show_default=True,
              help="More stages of each level around the first pass's knee (0: none); "
                   "the knee is read from them.")
@click.option("--p99-factor", type=float, default=Limits.p99_factor, show_default=True,
              help="The knee's p99 is at most this times the first stage's.")
@click.option("--p99-bound-ms", type=float, default=Limits.p99_bound_ms, show_default=True,
              help="A stage whose p99 passes this ends the sweep.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def calibrate_cmd(cluster: str, inventory: str | None, api: str | None, mix: str,
                  stage_s: int, warmup_s: int, max_in_flight: int, repeats: int,
                  p99_factor: float, p99_bound_ms: float, as_json: bool, **shape) -> None:
    """Measure CLUSTER's capacity for a workload shape: closed-loop stages at 1, 2, 4, ...
    requests in flight until the throughput stops rising, then the levels around the knee
    again; the knee is the fewest in flight within the noise of the best."""
    workload = parse_workload({**{k: v for k, v in shape.items() if v is not None},
                               "mix": parse_mix(mix)})
    target = load_cluster(inventory or default_inventory(), cluster)
    settings = Settings(stage_s=stage_s, warmup_s=warmup_s, max_in_flight=max_in_flight,
                        repeats=repeats,
                        limits=Limits(p99_factor=p99_factor, p99_bound_ms=p99_bound_ms))

    def said(stage: Stage) -> None:
        if not as_json:
            again = f" (again, {stage.repeat})" if stage.repeat else ""
            click.echo(f"  {stage.in_flight:>4} in flight{again}: {stage.ops_s:.1f} ops/s, "
                       f"p99 {stage.p99_ms} ms, {stage.errors} errors", err=True)

    calibration_id = calibration.calibrate(
        db.session_factory(), db.database_url(), target, workload,
        api or default_api(target), settings, progress=said)
    show(calibration_id, None, as_json)


@click.group("calibration")
def calibration_group() -> None:
    """Stored calibrations."""


@calibration_group.command("show")
@click.argument("calibration_id", type=int, required=False)
@click.option("--cluster", help="The latest calibration of this cluster.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (with each stage's "
              "HDR histogram, for a latency CDF).")
def show_cmd(calibration_id: int | None, cluster: str | None, as_json: bool) -> None:
    """Print a calibration (default: the latest)."""
    show(calibration_id, cluster, as_json)


def show(calibration_id: int | None, cluster: str | None, as_json: bool) -> None:
    with db.session_factory()() as session:
        data = report.calibration_dict(report.load(session, calibration_id, cluster),
                                       histograms=as_json)
    click.echo(json.dumps(data, indent=2) if as_json else report.format_calibration(data))


def parse_mix(text: str) -> dict[str, float | int]:
    """`read=80,write=15,delete=5` as a mapping (parse_workload checks the values)."""
    mix = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        op, sep, share = part.partition("=")
        try:
            value = float(share)
            mix[op.strip()] = int(value) if value.is_integer() else value
        except ValueError:
            sep = ""
        if not sep:
            fail(f"invalid mix {text!r}: expected op=percent pairs, e.g. read=80,write=20")
    return mix
