"""A scale run times no failure: its detection and redundancy figures are n/a, with why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.runs import capacity_runs

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def _experiment(name: str) -> tuple[dict, str]:
    document = json.loads((EXPERIMENTS / name).read_text())
    return document, document["controls"][0]["provider"]["arguments"]["fault"]


@pytest.mark.parametrize(("name", "scale"), [
    ("ceph-scale-out.json", True), ("swift-scale-out.json", True),
    ("ceph-kill-osd.json", False), ("swift-hang-object-server.json", False)])
def test_a_scale_run_is_told_by_its_fault_action(name, scale):
    experiment, fault = _experiment(name)
    assert capacity_runs.is_scale_run(experiment, fault) is scale
    assert capacity_runs.is_scale_run(experiment, "no-such-activity") is False


def test_a_scale_run_has_no_detection_and_no_redundancy_figure_and_says_why():
    figures = capacity_runs.scale_figures(None, 1, None, None, {"errors": "kept"}, True)
    assert all(figures[key] is None for key in capacity_runs.FAILURE_ONLY)
    assert figures["reasons"]["errors"] == "kept"
    assert {figures["reasons"][key] for key in capacity_runs.FAILURE_ONLY} == {
        capacity_runs.NO_FAULT}
    assert "capacity" not in figures  # the control measured none: nothing to say of it
    measured = capacity_runs.scale_figures(None, 1, None, {}, {}, True)
    assert measured["capacity"]["change"] is None and measured["capacity"]["reason"]


def test_an_a_a_control_run_gets_its_capacity_and_keeps_its_failure_figures():
    # the A/A control pauses where a scale run scales: capacity measured, no NO_FAULT
    figures = capacity_runs.scale_figures(None, 1, None, {}, {}, False)
    assert "capacity" in figures and not set(capacity_runs.FAILURE_ONLY) & set(figures)
    assert "reasons" not in figures
    assert capacity_runs.scale_figures(None, 1, None, None, {}, False) == {}
