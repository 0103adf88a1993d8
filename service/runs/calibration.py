"""`faultline calibrate`: measure a cluster's capacity for one workload shape.

COSBench-style stages: a closed loop at 1, 2, 4, ... requests in flight, each run long
enough to settle (a warm-up, then the measured seconds), until the throughput rises less
than 5% or p99 passes a bound (service.results.capacity). Then the levels around that first
pass's knee (at most 3) are measured `repeats` more times each, in turns, and the knee is
read from every measurement (service.results.knee). The time is bounded: at most
`max_stages` stages of warm-up + stage seconds each (64 in flight, 2 repeats: 13 stages).
Every stage is stored as it ends, so a calibration cut short keeps what it measured. The
cluster is locked as for a run (a calibration beside an experiment would measure both
wrongly), and must be healthy first: the capacity of a degraded cluster is not its capacity.
The release and topology it was made on are stored: they key its reuse
(service.runs.calibration_reuse).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from clusters.access.inventory import Cluster
from loadgen.drivers import driver_for
from loadgen.stages import StageRunner
from loadgen.workload import Workload
from service.jobs.cluster_lock import ClusterLock
from service.results import capacity, generator, knee
from service.results.baseline import cluster_problem
from service.results.capacity import Settings
from service.store.models import Calibration, CalibrationStage

from .calibration_reuse import topology_of, why_not_reused
from .exceptions import ClusterNotHealthy, NoCapacity
from .sampler import state_source

log = logging.getLogger(__name__)

# what the shape of a workload is: a calibration of it applies to any rate
SHAPE = ("containers", "objects_per_container", "object_size", "object_size_max", "mix",
         "prefill", "seed")
NO_KNEE = "no level qualified as the knee (each had errors or a p99 past the bound)"


def in_flight_steps(max_in_flight: int) -> list[int]:
    """1, 2, 4, ... up to max_in_flight, which is always the last step."""
    steps = [1]
    while steps[-1] * 2 < max_in_flight:
        steps.append(steps[-1] * 2)
    return steps + ([max_in_flight] if max_in_flight > 1 else [])


def max_stages(settings: Settings) -> int:
    """The most stages a calibration runs: the whole first pass, and every repeat of the
    most levels around its knee; each lasts warmup_s + stage_s (and its drain)."""
    return len(in_flight_steps(settings.max_in_flight)) + (2 * knee.AROUND + 1) * \
        settings.repeats


def shape_of(workload: Workload) -> dict:
    full = workload.as_dict()
    return {key: full[key] for key in SHAPE}


def calibrate(sessions: sessionmaker[Session], database_url: str, cluster: Cluster,
              workload: Workload, api: str, settings: Settings | None = None,
              progress: Callable[[capacity.Stage], None] = lambda stage: None,
              locked: bool = False) -> int:
    """Sweep the stages on `cluster`; return the calibration's id. Nothing is written before
    the settings, the workload's driver, the cluster's health and its lock are all fine.
    `locked`: the caller holds the cluster's lock (a run calibrating first)."""
    settings = settings or Settings()
    settings.check()
    workload = replace(workload, workers=settings.max_in_flight, drivers=1, rate=1.0)
    driver_for(cluster, workload, api).check_access()  # a checked driver is closed after
    lock = None if locked else ClusterLock(database_url, cluster.name).acquire(sessions)
    try:
        _check_healthy(cluster)
        with sessions.begin() as session:
            row = Calibration(cluster=cluster.name, cluster_kind=cluster.kind, load_api=api,
                              workload=shape_of(workload), settings=settings.as_dict(),
                              release=cluster.release, topology=topology_of(cluster))
            session.add(row)
            session.flush()
            calibration_id = row.id
        try:
            _sweep(sessions, calibration_id, driver_for(cluster, workload, api), workload,
                   settings, progress)
        except BaseException as exc:  # Ctrl-C included: the row must not stay "running"
            _finish(sessions, calibration_id, status="failed",
                    error=f"{type(exc).__name__}: {exc}"[:2000] or type(exc).__name__)
            raise
        return calibration_id
    finally:
        if lock is not None:
            lock.release()


def _check_healthy(cluster: Cluster) -> None:
    source = state_source(cluster)
    source.connect()
    try:
        state = source.state()
    finally:
        source.close()
    problem = cluster_problem(state.get("health", "UNKNOWN"), state)
    if problem:
        raise ClusterNotHealthy(f"cluster {cluster.name} is not healthy: {problem}; its "
                               "capacity now is not its capacity. Heal it, then calibrate")


def _sweep(sessions: sessionmaker[Session], calibration_id: int, driver, workload: Workload,
           settings: Settings, progress: Callable[[capacity.Stage], None]) -> None:
    driver.connect()
    try:
        runner = StageRunner(driver, workload, tag=f"cal{calibration_id}")
        runner.prefill()
        stages: list[capacity.Stage] = []

        def measure(n: int, repeat: int) -> None:
            load = runner.run(n, settings.warmup_s, settings.stage_s)
            stage = capacity.stage_of(n, load.samples, load.generator_cpu_cores, repeat,
                                      load.client_busy)
            stages.append(stage)
            with sessions.begin() as session:
                session.add(CalibrationStage(calibration_id=calibration_id,
                                             **stage.as_dict()))
            progress(stage)

        reason = None
        for n in in_flight_steps(settings.max_in_flight):
            measure(n, 0)
            reason = capacity.stop_reason(stages, settings.limits)
            if reason:
                break
        else:
            reason = f"reached the most in flight allowed ({settings.max_in_flight})"
        for n, repeat in knee.schedule(knee.repeat_levels(stages, settings.limits),
                                       settings.repeats):
            measure(n, repeat)
    finally:
        driver.close()
    best = knee.knee_of(stages, settings.limits)
    # whether the knee is only a lower bound, and why (service.results.generator)
    verdict = best and generator.knee_verdict(best.stages, stages, settings.limits)
    _finish(sessions, calibration_id, status="completed", stop_reason=reason,
            knee_in_flight=best and best.in_flight, capacity_ops=best and best.ops_s,
            capacity_mbps=best and best.mb_s,
            generator_bound=best is not None and verdict["lower_bound"],
            spread=best and {**best.spread(settings.repeats), "generator": verdict},
            error=None if best else NO_KNEE)


def _finish(sessions: sessionmaker[Session], calibration_id: int, **fields) -> None:
    with sessions.begin() as session:
        row = session.get(Calibration, calibration_id)
        for key, value in fields.items():
            setattr(row, key, value)
        row.ended_at = datetime.now(UTC)


@dataclass(frozen=True)
class ResolvedRate:
    workload: Workload  # with the rate in ops/s
    requested: str  # "50%"
    calibration_id: int
    capacity_ops: float
    calibrated_now: bool
    generator_bound: bool = False  # the capacity is a lower bound (capacity.generator_bound)
    # the p99 bound the knee kept to: the baseline check's "past the knee" (results.baseline)
    knee_bound_ms: float | None = None
    # the knee's lowest and highest stage (service.results.knee); None: one stage, no spread
    capacity_range: tuple[float, float] | None = None
    ops_s_range: tuple[float, float] | None = None  # the share of each

    def as_dict(self) -> dict[str, Any]:
        out = {"requested": self.requested, "ops_s": self.workload.rate,
               "calibration_id": self.calibration_id, "capacity_ops": self.capacity_ops,
               "calibrated_now": self.calibrated_now, "generator_bound": self.generator_bound,
               "knee_bound_ms": self.knee_bound_ms}
        if self.capacity_range is not None:
            # the same share of the knee's lowest and highest stage: the rate this share
            # means within the calibration's own noise
            out["capacity_range"] = list(self.capacity_range)
            out["ops_s_range"] = list(self.ops_s_range)
        return out


def latest_calibration(session: Session, cluster: Cluster, api: str, workload: Workload,
                       max_age_h: float) -> Calibration | None:
    """The newest completed calibration younger than max_age_h that found a capacity, if it
    applies to this cluster (its release and topology), API and cost shape
    (calibration_reuse.why_not_reused); an older one does not stand in for it."""
    since = datetime.now(UTC) - timedelta(hours=max_age_h)
    rows = session.execute(
        select(Calibration).where(Calibration.cluster == cluster.name,
                                  Calibration.load_api == api,
                                  Calibration.status == "completed",
                                  Calibration.capacity_ops.is_not(None),
                                  Calibration.ended_at >= since)
        .order_by(Calibration.id.desc())).scalars()
    wanted = shape_of(workload)
    for row in rows:
        why = why_not_reused(_key(row), cluster, api, wanted)
        if why is None:
            return row
        log.debug(f"calibration {row.id} does not apply: {why}")
    return None


def _key(row: Calibration) -> dict[str, Any]:
    return {"cluster": row.cluster, "api": row.load_api, "workload": row.workload,
            "release": row.release, "topology": row.topology}


def knee_bound_ms(row: Calibration) -> float | None:
    """The p99 bound a calibration's knee kept to (service.results.knee.p99_bound), from its
    stored stages in the order they were measured and its p99_factor."""
    stages = sorted(row.stages, key=lambda s: (s.repeat, s.in_flight))
    factor = (row.settings or {}).get("p99_factor", capacity.Limits().p99_factor)
    return knee.p99_bound(stages, capacity.Limits(p99_factor=factor))


def resolve_rate(sessions: sessionmaker[Session], database_url: str, cluster: Cluster,
                 workload: Workload, api: str, settings: Settings, max_age_h: float,
                 locked: bool = False) -> ResolvedRate:
    """A relative rate ("50%") in ops/s: that share of the latest calibration's capacity for
    this cluster, API and shape; a calibration is made first (with `settings`) if there is
    none younger than max_age_h."""
    share = workload.capacity_share
    with sessions() as session:
        found = latest_calibration(session, cluster, api, workload, max_age_h)
        calibration_id = found.id if found else None
    if calibration_id is None:
        log.info(f"no calibration of {cluster.name} ({api}) for this workload's shape, "
                 f"release and topology in the last {max_age_h:g} h: calibrating first")
        calibration_id = calibrate(sessions, database_url, cluster, workload, api, settings,
                                   locked=locked)
    with sessions() as session:
        row = session.get(Calibration, calibration_id)
        capacity_ops, generator_bound = row.capacity_ops, bool(row.generator_bound)
        spread = row.spread or {}
        bound = knee_bound_ms(row)
    ranged = (spread["min"], spread["max"]) if spread.get("stages", 1) > 1 else None
    if capacity_ops is None:
        raise NoCapacity(f"calibration {calibration_id} of {cluster.name} found no "
                                f"capacity ({row.error}): a rate of {workload.rate} cannot "
                                "be resolved")
    return ResolvedRate(workload=replace(workload, rate=round(capacity_ops * share, 1)),
                        requested=workload.rate.strip(), calibration_id=calibration_id,
                        capacity_ops=capacity_ops, calibrated_now=found is None,
                        generator_bound=generator_bound, knee_bound_ms=bound,
                        capacity_range=ranged,
                        ops_s_range=ranged and (round(ranged[0] * share, 1),
                                                round(ranged[1] * share, 1)))
