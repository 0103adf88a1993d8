"""The comparison page, served by the real app from a real PostgreSQL, seen by Chromium."""

from __future__ import annotations

import pytest
from factories import figures, make_run
from serving import chromium_page, painted_pixels, served
from sqlalchemy import delete
from web_login import SECRET, log_in_browser

from service.results.comparison import SELF_HEALING
from service.store import db
from service.store.models import Run
from service.web.app import create_app


@pytest.fixture
def two_runs(database_url) -> list[int]:
    """A Ceph run (librados) and a Swift run of the same fault class, deleted afterwards."""
    sessions = db.session_factory(database_url)
    with sessions() as session:
        ids = [make_run(session, title="ceph kill osd", dip_ops=0,
                        figures=figures(baseline_ops=100.0, time_to_detect_s=1.0,
                                        lost_objects=0)).id,
               make_run(session, kind="swift", title="swift kill object server", dip_ops=50,
                        fault="kill-object-server",
                        figures=figures(baseline_ops=98.5, time_to_detect_s=4.0,
                                        lost_objects=0)).id]
    yield ids
    with sessions.begin() as session:
        session.execute(delete(Run).where(Run.id.in_(ids)))


@pytest.fixture
def server(database_url):
    app = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET})
    with served(app) as url:
        yield url


def test_ticked_runs_are_compared_on_one_chart_with_their_figures(two_runs, server, make_user,
                                                                   tmp_path):
    ceph, swift = two_runs
    with chromium_page() as page:
        log_in_browser(page, server, *make_user("viewer"))
        page.goto(f"{server}/")
        page.check(f"#runs input[name='runs'][value='{ceph}']")
        page.check(f"#runs input[name='runs'][value='{swift}']")
        page.click("#compare button[type='submit']")
        page.wait_for_selector("#throughput[data-ready='1']", timeout=15_000)
        assert page.url.endswith(f"/compare?runs={swift}&runs={ceph}")  # list is newest first
        chart = page.evaluate("""() => {
            const chart = Chart.getChart(document.getElementById('throughput'));
            return chart.data.datasets.map(d => ({label: d.label, n: d.data.length,
                                                  first: d.data[0], dip: d.data[30]}));
        }""")
        assert [d["label"] for d in chart] == [
            f"run {swift} · lab-swift (swift, swift)", f"run {ceph} · lab-ceph (ceph, rados)"]
        assert [d["n"] for d in chart] == [60, 60]
        # x is seconds from each run's fault: the dip of each run is at 0
        assert [d["first"] for d in chart] == [{"x": -30, "y": 100}, {"x": -30, "y": 100}]
        assert [d["dip"] for d in chart] == [{"x": 0, "y": 50}, {"x": 0, "y": 0}]
        assert page.inner_text(f"[data-run='{ceph}'][data-figure='baseline_ops']") == \
            "100.0 ops/s"
        assert page.inner_text(f"[data-run='{swift}'][data-figure='baseline_ops']") == \
            "98.5 ops/s"
        assert page.inner_text(f"[data-run='{swift}'][data-figure='time_to_detect_s']") == \
            "4.000 s"
        assert page.inner_text(f"[data-run='{swift}'][data-field='api']") == "swift"
        assert SELF_HEALING in page.inner_text("#caveats")
        # one run a side: no spread, and the page says so instead of a verdict
        assert page.inner_text("#trials-note").startswith("Each figure comes from a single run")
        assert painted_pixels(page, "throughput") > 1000
        page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)


def test_comma_separated_ids_keep_their_order(two_runs, viewer_client):
    ceph, swift = two_runs

    response = viewer_client.get(f"/compare?runs={ceph},{swift}")

    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert html.index(f"/runs/{ceph}/series.json") < html.index(f"/runs/{swift}/series.json")


@pytest.mark.parametrize(("query", "status", "message"), [
    ("runs={ceph},987654", 404, "run 987654 does not exist"),
    ("runs={ceph}", 400, "a comparison needs at least two different runs, got 1"),
    ("", 400, "a comparison needs at least two different runs, got 0"),
    ("runs={ceph},abc", 400, "&#39;abc&#39; is not a run id"),
])
def test_bad_comparisons_are_refused(two_runs, viewer_client, query, status, message):
    response = viewer_client.get("/compare?" + query.format(ceph=two_runs[0]))

    assert response.status_code == status
    assert message in response.get_data(as_text=True)


def test_the_compare_page_gives_each_figure_its_verdict_between_trial_groups(
        sessions, made, server, make_user):
    with sessions() as session:
        for group, values in (("g-fast", (36.0, 41.0, 38.4, 37.0, 39.5, 40.2)),
                              ("g-slow", (64.0, 88.0, 70.8, 66.0, 72.0, 69.5))):
            for i, value in enumerate(values, 1):
                run = make_run(session, figures=figures(time_to_detect_s=value, lost_objects=0))
                run.trial_group, run.trial_index, run.trials = group, i, 6
                made.append(run.id)
        session.commit()
    with chromium_page() as page:
        log_in_browser(page, server, *make_user("viewer"))
        page.goto(f"{server}/compare?runs={','.join(map(str, made))}")
        verdicts = page.eval_on_selector_all(
            "#trial-verdicts li", "items => items.map(i => [i.dataset.figure, i.dataset.verdict])")
        assert ["time_to_detect_s", "different"] in verdicts
        assert ["lost_objects", "no meaningful difference"] in verdicts
        assert "later than" in page.inner_text(
            "#trial-verdicts li[data-figure='time_to_detect_s']")
        assert page.inner_text("#trials-method").startswith("Method: per outcome figure")
