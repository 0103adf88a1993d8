"""How a figure reads, wherever it is shown: its label, its unit, a fraction as a percentage,
"n/a: reason" for a figure not measured, errors by class as rows. The CLI's comparison, the
run, compare and calibration pages and the HTML exports all print figures through here, so
one figure reads the same everywhere (DESIGN.md "What a run measures" names them)."""

from __future__ import annotations

from typing import Any

from .figure_definitions import FIGURES

# the labels and units are the figures' own (service.results.figure_definitions)
LABELS = {f.key: f.label for f in FIGURES}
UNITS = {f.key: f.unit for f in FIGURES if f.unit}
FRACTIONS = tuple(f.key for f in FIGURES if f.fraction)


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
