"""The one table of figures (service.results.figure_definitions), and that everything which
shows or judges a figure reads it."""

from __future__ import annotations

from service.monitoring.metrics import RESULT_FIGURES
from service.results import formatting, report, verdicts
from service.results.figure_definitions import BY_KEY, COMPAT_KEYS, FIGURES, MARGINS


def test_each_key_and_each_label_is_defined_once():
    assert len(BY_KEY) == len(FIGURES)
    labels = [f.label for f in FIGURES]
    assert len(set(labels)) == len(labels)


def test_only_outcomes_are_judged_and_each_has_its_margin():
    assert set(verdicts.OUTCOMES) == {f.key for f in FIGURES if f.kind == "outcome"} - {
        "throughput_drop"}  # the mean drop is kept for old clients, never judged
    assert all(MARGINS[k] >= 0 for k in verdicts.OUTCOMES)
    assert not {f.key for f in FIGURES if f.kind == "input"} & set(verdicts.OUTCOMES)


def test_the_report_the_labels_and_the_units_read_the_table():
    assert report.FIGURE_KEYS == tuple(f.key for f in FIGURES if f.report)
    assert set(report.API_KEYS) == set(report.FIGURE_KEYS) | set(COMPAT_KEYS)
    assert all(formatting.label_of(f.key) == f.label for f in FIGURES)
    assert formatting.format_value("deficit_s", 2.5) == "2.500 s"
    assert formatting.format_value("capacity_change", 0.257) == "25.7%"


def test_gauges_are_in_prometheus_base_units():
    for key, name, _ in RESULT_FIGURES:
        figure = BY_KEY[key]
        if figure.unit == " s":
            assert name.endswith("_seconds"), name
        if figure.fraction:
            assert name.endswith("_ratio"), name
    assert {k for k, _, _ in RESULT_FIGURES} >= {"deficit_s", "lost_objects", "errors"}
