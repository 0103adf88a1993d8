"""SQLAlchemy 2 models: runs, what they record, the fault ledger, schedules, uploaded
experiments. No I/O beyond the ORM. Users and API tokens are in service.accounts.models, on
this same Base."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

PG_INT_MAX = 2**31 - 1  # the largest id: ids are PostgreSQL integers


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSONB, list[Any]: JSONB}


class Run(Base):
    """One execution of an experiment on a cluster with a workload."""

    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(500))
    experiment_path: Mapped[str | None] = mapped_column(Text)
    cluster: Mapped[str] = mapped_column(String(200), index=True)
    cluster_kind: Mapped[str] = mapped_column(String(20))
    load_api: Mapped[str | None] = mapped_column(String(20))  # rados, swift, s3
    # queued, cancelled, running, completed, deviated, interrupted, invalid (its baseline did
    # not hold: nothing injected), failed
    status: Mapped[str] = mapped_column(String(20), default="running", index=True)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True),
                                                 server_default=func.now())
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    load_started_ts: Mapped[float | None] = mapped_column(Float)
    fault_ts: Mapped[float | None] = mapped_column(Float)
    workload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    figures: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    verify: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    # `faultline clean` deleted the acknowledged objects: when, and what it found
    objects_removed: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    journal: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    # what decided the cluster's recovery, read before the fault
    # (service/runs/recovery_settings.py): None for a run that never got that far
    recovery_settings: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    error: Mapped[str | None] = mapped_column(Text)
    # A run made by the queue: the document and target the worker runs, its job, who asked
    experiment: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    inventory: Mapped[str | None] = mapped_column(Text)
    job_id: Mapped[int | None] = mapped_column(BigInteger)
    requested_by: Mapped[str | None] = mapped_column(String(200))
    # the admin who let it override the blast-radius guard (allow_unavailable), if it does
    guard_override_by: Mapped[str | None] = mapped_column(String(200))
    queued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # a scheduled run: its series is (schedule, cluster, experiment file)
    schedule_id: Mapped[int | None] = mapped_column(
        ForeignKey("schedules.id", ondelete="SET NULL"), index=True)
    verdict: Mapped[dict[str, Any] | None] = mapped_column(JSONB)  # against its series
    metrics_url: Mapped[str | None] = mapped_column(Text)  # the driver's, while it runs
    # the process that runs it (clusters.processes.ProcessOwner) and when it last said it
    # was alive (database time): how a run whose process died is found (service.runs.reaper)
    owner_pid: Mapped[int | None] = mapped_column(Integer)
    owner_host: Mapped[str | None] = mapped_column(String(255))
    owner_start: Mapped[str | None] = mapped_column(String(200))
    owner_seen_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # a rate asked as a share of the capacity ("50%"): workload["rate"] is what it resolved
    # to, from this calibration
    rate_requested: Mapped[str | None] = mapped_column(String(20))
    calibration_id: Mapped[int | None] = mapped_column(
        ForeignKey("calibrations.id", ondelete="SET NULL"))
    # one of `trials` repeats of an experiment (`faultline run --trials N`), compared as a
    # group: its figures as median and spread (service.results.trial_groups)
    trial_group: Mapped[str | None] = mapped_column(String(32), index=True)
    trial_index: Mapped[int | None] = mapped_column(Integer)
    trials: Mapped[int | None] = mapped_column(Integer)

    events: Mapped[list[Event]] = relationship(back_populates="run", order_by="Event.ts",
                                               cascade="all, delete-orphan")


class Event(Base):
    """A moment on a run's timeline: fault injected, cluster noticed, restored, healthy."""

    __tablename__ = "events"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    ts: Mapped[float] = mapped_column(Float)
    kind: Mapped[str] = mapped_column(String(50))
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)

    run: Mapped[Run] = relationship(back_populates="events")


class LoadSample(Base):
    """One second of one operation type, as the load generator saw it."""

    __tablename__ = "load_samples"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    ts: Mapped[float] = mapped_column(Float)
    op: Mapped[str] = mapped_column(String(20))
    ops: Mapped[int] = mapped_column(Integer)
    bytes: Mapped[int] = mapped_column(BigInteger)
    errors: Mapped[int] = mapped_column(Integer)
    errors_by_class: Mapped[dict[str, Any]] = mapped_column(default=dict)
    missed: Mapped[int] = mapped_column(Integer, default=0)
    p50_ms: Mapped[float | None] = mapped_column(Float)
    p99_ms: Mapped[float | None] = mapped_column(Float)
    max_ms: Mapped[float | None] = mapped_column(Float)
    histogram: Mapped[str] = mapped_column(Text, default="")
    # p50 and p99 of the whole second, every op type's histogram merged (the same on each op's
    # row of the second), merged once when stored: what the run page draws
    # (service.results.series)
    second_p50_ms: Mapped[float | None] = mapped_column(Float)
    second_p99_ms: Mapped[float | None] = mapped_column(Float)


class ClusterSample(Base):
    """The cluster's own view of itself at one moment (health, PGs, degraded objects)."""

    __tablename__ = "cluster_samples"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    ts: Mapped[float] = mapped_column(Float)
    health: Mapped[str] = mapped_column(String(30))
    state: Mapped[dict[str, Any]] = mapped_column(default=dict)


class RunDriver(Base):
    """One load driver of a run whose workload names several (`drivers`): a job on the
    `load` queue, run by whichever host's `faultline worker --queue load` takes it."""

    __tablename__ = "run_drivers"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"),
                                        primary_key=True)
    index: Mapped[int] = mapped_column(Integer, primary_key=True)
    # queued -> ready (connected, prefilled) -> running -> stopped -> verified; or failed
    state: Mapped[str] = mapped_column(String(20), default="queued")
    host: Mapped[str | None] = mapped_column(String(255))
    pid: Mapped[int | None] = mapped_column(Integer)
    start_at: Mapped[float | None] = mapped_column(Float)  # agreed by the run, wall clock
    stop_at: Mapped[float | None] = mapped_column(Float)
    verify_at: Mapped[float | None] = mapped_column(Float)  # when the run asked for it
    prefilled: Mapped[int] = mapped_column(Integer, default=0)
    ops: Mapped[int] = mapped_column(BigInteger, default=0)
    error: Mapped[str | None] = mapped_column(Text)
    # its verify of its own share (loadgen.verify.VerifyResult.as_dict), with its history's
    # consistency classes: the run merges them (loadgen.verify.merged)
    verify: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True),
                                                 server_default=func.now(),
                                                 onupdate=func.now())


class LedgerEntry(Base):
    """An acknowledged write, so the verify phase can read it back."""

    __tablename__ = "ledger_entries"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"),
                                        primary_key=True)
    container: Mapped[str] = mapped_column(String(200), primary_key=True)
    name: Mapped[str] = mapped_column(String(500), primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)
    version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class Alert(Base):
    """An alert as Alertmanager posted it to the webhook (firing or resolved), on the run
    going on on its cluster at the time (none: no run was)."""

    __tablename__ = "alerts"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"),
                                               index=True)
    alertname: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20))  # firing, resolved
    fingerprint: Mapped[str] = mapped_column(String(64))
    labels: Mapped[dict[str, Any]] = mapped_column(default=dict)
    annotations: Mapped[dict[str, Any]] = mapped_column(default=dict)
    starts_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ends_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True),
                                                  server_default=func.now())


class FaultRecord(Base):
    """A fault written down before it was injected and not restored yet (the service's
    backend of clusters.safety.fault_ledger; one row per
    clusters.safety.fault_ledger.FaultEntry)."""

    __tablename__ = "faults"
    __table_args__ = (Index("ix_faults_cluster_key", "cluster", "key"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # uuid4 hex
    cluster: Mapped[str] = mapped_column(String(200))
    key: Mapped[str] = mapped_column(String(200))  # what is broken: "daemon:osd.1", ...
    description: Mapped[str] = mapped_column(Text)
    restore: Mapped[str] = mapped_column(String(200))  # dotted path under actions.
    arguments: Mapped[dict[str, Any]] = mapped_column(default=dict)  # which fault
    # what the injection did, read by the restore (never taken from an experiment)
    record: Mapped[dict[str, Any]] = mapped_column(default=dict,
                                                   server_default=text("'{}'::jsonb"))
    injected_at: Mapped[float] = mapped_column(Float)
    owner_pid: Mapped[int] = mapped_column(Integer)
    owner_host: Mapped[str] = mapped_column(String(255))
    # A run deleted later must not take the record of a fault still in place with it.
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))


class Schedule(Base):
    """A cron expression in a time zone, an experiment or a suite, its clusters, a workload."""

    __tablename__ = "schedules"
    __table_args__ = (CheckConstraint("(experiment_path IS NULL) <> (suite_path IS NULL)",
                                      name="ck_schedules_experiment_or_suite"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    cron: Mapped[str] = mapped_column(String(200))
    timezone: Mapped[str] = mapped_column(String(100), default="UTC")
    experiment_path: Mapped[str | None] = mapped_column(Text)
    suite_path: Mapped[str | None] = mapped_column(Text)
    clusters: Mapped[list[Any]] = mapped_column(default=list)  # for an experiment
    workload: Mapped[dict[str, Any]] = mapped_column(default=dict)  # overrides
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_by: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True),
                                                 server_default=func.now())
    # slots up to here have been considered; a new schedule starts from its creation
    checked_until: Mapped[datetime] = mapped_column(DateTime(timezone=True),
                                                    server_default=func.now())


class ScheduleSlot(Base):
    """One due time of a schedule, enqueued once: the key makes a second enqueue a no-op."""

    __tablename__ = "schedule_slots"

    schedule_id: Mapped[int] = mapped_column(ForeignKey("schedules.id", ondelete="CASCADE"),
                                             primary_key=True)
    slot: Mapped[datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    run_ids: Mapped[list[Any]] = mapped_column(default=list)
    error: Mapped[str | None] = mapped_column(Text)  # why the slot queued no run
    enqueued_at: Mapped[datetime] = mapped_column(DateTime(timezone=True),
                                                  server_default=func.now())


class UploadedExperiment(Base):
    """A Chaos Toolkit experiment uploaded through the API (checked with chaoslib first),
    beside the files under experiments/; a run of it keeps its own copy of the document."""

    __tablename__ = "uploaded_experiments"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    title: Mapped[str] = mapped_column(String(500))
    document: Mapped[dict[str, Any]] = mapped_column()
    uploaded_by: Mapped[str | None] = mapped_column(String(200))
    uploaded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True),
                                                  server_default=func.now())


class Calibration(Base):
    """A closed-loop sweep of one workload shape on one cluster (service.runs.calibration):
    its stages, and its knee, the cluster's capacity for that shape."""

    __tablename__ = "calibrations"

    id: Mapped[int] = mapped_column(primary_key=True)
    cluster: Mapped[str] = mapped_column(String(200), index=True)
    cluster_kind: Mapped[str] = mapped_column(String(20))
    load_api: Mapped[str] = mapped_column(String(20))  # rados, swift, s3
    # the shape: object sizes, mix, containers, objects (the rate and workers do not apply)
    workload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # stage length, warm-up, the bounds of the sweep and of the knee
    settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(20), default="running")  # completed, failed
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True),
                                                 server_default=func.now())
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    stop_reason: Mapped[str | None] = mapped_column(Text)  # why the sweep ended where it did
    knee_in_flight: Mapped[int | None] = mapped_column(Integer)
    capacity_ops: Mapped[float | None] = mapped_column(Float)  # ops/s at the knee
    capacity_mbps: Mapped[float | None] = mapped_column(Float)
    # the knee's stage had a busy load generator: the capacity is at least capacity_ops
    generator_bound: Mapped[bool | None] = mapped_column(Boolean)
    error: Mapped[str | None] = mapped_column(Text)
    # the knee rule's figures (service.results.knee): each repeated level's throughputs, the
    # best level, the threshold, and the knee's min/median/max; None before repeats existed
    spread: Mapped[dict[str, Any] | None] = mapped_column()
    # what it was made on, the key of its reuse (service.runs.calibration_reuse): the
    # inventory's release and the topology's fingerprint; None on a row made before them
    release: Mapped[str | None] = mapped_column(String(100))
    topology: Mapped[dict[str, Any] | None] = mapped_column()

    stages: Mapped[list[CalibrationStage]] = relationship(
        back_populates="calibration",
        order_by="(CalibrationStage.in_flight, CalibrationStage.repeat)",
        cascade="all, delete-orphan")


class CalibrationStage(Base):
    """One stage of a calibration: a closed loop at `in_flight` requests, its measured
    seconds' throughput, percentiles, errors and merged latency histogram."""

    __tablename__ = "calibration_stages"

    calibration_id: Mapped[int] = mapped_column(
        ForeignKey("calibrations.id", ondelete="CASCADE"), primary_key=True)
    in_flight: Mapped[int] = mapped_column(Integer, primary_key=True)
    # 0: the first pass; 1, 2, ...: the level measured again around the knee
    repeat: Mapped[int] = mapped_column(Integer, primary_key=True, default=0,
                                        server_default="0")
    seconds: Mapped[int] = mapped_column(Integer)
    ops: Mapped[int] = mapped_column(BigInteger)
    ops_s: Mapped[float] = mapped_column(Float)
    mb_s: Mapped[float] = mapped_column(Float)
    errors: Mapped[int] = mapped_column(Integer)
    errors_by_class: Mapped[dict[str, Any]] = mapped_column(default=dict)
    p50_ms: Mapped[float | None] = mapped_column(Float)
    p90_ms: Mapped[float | None] = mapped_column(Float)
    p99_ms: Mapped[float | None] = mapped_column(Float)
    p999_ms: Mapped[float | None] = mapped_column(Float)
    histogram: Mapped[str] = mapped_column(Text, default="")
    generator_cpu_cores: Mapped[float | None] = mapped_column(Float)

    calibration: Mapped[Calibration] = relationship(back_populates="stages")
