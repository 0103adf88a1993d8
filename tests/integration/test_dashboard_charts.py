"""The charts keep the fault in view, in real Chromium on the real app and PostgreSQL: the
y-axis is not flattened by the end-of-run burst (and "full scale" shows it), the markers'
labels do not overlap, latency is a p50-p99 band, the comparison puts every run's fault at
0, and the calibration curve is scaled to its knee, which is marked. The pages are
photographed into docs/screenshots/, the README's pictures, from fixed data
(tests/integration/pictured.py), so they come out the same each time."""

from __future__ import annotations

import re
from pathlib import Path

import pictured
import pytest
from serving import chromium_page, served
from sqlalchemy import delete
from web_login import SECRET, log_in_browser

from service.accounts import services as accounts
from service.accounts.models import User
from service.store import db
from service.web.app import create_app

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
VIEWER = ("ops-viewer", "pictured-password")  # shown in the pictures' header
VIEWPORT = {"width": 1280, "height": 900}
STEADY_OPS = 100

# the y-scale, the p99 band and each marker label's box, read from Chart.js and its
# annotation plugin (the plugin's own element positions, as drawn)
CHART_STATE = """(id) => {
    const chart = Chart.getChart(document.getElementById(id));
    const plugin = Chart.registry.getPlugin('annotation');
    return {
        y: {min: chart.scales.y.min, max: chart.scales.y.max},
        x: {min: chart.scales.x.min, max: chart.scales.x.max},
        area: {x: chart.chartArea.left, y: chart.chartArea.top,
               width: chart.chartArea.width, height: chart.chartArea.height},
        datasets: chart.data.datasets.map(d => ({label: d.label, fill: d.fill || false,
            first: d.data.find(p => p.y !== null)})),
        labels: plugin.getAnnotations(chart).filter(a => a.label && a.label.options.display)
            .map(a => ({text: a.label.options.content, x: a.label.x, y: a.label.y,
                        width: a.label.width, height: a.label.height})),
    };
}"""


@pytest.fixture
def stored(database_url):
    sessions = db.session_factory(database_url)
    pictured.store(sessions)
    with sessions.begin() as session:
        session.execute(delete(User).where(User.name == VIEWER[0]))
        accounts.create_user(session, VIEWER[0], "viewer", VIEWER[1])
    yield sessions
    pictured.remove(sessions)
    with sessions.begin() as session:
        session.execute(delete(User).where(User.name == VIEWER[0]))


@pytest.fixture
def page(stored, database_url):
    app = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET})
    with served(app) as url, chromium_page(viewport=VIEWPORT) as page:
        errors = []
        page.on("pageerror", lambda error: errors.append(error))
        log_in_browser(page, url, *VIEWER)
        page.base_url = url
        yield page
        assert errors == []  # a script that failed half-way (a toggle, a chart)


def _chart(page, canvas_id: str) -> dict:
    page.wait_for_selector(f"#{canvas_id}[data-ready='1']", timeout=20_000)
    return page.evaluate(CHART_STATE, canvas_id)


def _set_full_scale(page, canvas_id: str, full: bool) -> dict:
    page.set_checked("#full-scale", full)
    return page.evaluate(CHART_STATE, canvas_id)


def _outside(chart: dict) -> list[str]:
    """The labels not wholly inside the chart's area (cut off, or drawn over an axis)."""
    area = chart["area"]
    return [label["text"] for label in chart["labels"]
            if not (area["x"] <= label["x"] and label["x"] + label["width"] <= area["x"]
                    + area["width"] and area["y"] <= label["y"] and label["y"]
                    + label["height"] <= area["y"] + area["height"])]


def _overlapping(labels: list[dict]) -> list[tuple[str, str]]:
    """Pairs of label boxes whose rectangles intersect."""
    def apart(a, b):
        return (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])
    return [(a["text"], b["text"]) for i, a in enumerate(labels) for b in labels[i + 1:]
            if not apart(a, b)]


def test_the_run_page_scales_to_the_dip_labels_its_markers_apart_and_bands_latency(page):
    page.goto(f"{page.base_url}/runs/{pictured.CEPH_RUN_ID}")
    throughput = _chart(page, "throughput")

    # the axis ends near the steady load, far below the burst: the dip to 0 spans it
    assert STEADY_OPS < throughput["y"]["max"] < pictured.BURST_OPS / 4, throughput["y"]
    assert throughput["y"]["min"] == 0
    assert STEADY_OPS / throughput["y"]["max"] > 0.6, throughput["y"]

    # every marker is labelled, and no two labels cover each other
    texts = sorted(label["text"] for label in throughput["labels"])
    assert texts == ["clients recovered", "detected", "fault", "fully redundant", "restored"]
    assert _overlapping(throughput["labels"]) == [] and _outside(throughput) == []
    assert len({label["y"] for label in throughput["labels"]}) > 1  # staggered, not moved off

    # latency: the p50 line and the p99 line above it, the band between them filled
    latency = _chart(page, "latency")
    assert [(d["label"], d["fill"]) for d in latency["datasets"]] == [
        ("p50 latency ms", False), ("p99 latency ms", "-1")]
    p50, p99 = (d["first"]["y"] for d in latency["datasets"])
    assert 0 < p50 < p99, latency["datasets"]
    assert _overlapping(latency["labels"]) == [] and _outside(latency) == []
    page.screenshot(path=str(SCREENSHOTS / "run-page.png"), full_page=True)

    # the figures as the CLI report prints them: fractions as percentages, units, n/a with
    # its reason, errors by class as a table (not 0.193, 15.0 bare, None or a dict)
    shown = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll(
        'td[data-figure]')].map(td => [td.dataset.figure, td.innerText.trim()]))""")
    assert re.fullmatch(r"[1-9]\d*\.\d%", shown["worst_second_drop"]), shown
    assert re.fullmatch(r"\d+ ops", shown["deficit_ops"]), shown
    assert re.fullmatch(r"\d+\.\d+ s", shown["deficit_s"]), shown
    assert re.fullmatch(r"\d+\.\d s", shown["time_to_client_recovery_s"]), shown
    assert re.fullmatch(r"\d+\.\d ops/s", shown["baseline_ops"]), shown
    assert shown["time_to_full_redundancy_s"].startswith("n/a: "), shown
    assert re.fullmatch(r"timeout\s+\d+", shown["errors_by_class"]), shown

    # "full scale" shows the burst, and unticking it brings the dip back
    assert _set_full_scale(page, "throughput", True)["y"]["max"] >= pictured.BURST_OPS
    assert _set_full_scale(page, "throughput", False)["y"] == throughput["y"]


def test_the_compare_page_puts_each_runs_fault_at_zero_on_a_scale_that_shows_the_dips(page):
    page.goto(f"{page.base_url}/compare?runs={pictured.CEPH_RUN_ID},{pictured.SWIFT_RUN_ID}")
    chart = _chart(page, "throughput")
    series = page.evaluate("""() => Chart.getChart(document.getElementById('throughput'))
        .data.datasets.map(d => d.data.filter(p => p.y === 0).map(p => p.x))""")

    # each run's stall starts at x = 0, its own fault, though the faults came at different
    # seconds of their loads
    assert [stall[0] for stall in series] == [0, 0], series
    assert chart["x"]["min"] == -pictured.CEPH.fault
    assert STEADY_OPS < chart["y"]["max"] < pictured.BURST_OPS / 4, chart["y"]
    assert sorted(label["text"] for label in chart["labels"]) == [
        "fault", f"run {pictured.CEPH_RUN_ID} restored", f"run {pictured.SWIFT_RUN_ID} restored"]
    assert _overlapping(chart["labels"]) == [] and _outside(chart) == []
    page.screenshot(path=str(SCREENSHOTS / "compare-page.png"), full_page=True)

    assert _set_full_scale(page, "throughput", True)["y"]["max"] >= pictured.BURST_OPS


def test_the_calibration_curve_is_scaled_to_its_knee_which_is_marked(page):
    page.goto(f"{page.base_url}/calibrations/{pictured.CALIBRATION_ID}")
    curve = _chart(page, "curve")
    p99_by_stage = {in_flight: p99 for in_flight, _, _, p99 in pictured.STAGES}

    # the axis reaches the stage after the knee (16 in flight), not the explosion past it
    assert p99_by_stage[16] <= curve["y"]["max"] < p99_by_stage[32] / 4, curve["y"]
    assert [label["text"] for label in curve["labels"]] == ["knee: 8 in flight, 800.0 ops/s"]
    assert _outside(curve) == []
    page.screenshot(path=str(SCREENSHOTS / "calibration-page.png"), full_page=True)

    assert _set_full_scale(page, "curve", True)["y"]["max"] >= p99_by_stage[32]
