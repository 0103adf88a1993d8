"""Downloadable reports of a run and of a comparison: one self-contained HTML file each,
with the chart library inlined, the data embedded, the figures and the caveats."""
# ruff: noqa: F811 (the fixtures imported from dashboard_support are parameters here)

from __future__ import annotations

import json
import re

import pytest
from dashboard_support import add_recovery, dash_app, dash_inventory, viewer  # noqa: F401
from factories import figures, make_run

from service.results.comparison import SELF_HEALING

REFERENCE = re.compile(r"""\b(?:src|href|action)\s*=\s*["']?([^"'\s>]*)""", re.IGNORECASE)


def assert_self_contained(html: str, draws: str) -> None:
    """No element loads or links anything: not another site, not this server; the chart
    libraries and the drawing code are in the file."""
    references = REFERENCE.findall(html)
    assert not [r for r in references if r.startswith(("http:", "https:", "//", "/"))
                or r and not r.startswith(("#", "data:"))], references
    assert "<script src" not in html and "<link" not in html
    assert " * Chart.js v4" in html  # the library itself, inlined
    assert "chartjs-plugin-annotation v3" in html and f"Faultline.{draws}(" in html


@pytest.fixture
def two_runs(rolled_back) -> list[int]:
    with rolled_back() as session:
        ceph = make_run(session, title="ceph kill osd", figures=figures(
            baseline_ops=100.0, time_to_detect_s=1.0, lost_objects=0))
        add_recovery(session, ceph)
        swift = make_run(session, kind="swift", title="swift kill object server",
                         fault="kill-object-server", dip_ops=50,
                         figures=figures(baseline_ops=98.5, lost_objects=0))
        add_recovery(session, swift, "swift")
        return [ceph.id, swift.id]


def test_a_run_report_is_a_self_contained_html_attachment(viewer, two_runs):
    ceph, _ = two_runs

    response = viewer.get(f"/runs/{ceph}/report.html")

    assert response.status_code == 200 and response.mimetype == "text/html"
    assert response.headers["Content-Disposition"] == \
        f'attachment; filename="faultline-run-{ceph}.html"'
    html = response.get_data(as_text=True)
    assert_self_contained(html, "drawRun")
    assert '<td data-figure="baseline_ops">100.0 ops/s</td>' in html
    assert '<td data-figure="time_to_detect_s">1.000 s</td>' in html
    assert "re-replicates" in html  # the caveat next to the numbers
    data = json.loads(re.search(r"const DATA = (.*);", html).group(1))
    assert len(data["load"]) == 60 and data["cluster"][35]["misplaced"] == 60


def test_a_comparison_report_is_a_self_contained_html_attachment(viewer, two_runs):
    ceph, swift = two_runs

    response = viewer.get(f"/compare/report.html?runs={ceph},{swift}")

    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == \
        f'attachment; filename="faultline-compare-{ceph}-{swift}.html"'
    html = response.get_data(as_text=True)
    assert_self_contained(html, "overlay")
    assert SELF_HEALING in html
    assert f'<span data-run="{swift}" data-figure="baseline_ops">98.5 ops/s</span>' in html
    labels = json.loads(re.search(r"Faultline.overlay\(.*?, (\[.*?\]),", html, re.S).group(1))
    assert labels == [{"label": f"run {ceph} · lab-ceph (ceph, rados)"},
                      {"label": f"run {swift} · lab-swift (swift, swift)"}]


@pytest.mark.parametrize(("path", "status", "message"), [
    ("/runs/987654/report.html", 404, "run 987654 does not exist"),
    ("/compare/report.html?runs=1", 400, "a comparison needs at least two different runs"),
])
def test_a_report_of_nothing_is_refused(viewer, path, status, message):
    response = viewer.get(path)

    assert response.status_code == status
    assert message in response.get_data(as_text=True)
