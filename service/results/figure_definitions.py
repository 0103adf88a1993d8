"""One definition of each figure a run or a comparison gives: its key (the JSON's, kept for
good), its label (the words every page prints), its unit, its kind, and what reads it.

- kind "input": a setting the run was given or measured before its fault (the offered rate,
  the baseline, the restore time): shown, never judged;
- kind "outcome": what the fault did; only these get verdicts between trial groups, each
  with the margin inside which a difference is not meaningful (service.results.verdicts);
- kind "detail": rows under an outcome (errors by class), shown, not judged on their own.

The report, the comparison, the formatting, the API's labels, the verdicts and the
Prometheus gauges all read this table (DESIGN.md "What a run measures" says what each one
means; the README's table of figures repeats it in prose).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["input", "outcome", "detail"]


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    unit: str = ""  # appended to the value: " s", " ms", " ops/s"; a fraction prints as %
    kind: Kind = "outcome"
    fraction: bool = False  # 0.25 prints as 25.0%
    count: bool = False  # a whole number of operations or objects
    margin: float | None = None  # outcomes: a difference inside it is not meaningful
    report: bool = True  # shown in a run's report and the comparison's table
    gauge: tuple[str, str] | None = None  # Prometheus: the last run's value (name, help)


FIGURES: tuple[Figure, ...] = (
    Figure("baseline_ops", "baseline throughput", " ops/s", "input"),
    Figure("baseline_mbps", "baseline bandwidth", " MB/s", "input"),
    Figure("baseline_p50_ms", "baseline p50 latency", " ms", "input"),
    Figure("baseline_p99_ms", "baseline p99 latency", " ms", "input"),
    # operations: at 100 ops/s a stall 0.1 s longer fails 10 more
    Figure("errors", "errors", count=True, margin=10,
           gauge=("faultline_last_errors", "Client errors of the run")),
    Figure("errors_by_class", "errors by class", kind="detail"),
    Figure("errors_by_op", "errors by operation", kind="detail"),
    Figure("deficit_ops", "deficit (operations not served on time)", " ops", count=True,
           margin=10),
    Figure("deficit_s", "deficit (seconds of full load)", " s", margin=1.0,
           gauge=("faultline_last_deficit_seconds",
                  "Operations not served on time during the fault, in seconds of full load")),
    Figure("worst_second_drop", "throughput drop (worst second)", fraction=True, margin=0.05,
           gauge=("faultline_last_worst_second_drop_ratio",
                  "Throughput drop of the worst second after the fault (0-1)")),
    # ms: the p99 of a short fault window moves by tens of ms
    Figure("fault_p99_ms", "p99 latency during the fault", " ms", margin=50.0, report=False),
    Figure("time_to_detect_s", "time to detect", " s", margin=1.0,
           gauge=("faultline_last_time_to_detect_seconds",
                  "From the fault until the cluster reported it")),
    Figure("time_to_client_recovery_s", "time to client recovery", " s", margin=1.0,
           gauge=("faultline_last_time_to_client_recovery_seconds",
                  "From the fault until the load was back within 5% with no errors")),
    # the cluster is polled every few seconds
    Figure("time_to_full_redundancy_s", "time to full redundancy (while the fault persists)",
           " s", margin=5.0,
           gauge=("faultline_last_time_to_full_redundancy_seconds",
                  "From the fault until fully redundant while the fault persisted")),
    Figure("time_to_full_redundancy_after_restore_s",
           "time to full redundancy after the restore", " s", margin=5.0,
           gauge=("faultline_last_time_to_full_redundancy_after_restore_seconds",
                  "From the restore until fully redundant again")),
    Figure("restore_at_s", "restored at (after the fault)", " s", "input"),
    # Prometheus evaluates its rules every 5 s
    Figure("time_to_alert_s", "time to alert", " s", margin=5.0,
           gauge=("faultline_last_time_to_alert_seconds",
                  "From the fault until the first matching alert fired")),
    Figure("data_at_risk_s", "data at risk", " s", margin=5.0),
    # the recovery itself (Ceph: from a PG recovering or backfilling to full redundancy;
    # Swift: the replicators' catch-up, from the restore to full redundancy) and what the
    # clients kept of their baseline meanwhile: the recovery study's axes, so not in every
    # report
    Figure("recovery_s", "recovery (from recovery at work, or Swift's restore, to full "
                         "redundancy)", " s",
           margin=5.0, report=False),
    Figure("recovery_ops_ratio", "client throughput during recovery / baseline",
           fraction=True, margin=0.05, report=False),
    Figure("recovery_p99_ratio", "client p99 latency during recovery / baseline", "x",
           margin=0.5, report=False),
    # how much the recovery had to rebuild: what its length is for, shown, not judged
    Figure("recovery_objects", "objects to rebuild (most degraded during recovery)",
           kind="input", count=True, report=False),
    # any lost or corrupt object matters
    Figure("lost_objects", "lost objects", count=True, margin=0,
           gauge=("faultline_last_lost_objects", "Acknowledged objects not read back")),
    Figure("corrupt_objects", "corrupt objects", count=True, margin=0),
    # the consistency checker's classes (loadgen.consistency), counted over the whole load
    # and its verify; a read of an old version, or of a deleted object, matters at one
    Figure("stale_reads", "stale reads", count=True, margin=0),
    Figure("resurrected_objects", "resurrected objects", count=True, margin=0),
    Figure("unexpected_objects", "unexpected objects", count=True, margin=0),
    # acknowledged, not deleted, and missing from a listing read LISTING_DELAY_S (1 s) or
    # more later: what a client that lists a container before it reads does not find
    Figure("listing_gaps", "listing gaps", count=True, margin=0),
    # not a fault of the store: writes whose outcome the client could not know, found
    Figure("recovered_writes", "recovered writes (unknown outcome, found)", kind="detail",
           count=True),
    # kept in the JSON for old runs and old clients, no longer shown: the catch-up burst
    # after a stall washes the mean drop out (the deficit replaced it)
    Figure("throughput_drop", "throughput drop (mean over the fault)", fraction=True,
           report=False,
           gauge=("faultline_last_throughput_drop_ratio",
                  "Mean throughput drop from the fault until clients recovered (0-1)")),
    # a scale run's change in capacity, judged between its group and an A/A control group
    # (the same runs with a pause instead of the scale action), so that what the order of
    # two calibrations moves alone is taken out (service.results.capacity_change's margin)
    Figure("capacity_change", "capacity change (after the scale action / before)",
           fraction=True, margin=0.02, report=False),
)

BY_KEY = {f.key: f for f in FIGURES}
REPORT_KEYS = tuple(f.key for f in FIGURES if f.report)
# in a run's JSON beside the report's: the mean drop, for old runs and old clients
COMPAT_KEYS = ("throughput_drop",)
MARGINS = {f.key: f.margin for f in FIGURES if f.kind == "outcome" and f.margin is not None}
