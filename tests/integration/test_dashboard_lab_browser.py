"""What a user does on the dashboard, in real Chromium, against the real labs and a real
worker: log in as an operator, trigger the same fault class on Ceph (an OSD killed) and on
Swift (an object server killed) from the catalogue's form, watch each run's page draw the
load live while the run goes on, then tick both runs in the history and compare them.

The screenshots go to tests/artifacts/lab-*.png (the README's come from fixed data:
test_dashboard_charts.py); the runs' figures go to tests/artifacts/lab-runs.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests
from playwright.sync_api import Page
from serving import chromium_page, served
from sqlalchemy import delete, select, text
from web_login import SECRET, log_in_browser

from service.store.models import Run
from service.web.app import create_app

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"
RUN_TIMEOUT_MS = 600_000  # an OSD kill: detection, re-replication, restore, verification

# make test-full only: test_dashboard_browser.py draws the same pages on recorded runs
pytestmark = [pytest.mark.lab, pytest.mark.full]

POINTS = """() => Chart.getChart(document.getElementById('throughput'))
    .data.datasets[0].data.filter(p => p.y !== null).length"""
MARKS = """() => Object.values(Chart.getChart(document.getElementById('throughput'))
    .options.plugins.annotation.annotations).map(a => a.label.content)"""


@pytest.fixture
def server(database_url):
    """The real app on the test database and the labs' own inventory, served on loopback."""
    app = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET,
                      "EXPERIMENTS_DIR": str(REPO / "experiments")})
    with served(app) as url:
        yield url


@pytest.fixture
def operator(make_user, sessions):
    """A new operator; the runs it queued are deleted afterwards, their jobs with them."""
    name, password = make_user("operator")
    yield name, password
    with sessions.begin() as session:
        jobs = session.execute(select(Run.job_id).where(Run.requested_by == name,
                                                        Run.job_id.is_not(None))).scalars().all()
        session.execute(text("DELETE FROM procrastinate_jobs WHERE id = ANY(:ids)"),
                        {"ids": list(jobs)})
        session.execute(delete(Run).where(Run.requested_by == name))


def _trigger(page: Page, server: str, experiment: str, cluster: str) -> int:
    """Fill the experiment's form as a user would (a shorter baseline), confirm, submit; the
    dashboard lands on the queued run's page. Returns the run's id."""
    page.goto(f"{server}/experiments")
    page.click(f"a[href='/experiments/{experiment}/run']")
    page.select_option("#cluster", cluster)
    assert page.is_visible(f".scope[data-cluster='{cluster}']")
    page.fill("#baseline_s", "10")
    page.check("#confirm")
    page.click("#trigger button[type='submit']")
    page.wait_for_url(f"{server}/runs/*")
    assert "queued on " + cluster in page.inner_text("body")
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


def _watch_live(page: Page, run_id: int) -> None:
    """The page of a running run draws new seconds of load, and the fault mark, without being
    reloaded; once the run ends it reloads itself with the figures."""
    page.wait_for_selector("#status.status-running", timeout=300_000)
    page.wait_for_selector("#throughput[data-ready='1']", timeout=30_000)
    page.evaluate("() => { window.notReloaded = true; }")
    page.wait_for_function(f"() => ({POINTS})() >= 5", timeout=60_000)
    before = page.evaluate(POINTS)
    page.wait_for_function(f"() => ({POINTS})() >= {before + 4}", timeout=60_000)
    page.wait_for_function(f"() => ({MARKS})().includes('fault')", timeout=120_000)
    assert page.evaluate("() => window.notReloaded === true"), "the page reloaded to update"
    _scrape_driver(page, run_id)
    assert page.is_visible("#live")
    page.wait_for_selector("#status.status-completed, #status.status-failed, "
                           "#status.status-aborted", timeout=RUN_TIMEOUT_MS)
    page.wait_for_selector("#cluster[data-ready='1']", timeout=30_000)


def _scrape_driver(page: Page, run_id: int) -> None:
    """While the run goes on, the service's service discovery names its load driver, whose
    /metrics counts the operations done and says the fault is active."""
    groups = page.request.get(page.url.split("/runs/")[0] + "/prometheus/targets").json()
    mine = [g for g in groups if g["labels"]["run_id"] == str(run_id)]
    assert len(mine) == 1, groups
    text = requests.get(f"http://{mine[0]['targets'][0]}/metrics", timeout=10).text
    done = sum(float(line.split()[-1]) for line in text.splitlines()
               if line.startswith("faultline_driver_ops_total{"))
    assert done > 0, text
    assert "faultline_driver_fault_active 1.0" in text, text


def _figures(sessions, run_id: int) -> dict:
    with sessions() as session:
        run = session.get(Run, run_id)
        return {"run": run_id, "cluster": run.cluster, "status": run.status,
                "error": run.error, "figures": run.figures}


def test_a_user_triggers_ceph_and_swift_runs_watches_them_live_and_compares_them(
        ceph_cluster, swift_cluster, worker, server, operator, sessions):
    ARTIFACTS.mkdir(exist_ok=True)
    with chromium_page(viewport={"width": 1280, "height": 900}) as page:
        log_in_browser(page, server, *operator)

        ceph = _trigger(page, server, "ceph-kill-osd", "lab-ceph")
        _watch_live(page, ceph)
        assert "completed" in page.inner_text("#status"), _figures(sessions, ceph)
        assert page.inner_text("[data-figure='lost_objects']") == "0"
        page.screenshot(path=str(ARTIFACTS / "lab-run-page.png"), full_page=True)

        swift = _trigger(page, server, "swift-kill-object-server", "lab-swift")
        _watch_live(page, swift)
        assert "completed" in page.inner_text("#status"), _figures(sessions, swift)
        assert page.inner_text("[data-figure='lost_objects']") == "0"

        # the history: tick both runs, compare them
        page.goto(f"{server}/")
        page.check(f"input[name='runs'][value='{ceph}']")
        page.check(f"input[name='runs'][value='{swift}']")
        page.click("#compare button[type='submit']")
        page.wait_for_selector("#throughput[data-ready='1']", timeout=30_000)
        overlaid = page.evaluate("""() => Chart.getChart(document.getElementById(
            'throughput')).data.datasets.map(d => d.label)""")
        by_run = {label.split(" ·")[0]: label for label in overlaid}
        assert set(by_run) == {f"run {ceph}", f"run {swift}"}, overlaid
        assert "lab-ceph (ceph" in by_run[f"run {ceph}"]
        assert "lab-swift (swift" in by_run[f"run {swift}"]
        page.screenshot(path=str(ARTIFACTS / "lab-compare-page.png"), full_page=True)
    runs = [_figures(sessions, ceph), _figures(sessions, swift)]
    (ARTIFACTS / "lab-runs.json").write_text(json.dumps(runs, indent=2, default=str))
    for run in runs:
        assert run["status"] == "completed", run
        assert run["figures"]["lost_objects"] == 0, run
