"""The run list and run page, served by the real app from a real PostgreSQL, seen by Chromium."""

from __future__ import annotations

import pytest
from serving import chromium_page, painted_pixels, served
from web_login import SECRET, log_in_browser

from loadgen.samples import Sample, new_histogram
from service.results import figures
from service.store import db
from service.store.recording import RunRecorder
from service.web.app import create_app


def _sample(second: int, start: float, ops: int) -> Sample:
    h = new_histogram()
    for _ in range(ops):
        h.record_value(2000)
    return Sample(second=second, ts=start + second, op="read", ops=ops, bytes=ops * 4096,
                  errors={}, missed=0, p50_ms=2.0 if ops else None,
                  p99_ms=2.0 if ops else None, max_ms=2.0 if ops else None,
                  histogram=h.encode().decode() if ops else "")


@pytest.fixture
def recorded_run(database_url) -> int:
    """A run written through the real recorder: 60 s of load, an outage at 30 s."""
    sessions = db.session_factory(database_url)
    start = 1_700_000_000.0
    recorder = RunRecorder.create(sessions, title="web page check", cluster="lab-ceph",
                                  cluster_kind="ceph", workload={"rate": 100, "ramp_s": 0})
    recorder.update(load_started_ts=start, fault_ts=start + 30.0)
    recorder.load_samples([_sample(s, start, 0 if 30 <= s < 33 else 100) for s in range(60)])
    recorder.cluster_samples([
        (start + s, "HEALTH_OK" if not 31 <= s < 45 else "HEALTH_WARN",
         {"fault_seen": 31 <= s < 45, "fully_redundant": not 31 <= s < 45,
          "at_risk": 31 <= s < 45, "num_osds": 4, "num_up_osds": 4, "num_in_osds": 4})
        for s in range(60)])
    recorder.event("fault_injected", ts=start + 30.0, name="kill-osd")
    recorder.update(verify={"checked": 10, "lost_objects": 0, "corrupt_objects": 0})
    recorder.update(recovery_settings={
        "system": "ceph", "release": "ceph version 16.2.15 (618f) pacific (stable)",
        "read_at": start - 5, "errors": [], "settings": [
            {"name": "mon_osd_down_out_interval", "value": "30", "default": "600",
             "where": "mon.a", "source": "file", "timer": True, "differs": []},
            {"name": "osd_max_backfills", "value": "1", "default": "1",
             "where": "osd.0 and 3 other OSDs up", "source": "default", "timer": False,
             "differs": []}]})
    with sessions() as session:
        result = figures.compute(session, recorder.run_id)
    recorder.finish("completed", figures=result)
    return recorder.run_id


@pytest.fixture
def server(database_url):
    app = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET})
    with served(app) as url:
        yield url


def test_run_page_shows_figures_and_draws_the_throughput_chart(recorded_run, server,
                                                                 make_user, tmp_path):
    with chromium_page() as page:
        log_in_browser(page, server, *make_user("viewer"))
        page.goto(f"{server}/")
        page.click(f"#runs a[href='/runs/{recorded_run}']")
        page.wait_for_selector("#throughput[data-ready='1']", timeout=15_000)
        assert page.inner_text("[data-figure='baseline_ops']") == "100.0 ops/s"
        assert page.inner_text("[data-figure='time_to_detect_s']") == "1.000 s"
        assert page.inner_text("[data-figure='lost_objects']") == "0"
        assert "+0.00 s\tfault injected" in page.inner_text("#timeline")
        # the recovery settings it ran under, and the lab's shortened timer as a caveat
        row = page.inner_text("#recovery-settings tr[data-setting='mon_osd_down_out_interval']")
        assert row.split("\t")[:4] == ["mon_osd_down_out_interval", "30", "600", "mon.a (file)"]
        assert ("mon_osd_down_out_interval is 30 s, 20x shorter than Ceph 16.2.15's default "
                "600 s") in page.inner_text("#caveats")
        # the chart drew something: the canvas is not blank
        assert painted_pixels(page, "throughput") > 1000
        page.screenshot(path=str(tmp_path / "run.png"), full_page=True)


def test_unknown_run_page_is_404(viewer_client):
    response = viewer_client.get("/runs/987654")
    assert response.status_code == 404
    assert b"run 987654 does not exist" in response.data
