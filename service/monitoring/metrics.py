"""The service's Prometheus metrics, read from PostgreSQL at each scrape.

Nothing is counted in the web process itself (runs happen in workers, on other machines
too), so a custom collector asks the database what is true now: runs by status, the runs
going on, the faults still in the ledger (and those whose run is gone), and the last result
of every (cluster, experiment): the figures of its newest finished run and its verdict.

The live load figures (ops, errors, latency) are the drivers' own /metrics
(loadgen.metrics), found through the service's HTTP service discovery (api/prometheus.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePath

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from service.results.figure_definitions import FIGURES
from service.results.queries import STATUSES
from service.store.models import FaultRecord, Run

# figure key -> (metric name, help); seconds and ratios in base units, as Prometheus asks
RESULT_FIGURES = tuple((f.key, *f.gauge) for f in FIGURES if f.gauge)
RESULT_LABELS = ["cluster", "experiment"]
FINISHED = ("completed", "failed", "aborted", "interrupted", "invalid")


def experiment_name(run: Run) -> str:
    """The series' experiment label: the file's stem (ceph-kill-osd), else the title."""
    return PurePath(run.experiment_path).stem if run.experiment_path else run.title


class ServiceCollector(Collector):
    def __init__(self, sessions: sessionmaker[Session]):
        self.sessions = sessions

    def collect(self) -> Iterator[Metric]:
        with self.sessions() as session:
            yield self._runs_by_status(session)
            yield self._active_runs(session)
            yield from self._faults(session)
            yield from self._last_results(session)

    def _runs_by_status(self, session: Session) -> Metric:
        family = GaugeMetricFamily("faultline_runs", "Runs in the database by status",
                                   labels=["status"])
        counts = dict(session.execute(select(Run.status, func.count()).group_by(Run.status)).all())
        for status in STATUSES:
            family.add_metric([status], counts.get(status, 0))
        return family

    def _active_runs(self, session: Session) -> Metric:
        """1 for each run queued or running, with where it runs: alerts and Grafana panels
        join on cluster."""
        family = GaugeMetricFamily(
            "faultline_run_active", "A run queued (state=queued) or going on (state=running)",
            labels=["run_id", "cluster", "experiment", "state"])
        runs = session.execute(select(Run).where(Run.status.in_(("queued", "running")))
                               ).scalars()
        for run in runs:
            family.add_metric([str(run.id), run.cluster, experiment_name(run), run.status], 1)
        return family

    def _faults(self, session: Session) -> Iterator[Metric]:
        """Faults written down and not yet struck off by their restore. `orphaned`: its run
        is no longer running (it died, or the fault was injected outside a run) - the
        cluster stays broken until `faultline heal`."""
        active = GaugeMetricFamily("faultline_faults_active",
                                   "Faults injected and not yet restored", labels=["cluster"])
        orphaned = GaugeMetricFamily(
            "faultline_faults_orphaned",
            "Faults not restored whose run is not running (heal them)", labels=["cluster"])
        rows = session.execute(select(FaultRecord.cluster, Run.status)
                               .outerjoin(Run, Run.id == FaultRecord.run_id)).all()
        clusters = sorted({cluster for cluster, _ in rows} | set(self._clusters(session)))
        for cluster in clusters:
            mine = [status for c, status in rows if c == cluster]
            active.add_metric([cluster], len(mine))
            orphaned.add_metric([cluster], sum(status != "running" for status in mine))
        yield active
        yield orphaned

    def _clusters(self, session: Session) -> list[str]:
        return list(session.execute(select(Run.cluster).distinct()).scalars())

    def _last_results(self, session: Session) -> Iterator[Metric]:
        families = {key: GaugeMetricFamily(name, text, labels=RESULT_LABELS)
                    for key, name, text in RESULT_FIGURES}
        regression = GaugeMetricFamily(
            "faultline_last_regression",
            "1 if the newest scheduled run of the series was judged a regression or failure",
            labels=RESULT_LABELS)
        failed = GaugeMetricFamily(
            "faultline_last_run_failed", "1 if the newest finished run did not complete",
            labels=RESULT_LABELS)
        ended = GaugeMetricFamily("faultline_last_run_end_timestamp_seconds",
                                  "When the newest finished run ended", labels=RESULT_LABELS)
        for run in self._newest_finished(session):
            labels = [run.cluster, experiment_name(run)]
            figures = run.figures or {}
            for key, family in families.items():
                if isinstance(figures.get(key), int | float):
                    family.add_metric(labels, float(figures[key]))
            verdict = (run.verdict or {}).get("status")
            regression.add_metric(labels, float(verdict in ("regression", "failure")))
            failed.add_metric(labels, float(run.status != "completed"))
            if run.ended_at is not None:
                ended.add_metric(labels, run.ended_at.timestamp())
        yield from families.values()
        yield regression
        yield failed
        yield ended

    def _newest_finished(self, session: Session) -> list[Run]:
        newest = (select(func.max(Run.id)).where(Run.status.in_(FINISHED))
                  .group_by(Run.cluster, func.coalesce(Run.experiment_path, Run.title)))
        runs = session.execute(select(Run).where(Run.id.in_(newest))).scalars().all()
        # two files of one stem in two directories would collide: keep the newest
        seen: dict[tuple[str, str], Run] = {}
        for run in sorted(runs, key=lambda r: r.id):
            seen[(run.cluster, experiment_name(run))] = run
        return list(seen.values())


def registry(sessions: sessionmaker[Session]) -> CollectorRegistry:
    """A registry of the service's metrics only (not the process's default one, which a
    test's second app would register twice)."""
    reg = CollectorRegistry(auto_describe=False)
    reg.register(ServiceCollector(sessions))
    return reg
