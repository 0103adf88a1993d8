"""The Faultline Chaos Toolkit control: steady load, cluster sampling and recording.

Declared in an experiment's `controls`, it makes `chaos run` and `faultline run`
record the same thing:
- before the experiment: open a run in PostgreSQL, record and log what the topology
  lets the system do about the faults (a `topology_note` event, and the figures'
  `topology_note` at the end), start sampling the cluster every second, prefill, start
  the open-loop load;
- before the method: wait out the ramp-up and the baseline window;
- after each activity: put it on the timeline; the fault activity sets t_fault,
  the restore activity marks the restore;
- after the experiment (rollbacks included): keep the load for `tail_s`, stop,
  store the ledger, verify every acknowledged object, store the journal and the
  figures.

Arguments (the control's provider `arguments`): `workload` (see
loadgen.workload), `fault` (name of the fault activity; default the method's
first action), `restore` (name of the restore activity), `tail_s` (default 10),
`api` (the load's API: "rados" or "swift"; default the cluster's native one, so
"swift" on a Ceph cluster loads it through RGW's Swift API), `baseline_after`
(name of a method activity that prepares the cluster, e.g. a fill: the baseline
window then starts when it ends, and the control keeps the load on for
`baseline_s` before the next activity), `run_id` (set by the worker: record into
this queued run instead of opening a new one), `calibration` (how a calibration is made
when the workload's rate is a share of the capacity, "50%", and none of its shape is
recent enough: stage_s, warmup_s, max_in_flight, repeats, p99_factor, p99_bound_ms, max_age_h;
see service.runs.calibration), `capacity` (a scale run: calibrate before the load starts
and again after the method activity it names, where the steady load ends; see
service.runs.capacity_runs).

A run started by Faultline (service.runs.launch) has taken the cluster's lock
(service.jobs.cluster_lock) and passed its preflight before chaoslib starts; the control
takes both over. Under the stock `chaos run`, the control takes the lock itself before
anything else: a run on a busy cluster stops there with the name of the run that holds
it, or waits up to $FAULTLINE_CLUSTER_WAIT_S seconds.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from typing import Any

from chaoslib.exceptions import InterruptExecution

from clusters.access.config import cluster_from_configuration
from clusters.access.inventory import Cluster
from loadgen.cpu import CpuMark
from loadgen.drivers import driver_for
from loadgen.metrics import DriverMetrics
from loadgen.metrics import serve as serve_metrics
from loadgen.session import LoadSession
from service.experiments.plan import RunPlan
from service.experiments.preflight import check_run
from service.experiments.topology import topology_notes
from service.jobs.cluster_lock import ClusterLock
from service.results import baseline, figures
from service.store import db
from service.store.fault_ledger import use_database_ledger
from service.store.recording import RunRecorder

from . import (
    calibration,
    capacity_runs,
    fault_timeline,
    recovery_settings,
    restore_checks,
    silences,
)
from .abort_watch import AbortWatch
from .baseline_gate import BaselineGate
from .distributed_load import DistributedLoad, defer_driver_job
from .final_status import Ending, final_status
from .heartbeat import Heartbeat
from .progress import progress_line
from .sampler import ClusterSampler

logger = logging.getLogger("chaostoolkit")


class RunControl:
    def __init__(self, experiment: dict, configuration: dict | None, arguments: dict,
                 cluster: Cluster | None = None, plan: RunPlan | None = None):
        """`cluster` and `plan` as service.runs.launch found and checked them; under the
        stock `chaos run`, read and checked here, before anything starts or changes."""
        self.experiment = experiment
        self.cluster = cluster or cluster_from_configuration(configuration)
        if plan is None:
            plan = check_run(experiment, self.cluster, arguments)
        self.plan = plan
        self.workload, self.api, self.abort_on = plan.workload, plan.api, list(plan.abort_on)
        # what this system can and cannot do about the faults in this topology, said once
        # before anything is injected (service.experiments.topology)
        self.topology_note = topology_notes(experiment, self.cluster)
        self.fault_name = plan.fault or fault_timeline.first_action(experiment)
        self.restore_name = plan.restore
        self.tail_s = plan.tail_s
        self.baseline_after = plan.baseline_after
        self.driver = driver_for(self.cluster, self.workload, self.api)
        self.sessions = db.session_factory()
        self.recorder: RunRecorder | None = None
        self.sampler: ClusterSampler | None = None
        self.load: LoadSession | DistributedLoad | None = None
        self.fault_ts: float | None = None
        self.restore_ts: float | None = None
        self.last_second: dict[str, float] = {}
        self._progress_stop = threading.Event()
        self.lock: ClusterLock | None = None
        self.metrics = DriverMetrics()
        self.metrics_server = None
        self.abort_watch: AbortWatch | None = None
        self.fault_started_ts: float | None = None
        self.fault_unreported = False
        self.not_taken: str | None = None  # the fault action's own word that it did not take
        self.on_invalid = plan.on_invalid
        # a rate given as a share of the capacity: resolved once locked
        self.calibration_settings = plan.calibration
        self.resolved_rate: calibration.ResolvedRate | None = None
        # a scale run's capacity before and after (service.runs.capacity_runs)
        self.capacity_plan = plan.capacity
        self.capacity: dict[str, dict[str, Any]] = {}
        self.load_ended_early = False
        self.validity: dict[str, Any] | None = None  # the baseline's verdict
        self._cpu_mark: CpuMark | None = None  # the generator's CPU from the load's start
        self.heartbeat: Heartbeat | None = None
        # what the restores found of the process faults (clusters.faults.supervision): a crashed
        # daemon's return, a daemon meant to stay down that came back
        self.daemon_outcomes: list[dict[str, Any]] = []

    @property
    def run_id(self) -> int | None:
        return self.recorder.run_id if self.recorder else None

    def begin(self, experiment_path: str | None, queued_run_id: int | None = None) -> None:
        if self.workload.capacity_share is not None:
            self._resolve_rate()
        fields = dict(title=self.experiment.get("title", "untitled"),
                      cluster=self.cluster.name, cluster_kind=self.cluster.kind,
                      load_api=self.api, workload=self.workload.as_dict(),
                      experiment_path=experiment_path)
        if queued_run_id is not None:
            self.recorder = RunRecorder.start_queued(self.sessions, queued_run_id, **fields)
        else:
            self.recorder = RunRecorder.create(self.sessions, **fields)
        logger.info(f"Faultline run {self.run_id} on {self.cluster.name}")
        if self.resolved_rate is not None:
            resolved = self.resolved_rate
            self.recorder.update(rate_requested=resolved.requested,
                                 calibration_id=resolved.calibration_id)
            self.recorder.event("rate_resolved", **resolved.as_dict())
        if self.topology_note:
            self.recorder.event("topology_note", notes=self.topology_note)
            for note in self.topology_note:
                logger.warning(f"Topology: {note}")
        # an abort alert silenced in Alertmanager would never stop the run: say so
        silences.record(self.recorder, self.abort_on, self.cluster.name)
        # the timers and limits that set the recovery figures, as the cluster has them now
        self.recorder.update(recovery_settings=recovery_settings.read(self.cluster, self.api))
        self.heartbeat = Heartbeat(self.recorder)  # the row names this process as its owner
        self.heartbeat.start()
        if self.capacity_plan is not None:  # before the load: the cluster to itself
            self._measure_capacity("before")
        # from here on every fault is written to PostgreSQL, stamped with this run
        use_database_ledger(self.sessions, run_id=self.run_id)
        self.sampler = ClusterSampler(self.cluster, self.recorder.cluster_samples)
        self.sampler.start()
        self.driver.connect()
        if self.workload.drivers > 1:  # the drivers' jobs on the load queue carry the load
            self.load = DistributedLoad(self.sessions, self.run_id, self.workload, self.driver,
                                        defer_driver_job(db.database_url()))
            count = self.load.prefill()  # queues the drivers, waits until each is ready
            self.recorder.event("drivers_ready", drivers=self.workload.drivers, objects=count)
        else:
            # unique across databases too: runs of another database share the pool
            self.load = LoadSession(self.driver, self.workload, self._on_samples,
                                    tag=f"r{self.run_id}-{uuid.uuid4().hex[:6]}")
            if self.workload.prefill:
                count = self.load.prefill()
                self.recorder.event("prefilled", objects=count)
        self._serve_metrics()
        self.abort_watch = AbortWatch(self.sessions, self.run_id, self.abort_on,
                                      self.fault_time, self._aborting)
        self.abort_watch.start()
        self.load.start()
        self._cpu_mark = CpuMark.now()
        self.metrics.load_running = True
        self.recorder.update(load_started_ts=self.load.started_at)
        self.recorder.event("load_started", ts=self.load.started_at,
                            rate=self.workload.rate)
        threading.Thread(target=self._progress, name="faultline-progress", daemon=True).start()

    def _resolve_rate(self) -> None:
        """The rate in ops/s, from the latest calibration of this shape (made now if there
        is none recent enough); the cluster's lock is already this run's."""
        resolved = calibration.resolve_rate(self.sessions, db.database_url(), self.cluster,
                                            self.workload, self.api,
                                            *self.calibration_settings, locked=True)
        self.workload, self.resolved_rate = resolved.workload, resolved
        logger.info(f"Rate {resolved.requested} of {self.cluster.name}'s capacity: "
                    f"{self.workload.rate:g} ops/s (calibration {resolved.calibration_id}: "
                    f"{resolved.capacity_ops:g} ops/s"
                    + (f", its repeats {resolved.capacity_range[0]:g}-"
                       f"{resolved.capacity_range[1]:g}" if resolved.capacity_range else "")
                    + (", made now)" if resolved.calibrated_now else ")"))
        if resolved.generator_bound:
            logger.warning(f"Calibration {resolved.calibration_id}'s load generator was the "
                           "limit at its knee: the capacity is a lower bound, and so this "
                           "rate's share of it")

    def _measure_capacity(self, which: str) -> None:
        self.capacity[which] = capacity_runs.measure(
            self.sessions, db.database_url(), self.cluster, self.workload, self.api,
            self.capacity_plan.settings, which)
        self.recorder.event("capacity_measured", which=which, **self.capacity[which])

    def _capacity_after(self) -> None:
        """End the steady load (a calibration beside it would measure both), then measure
        the capacity again."""
        if self.load is not None and not self.load_ended_early:
            self.load.stop()
            self.load_ended_early = True
            self.metrics.load_running = False
            self.recorder.event("load_ended", ts=time.time(),
                                reason="the capacity after the scale action is measured now")
            logger.info("The steady load ends here: the capacity is measured again")
        self._measure_capacity("after")

    def _serve_metrics(self) -> None:
        """The driver's /metrics, where the service's service discovery tells Prometheus."""
        addr = os.environ.get("FAULTLINE_DRIVER_METRICS_ADDR", "127.0.0.1")
        port = int(os.environ.get("FAULTLINE_DRIVER_METRICS_PORT", "0"))
        self.metrics_server, url = serve_metrics(self.metrics, addr, port)
        if addr in ("0.0.0.0", "::"):  # reachable from other hosts: say by which name
            url = url.replace(f"//{addr}:", f"//{socket.getfqdn()}:", 1)
        self.recorder.update(metrics_url=url)

    def _aborting(self, reason: str, detail: dict) -> None:
        self.recorder.event("abort_requested", reason=reason, **detail)

    def _on_samples(self, samples) -> None:
        self.metrics.add(samples)
        self.recorder.load_samples(samples)
        if samples:
            last = max(s.ts for s in samples)
            self.last_second = {
                "ops": sum(s.ops for s in samples if s.ts == last),
                "errors": sum(s.error_count for s in samples if s.ts == last)}

    def _progress(self) -> None:
        while not self._progress_stop.wait(5):
            logger.info(progress_line(self.run_id, time.time(), self.load.started_at,
                                      self.fault_ts, self.load_ended_early, self.last_second,
                                      self.sampler.latest or {}))

    def wait_baseline(self) -> None:
        start = self.load.started_at + self.workload.ramp_s
        until = start + self.workload.baseline_s
        if until > time.time():
            logger.info(f"Measuring the baseline for {until - time.time():.0f} s")
            time.sleep(max(0.0, until - time.time()))
        self.judge_baseline(start, until)

    def judge_baseline(self, start: float, end: float) -> None:
        """Judge the baseline window [start, end) before anything is injected
        (service.runs.baseline_gate). One that did not hold interrupts the run: nothing is
        injected, the rollbacks (idempotent restores) run, and the run ends `invalid` with
        the reason; unless the experiment asked to inject anyway (`baseline.on_invalid`)."""
        resolved = self.resolved_rate
        # judged against the knee only when the rate asked is past the capacity: at or below
        # it, a cluster slower than when calibrated is not an overload (the Swift lab at
        # 50% had runs with most operations past the bound, steady; bench P8)
        knee = resolved.knee_bound_ms if resolved and resolved.workload.rate > \
            resolved.capacity_ops else None
        gate = BaselineGate(self.sessions, self.run_id, self.workload, self.load, self.sampler,
                            self.recorder, self._cpu_mark, knee)
        verdict, window = gate.judge(start, end)
        verdict = {**verdict, "on_invalid": self.on_invalid}
        if self.validity is None or not verdict["valid"]:  # a fill's run judges twice
            self.validity = verdict
        self.recorder.event("baseline_judged", valid=verdict["valid"],
                            reasons=verdict["reasons"], hint=verdict["hint"])
        if verdict["valid"]:
            logger.info(f"The baseline held: {window.achieved_rate:.1f} ops/s, "
                        f"{window.errors} errors")
            return
        message = baseline.summary(verdict)
        if self.on_invalid == "inject-anyway":
            verdict["injected_anyway"] = True
            logger.warning(f"The baseline did not hold; injecting anyway, as the experiment "
                           f"asks: {message}")
            return
        logger.error(f"The baseline did not hold: {message}")
        raise InterruptExecution(
            f"Faultline: the baseline did not hold, nothing was injected: {message}")

    def fault_time(self) -> float | None:
        """When the fault was injected, as far as is known yet: an action with a pause after
        it reports only once the pause is over, but the cluster is hurt from its start."""
        return self.fault_ts if self.fault_ts is not None else self.fault_started_ts

    def activity_starting(self, activity: dict) -> None:
        if activity.get("name") == self.fault_name and self.fault_started_ts is None:
            before = (activity.get("pauses") or {}).get("before")
            self.fault_started_ts = time.time() + (before if isinstance(before, int | float)
                                                   else 0)
            # on record at once: a run whose process dies before the action reports (during
            # its pause after) is closed from its records (service.runs.reaper)
            self.recorder.event("fault_started", ts=self.fault_started_ts, name=self.fault_name)
            self.metrics.fault_from = self.fault_started_ts

    def activity_done(self, activity: dict, result: dict | None) -> None:
        name = activity.get("name")
        if self.fault_ts is None and self.fault_started_ts is not None and name != self.fault_name:
            # The fault's action never reported: the run was interrupted (a cancel, an abort)
            # during it or its pause (Chaos Toolkit may still call this for it, unfinished).
            # What comes next are its rollbacks, which must count as its restore; end()
            # writes the fault down from the journal.
            self.fault_ts = self.fault_started_ts
            self.fault_unreported = True
        status = (result or {}).get("status")
        ts = fault_timeline.timestamp((result or {}).get("end")) or time.time()
        self.recorder.event("activity", ts=ts, name=name, type=activity.get("type"),
                            status=status, output=_jsonable((result or {}).get("output")))
        if status == "succeeded":
            self._note_daemon_outcomes((result or {}).get("output"), ts)
        if (self.capacity_plan is not None and name == self.capacity_plan.after
                and status == "succeeded" and "after" not in self.capacity):
            self._capacity_after()
        if name == self.baseline_after and status == "succeeded" and self.fault_ts is None:
            # a setup step may have changed them (actions.recovery_tuning): stored as the
            # fault will meet them
            self.recorder.update(recovery_settings=recovery_settings.read(self.cluster,
                                                                          self.api))
            started = time.time()
            self.recorder.event("baseline_started", ts=started)
            self._cpu_mark = CpuMark.now(wall=started)
            logger.info(f"Measuring the baseline for {self.workload.baseline_s:.0f} s "
                        f"after {name}")
            time.sleep(self.workload.baseline_s)
            self.judge_baseline(started, started + self.workload.baseline_s)
        if name == self.fault_name and self.fault_ts is None:
            if status == "succeeded":
                self.fault_ts = ts
                self.recorder.update(fault_ts=ts)
                self.recorder.event("fault_injected", ts=ts, name=name,
                                    output=_jsonable(result.get("output")))
                output = result.get("output")
                if isinstance(output, dict) and output.get("not_taken"):
                    # the action ran but what it claims did not happen (no OOM kill, ...)
                    self.not_taken = str(output["not_taken"])
                    logger.error(f"The fault did not take: {self.not_taken}")
            else:
                self.metrics.fault_from = None
                self.recorder.event("fault_failed", ts=ts, name=name,
                                    error=str(result.get("exception") or "")[:2000])
        elif (name == self.restore_name and status == "succeeded" and self.fault_ts
              and self.restore_ts is None):
            # the restore counts from when it began: one that powers a zone back on and
            # starts its daemons one node at a time may end after the cluster has recovered,
            # which must not pass for recovery while the fault persisted
            begun = fault_timeline.timestamp((result or {}).get("start")) or ts
            # a crash its supervisor undid ended when the daemon came back, not when the
            # restore (which only waited for that) began
            back = [o["came_back_at"] for o in self.daemon_outcomes
                    if o.get("intent") == "crash" and o.get("came_back_at")
                    and not o.get("started_by_restore")]
            begun = max(back) if back else begun
            self.restore_ts = begun  # a rollback of the same name later restores nothing new
            self.metrics.fault_from = None
            self.recorder.event("restored", ts=begun, name=name, ended=ts)

    def _note_daemon_outcomes(self, output: Any, ts: float) -> None:
        """A restore of a process fault (actions.ceph.start_osd, ...) says what it found:
        put a crashed daemon's return and a broken `down` on the timeline."""
        if not (isinstance(output, dict) and isinstance(output.get("daemons"), list)
                and "deviations" in output):
            return
        for outcome in output["daemons"]:
            self.daemon_outcomes.append(outcome)
            if outcome.get("came_back_at"):
                self.recorder.event("daemon_restarted", ts=outcome["came_back_at"],
                                    daemon=outcome.get("daemon"), intent=outcome.get("intent"),
                                    after_s=outcome.get("came_back_after_s"),
                                    restarts=outcome.get("restarts"))
            if outcome.get("deviation"):
                logger.error(f"The fault's intent was not kept: {outcome['deviation']}")
                self.recorder.event("intent_not_kept", ts=ts, daemon=outcome.get("daemon"),
                                    reason=outcome["deviation"])

    def end(self, journal: dict | None) -> None:
        error, ended = None, time.monotonic()
        if self.abort_watch is not None:
            self.abort_watch.stop()
        if self.fault_started_ts is not None and (self.fault_ts is None or self.fault_unreported):
            self._record_unreported_fault(journal)
        try:
            if self.load is not None and self.load.started_at is not None \
                    and not self.load_ended_early:
                logger.info(f"Keeping the load on for {self.tail_s:.0f} s more")
                time.sleep(self.tail_s)
                restore_checks.wait_for_a_view_since(self.sampler, ended)
        finally:
            self._progress_stop.set()
            if self.load is not None:
                self.load.stop()
            self.metrics.load_running = False
            if self.sampler is not None:
                restore_checks.wait_for_daemons_back(journal, self.sampler, self.restore_ts)
                self.sampler.stop()
        try:
            if self.load is not None:
                entries = self.load.acknowledged()
                if not isinstance(self.load, DistributedLoad):  # its drivers stored theirs
                    self.recorder.ledger(entries)
                logger.info(f"Verifying {len(entries)} acknowledged objects")
                self.recorder.update(verify=self.load.verify().as_dict())
        except Exception as exc:  # the run's other records stay useful
            error = f"verify failed: {exc}"
            logger.error(error)
        finally:
            if self.driver is not None:
                self.driver.close()
        if self.load is not None and self.load.failure:
            error = self.load.failure
        unrestored = restore_checks.unrestored(journal, self.sampler, self.recorder)
        if unrestored and journal is not None:
            journal["status"] = "failed"  # so `chaos run` exits non-zero too
        with self.sessions() as session:
            result = figures.compute(session, self.run_id)
        result["topology_note"] = self.topology_note
        result["cluster_release"] = self.cluster.release  # the inventory's, e.g. "reef"
        with self.sessions() as session:  # a scale run's figures, or a measured capacity's
            scale = capacity_runs.is_scale_run(self.experiment, self.fault_name)
            result.update(capacity_runs.scale_figures(session, self.run_id, self.fault_ts, (
                self.capacity if self.capacity_plan else None), result.get("reasons", {}), scale))
        invalid = self._baseline_invalid()
        if self.validity is not None:
            result["validity"] = self.validity
            if invalid:
                result["reasons"] = baseline.reasons_when_invalid(result.get("reasons", {}))
        self._timeline_events(result)
        if self.daemon_outcomes:
            deviations = [o["deviation"] for o in self.daemon_outcomes if o.get("deviation")]
            result["fault_intent"] = {"kept": not deviations, "daemons": self.daemon_outcomes}
        status, error = final_status(Ending(
            journal_status=(journal or {}).get("status", "failed"),
            deviated=bool((journal or {}).get("deviated")), unrestored=unrestored, error=error,
            baseline_invalid=baseline.summary(self.validity) if invalid else None,
            deviations=[o["deviation"] for o in self.daemon_outcomes if o.get("deviation")],
            not_taken=self.not_taken,
            aborted=self.abort_watch.reason if self.abort_watch is not None else None))
        self.recorder.finish(status, figures=result, error=error, journal=_jsonable(journal))
        logger.info(f"Faultline run {self.run_id}: {status}; "
                    f"see `faultline report {self.run_id}`")

    def _baseline_invalid(self) -> bool:
        """The baseline did not hold and nothing was injected because of it."""
        return (self.validity is not None and not self.validity["valid"]
                and not self.validity.get("injected_anyway") and self.fault_ts is None)

    def _record_unreported_fault(self, journal: dict | None) -> None:
        """The fault of a run interrupted before its action reported it."""
        fault = fault_timeline.unreported_fault(journal, self.fault_name,
                                                self.fault_started_ts, time.time())
        if fault.failed:
            self.fault_ts = None
            self.recorder.event("fault_failed", ts=fault.ts, name=self.fault_name,
                                error=fault.text)
            return
        self.fault_ts = fault.ts
        self.recorder.update(fault_ts=self.fault_ts)
        self.recorder.event("fault_injected", ts=self.fault_ts, name=self.fault_name,
                            note=fault.text)

    def _timeline_events(self, result: dict) -> None:
        for kind, ts in figures.milestones(self.fault_ts, result):
            self.recorder.event(kind, ts=ts)

    def abandon(self, message: str) -> None:
        """Stop whatever begin() had started, and mark the run failed."""
        self._progress_stop.set()
        if self.abort_watch is not None:
            self.abort_watch.stop()
        for stop in (self.load and self.load.stop, self.sampler and self.sampler.stop,
                     self.driver and self.driver.close):
            if stop:
                try:
                    stop()
                except Exception as exc:  # keep stopping the others
                    logger.error(f"while abandoning run {self.run_id}: {exc}")
        if self.recorder is not None:
            self.recorder.finish("failed", error=message)
        self.release()

    def release(self) -> None:
        if self.heartbeat is not None:
            self.heartbeat.stop()
            self.heartbeat = None
        if self.metrics_server is not None:
            self.metrics_server.shutdown()
            self.metrics_server.server_close()
            self.metrics_server = None
        if self.lock is not None:
            self.lock.release()


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))
