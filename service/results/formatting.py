"""How a figure reads, wherever it is shown: its label, its unit, a fraction as a percentage,
"n/a: reason" for a figure not measured, errors by class as rows. The CLI's comparison, the
run, compare and calibration pages and the HTML exports all print figures through here, so
one figure reads the same everywhere (DESIGN.md "What a run measures" names them)."""

from __future__ import annotations

from typing import Any

LABELS = {
    "baseline_ops": "baseline throughput",
    "baseline_mbps": "baseline bandwidth",
    "baseline_p50_ms": "baseline p50 latency",
    "baseline_p99_ms": "baseline p99 latency",
    "errors": "errors",
    "errors_by_class": "errors by class",
    "errors_by_op": "errors by operation",
    "deficit_ops": "deficit (operations not served on time)",
    "deficit_s": "deficit (seconds of full load)",
    "throughput_drop": "throughput drop (mean over the fault)",
    "worst_second_drop": "throughput drop (worst second)",
    "time_to_detect_s": "time to detect",
    "time_to_client_recovery_s": "time to client recovery",
    "time_to_full_redundancy_s": "time to full redundancy (while the fault persists)",
    "time_to_full_redundancy_after_restore_s": "time to full redundancy after the restore",
    "restore_at_s": "restored at (after the fault)",
    "time_to_alert_s": "time to alert",
    "data_at_risk_s": "data at risk",
    "lost_objects": "lost objects",
    "corrupt_objects": "corrupt objects",
    "capacity_change": "capacity change (after the scale action / before)",
}
UNITS = {
    "baseline_ops": " ops/s", "baseline_mbps": " MB/s", "baseline_p50_ms": " ms",
    "baseline_p99_ms": " ms", "time_to_detect_s": " s", "time_to_client_recovery_s": " s",
    "time_to_full_redundancy_s": " s", "time_to_full_redundancy_after_restore_s": " s",
    "restore_at_s": " s", "time_to_alert_s": " s", "data_at_risk_s": " s",
    "deficit_ops": " ops", "deficit_s": " s",
}
FRACTIONS = ("throughput_drop", "worst_second_drop", "capacity_change")


def label_of(key: str) -> str:
    return LABELS.get(key, key.replace("_", " "))


def format_value(key: str, value: Any) -> str:
    """A figure with its unit, as `faultline report` prints it."""
    if value is None:
        return "n/a"
    if key in FRACTIONS:
        return f"{value * 100:.1f}%"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items()) or "none"
    unit = UNITS.get(key, "")
    if isinstance(value, float):
        return f"{value:.3f}{unit}" if abs(value) < 10 else f"{value:.1f}{unit}"
    return f"{value}{unit}"


def with_reason(key: str, value: Any, reasons: dict[str, str] | None) -> str:
    """The figure, or "n/a: why" when it was not measured and the run said why."""
    if value is None and reasons and reasons.get(key):
        return f"n/a: {reasons[key]}"
    return format_value(key, value)


def count_rows(counts: dict[str, int] | None) -> list[tuple[str, int]]:
    """Errors by class (or by operation) as rows, the most frequent first."""
    return sorted((counts or {}).items(), key=lambda item: (-item[1], item[0]))
