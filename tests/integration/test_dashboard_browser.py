"""The dashboard in real Chromium, served by the real app from a real PostgreSQL: a recorded
run's page draws its three charts, the comparison overlays two runs, and a schedule's series
page draws its trends. Screenshots go to tests/artifacts/ (not committed)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import yaml
from dashboard_support import EXPERIMENTS, add_recovery, inventory_spec
from factories import START, make_run
from serving import chromium_page, painted_pixels, served
from sqlalchemy import delete
from web_login import SECRET, log_in_browser

from loadgen.samples import Sample, new_histogram
from service.results import figures
from service.store import db
from service.store.models import Event, Run, Schedule
from service.store.recording import RunRecorder
from service.web.app import create_app

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def _second(second: int) -> list[Sample]:
    """One second of an OSD kill as a client sees it: a 3 s stall, slow reads, some errors."""
    stalled, slow = 30 <= second < 33, 33 <= second < 40
    ops = 0 if stalled else 100
    histogram = new_histogram()
    for i in range(ops):
        histogram.record_value((30_000 if slow else 2_000) + 37 * i)
    errors = {"timeout": 4} if second == 33 else {}
    return [Sample(second=second, ts=START + second, op="read", ops=ops, bytes=ops * 4096,
                   errors=errors, missed=0, p50_ms=None, p99_ms=None, max_ms=None,
                   histogram=histogram.encode().decode() if ops else "")]


@pytest.fixture
def stored(database_url):
    """A recorded Ceph run (load with latencies, recovery, events), a Swift run to compare it
    with, and a schedule whose fourth night regressed; all deleted afterwards."""
    sessions = db.session_factory(database_url)
    recorder = RunRecorder.create(sessions, title="Ceph survives the crash of one OSD",
                                  cluster="lab-ceph", cluster_kind="ceph",
                                  workload={"rate": 100, "ramp_s": 0, "object_size": 4096},
                                  experiment_path="experiments/ceph-kill-osd.json")
    recorder.update(load_started_ts=START, fault_ts=START + 30.0)
    recorder.load_samples([s for second in range(60) for s in _second(second)])
    recorder.event("fault_injected", ts=START + 30.0, name="kill-osd")
    recorder.event("restored", ts=START + 45.0, name="start-osd")
    with sessions() as session:
        add_recovery(session, session.get(Run, recorder.run_id))
    recorder.update(verify={"checked": 10, "lost_objects": 0, "corrupt_objects": 0})
    with sessions() as session:
        recorder.finish("completed", figures=figures.compute(session, recorder.run_id))
    ids = [recorder.run_id]
    with sessions() as session:
        swift = make_run(session, kind="swift", title="Swift survives the crash of one object "
                         "server", fault="kill-object-server", dip_ops=50)
        add_recovery(session, swift, "swift")
        ids.append(swift.id)
    with sessions.begin() as session:
        schedule = Schedule(name=f"nightly {uuid.uuid4().hex[:8]}", cron="0 2 * * *",
                            timezone="UTC", experiment_path="experiments/ceph-kill-osd.json",
                            clusters=["lab-ceph"], workload={}, enabled=True)
        session.add(schedule)
    with sessions() as session:
        for night, value in enumerate((50.0, 53.0, 51.0, 84.0)):
            run = make_run(session, title="nightly", seconds=1)
            run.schedule_id = schedule.id
            run.experiment_path = "experiments/ceph-kill-osd.json"
            run.figures = {"time_to_full_redundancy_s": value, "throughput_drop": 0.2,
                           "errors": 3 + night, "time_to_client_recovery_s": 12.0 + night,
                           "time_to_full_redundancy_after_restore_s": 20.0}
            reason = "time to full redundancy 84.0 s is worse than the last 3 runs"
            run.verdict = ({"status": "regression", "summary": reason, "findings": [
                {"figure": "time_to_full_redundancy_s", "reason": reason}]}
                if value == 84.0 else {"status": "ok", "summary": "fine", "findings": []})
            session.commit()
            ids.append(run.id)
    with sessions() as session:
        live = make_run(session, title="a run going on", status="running", seconds=40)
        ids.append(live.id)
    yield {"run": ids[0], "swift": ids[1], "schedule": schedule.id, "live": live.id,
           "sessions": sessions}
    with sessions.begin() as session:
        session.execute(delete(Run).where(Run.id.in_(ids)))
        session.execute(delete(Schedule).where(Schedule.id == schedule.id))


@pytest.fixture
def server(database_url, tmp_path):
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump(inventory_spec()))
    app = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET,
                      "INVENTORY": str(inventory), "EXPERIMENTS_DIR": str(EXPERIMENTS)})
    with served(app) as url:
        yield url


def _finish(sessions, run_id: int) -> None:
    """What the control does when a run ends: its samples and its final status."""
    with sessions() as session:
        add_recovery(session, session.get(Run, run_id))
    with sessions.begin() as session:
        run = session.get(Run, run_id)
        run.status, run.figures = "completed", {"baseline_ops": 100.0}


def test_the_dashboard_draws_runs_live_and_recorded_comparisons_schedules_and_clusters(
        stored, server, make_user):
    ARTIFACTS.mkdir(exist_ok=True)
    with chromium_page(viewport={"width": 1280, "height": 900}) as page:
        log_in_browser(page, server, *make_user("viewer"))

        # the run page: three charts with the fault and the restore marked
        page.goto(f"{server}/runs/{stored['run']}")
        page.wait_for_selector("#cluster[data-ready='1']", timeout=20_000)
        charts = page.evaluate("""() => ["throughput", "latency", "cluster"].map(id => {
            const chart = Chart.getChart(document.getElementById(id));
            return {id: id, labels: chart.data.datasets.map(d => d.label),
                    points: chart.data.datasets.map(d => d.data.filter(
                        p => p.y !== null).length),
                    marks: Object.values(chart.options.plugins.annotation.annotations)
                        .map(a => a.label.content)};
        })""")
        assert [c["labels"] for c in charts] == [
            ["ops/s", "errors/s", "not started/s"], ["p50 latency ms", "p99 latency ms"],
            ["degraded objects", "misplaced objects", "PGs active+clean", "PGs in all"]]
        assert charts[0]["points"] == [60, 60, 60] and charts[1]["points"] == [57, 57]
        assert charts[2]["points"] == [60, 60, 60, 60]
        for chart in charts:
            assert {"fault", "restored"} <= set(chart["marks"]), chart
        for canvas in ("throughput", "latency", "cluster"):
            assert painted_pixels(page, canvas) > 1000, canvas
        assert "+0.00 s\tfault injected" in page.inner_text("#timeline")
        page.screenshot(path=str(ARTIFACTS / "run-page.png"), full_page=True)

        # the comparison, overlaid on the fault
        page.goto(f"{server}/compare?runs={stored['run']},{stored['swift']}")
        page.wait_for_selector("#throughput[data-ready='1']", timeout=20_000)
        assert painted_pixels(page, "throughput") > 1000
        page.screenshot(path=str(ARTIFACTS / "compare-page.png"), full_page=True)

        # the schedules, and the series with its regression night
        page.goto(f"{server}/schedules")
        page.click(f"#schedules a[href='/schedules/{stored['schedule']}']")
        page.wait_for_selector("#trend-0-time_to_full_redundancy_s[data-ready='1']",
                               timeout=20_000)
        colors = page.evaluate("""() => Chart.getChart(document.getElementById(
            'trend-0-time_to_full_redundancy_s')).data.datasets[0].pointBackgroundColor""")
        assert colors == ["#06c", "#06c", "#06c", "#c00"]
        assert painted_pixels(page, "trend-0-time_to_full_redundancy_s") > 1000
        assert "worse than the last 3 runs" in page.inner_text("tr.flagged")
        page.screenshot(path=str(ARTIFACTS / "schedule-page.png"), full_page=True)

        # a run going on: its page polls, and shows the figures once it has ended
        page.goto(f"{server}/runs/{stored['live']}")
        page.wait_for_selector("#throughput[data-ready='1']", timeout=20_000)
        assert page.is_visible("#live")
        assert page.evaluate("""() => Chart.getChart(document.getElementById('cluster'))
            .data.datasets[0].data.length""") == 0
        # an event recorded while the page polls: its script writes it in words, not its kind
        with stored["sessions"].begin() as session:
            session.add(Event(run_id=stored["live"], ts=START + 31.0, kind="cluster_noticed",
                              detail={}))
        noticed = page.wait_for_selector("#timeline td[data-kind='cluster_noticed']",
                                         timeout=20_000)
        assert noticed.inner_text() == "cluster noticed the fault"
        assert "_" not in page.inner_text("#timeline")
        _finish(stored["sessions"], stored["live"])
        page.wait_for_selector("#status.status-completed", timeout=20_000)
        assert not page.is_visible("#live")
        assert page.inner_text("[data-figure='baseline_ops']") == "100.0 ops/s"
        page.wait_for_selector("#cluster[data-ready='1']", timeout=20_000)
        assert page.evaluate("""() => Chart.getChart(document.getElementById('cluster'))
            .data.datasets[0].data.length""") == 60

        # clusters: the health arrives after the page, a dead cluster says why
        page.goto(f"{server}/clusters")
        page.wait_for_selector("tr[data-cluster='dash-ceph'] .health[data-health]",
                               timeout=20_000)
        assert page.inner_text("tr[data-cluster='dash-ceph'] .health").startswith(
            "unreachable: cannot read /nonexistent/faultline-dash/ceph.conf")
        page.screenshot(path=str(ARTIFACTS / "clusters-page.png"), full_page=True)

        # the trigger form names what the fault takes on the chosen cluster
        page.goto(f"{server}/experiments/swift-power-off-node/run")
        scope = page.inner_text(".scope[data-cluster='dash-swift']")
        assert "powers off node node1" in scope and "object:node1/d1" in scope
        page.screenshot(path=str(ARTIFACTS / "trigger-form.png"), full_page=True)
