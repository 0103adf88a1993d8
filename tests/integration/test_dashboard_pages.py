"""The dashboard's pages render what is stored (real PostgreSQL, rows from small factories):
run history with filters and pages, the run page and its series, clusters, experiments."""
# ruff: noqa: F811 (the fixtures imported from dashboard_support are parameters here)

from __future__ import annotations

import uuid

import pytest
from dashboard_support import (  # noqa: F401 (pytest fixtures)
    SECRET_PATHS,
    add_recovery,
    dash_app,
    dash_inventory,
    viewer,
)
from factories import figures, make_run


def _title() -> str:
    return f"dash {uuid.uuid4().hex[:10]}"


def test_the_run_history_filters_by_status_cluster_kind_and_text(viewer, rolled_back):
    tag = _title()
    with rolled_back() as session:
        ceph = make_run(session, title=f"{tag} ceph", figures=figures(baseline_ops=100.0)).id
        swift = make_run(session, kind="swift", title=f"{tag} swift", status="failed").id

    def listed(query: str) -> set[int]:
        page = viewer.get(f"/?text={tag}&{query}").get_data(as_text=True)
        return {run_id for run_id in (ceph, swift) if f'href="/runs/{run_id}"' in page}

    assert listed("") == {ceph, swift}
    assert listed("status=failed") == {swift}
    assert listed("kind=ceph") == {ceph}
    assert listed("cluster=lab-swift") == {swift}
    assert listed("status=completed&kind=swift") == set()
    assert viewer.get(f"/?text={ceph}").get_data(as_text=True).count(f'href="/runs/{ceph}"') == 1


def test_the_run_history_shows_fifty_runs_a_page_newest_first(viewer, rolled_back):
    tag = _title()
    with rolled_back() as session:
        ids = [make_run(session, title=tag, seconds=1).id for _ in range(51)]

    first = viewer.get(f"/?text={tag}").get_data(as_text=True)
    second = viewer.get(f"/?text={tag}&page=2").get_data(as_text=True)

    assert "51 runs matching; page 1 of 2." in first
    assert first.count('name="runs" value=') == 50 and f'href="/runs/{ids[0]}"' not in first
    assert f'href="/runs/{ids[-1]}"' in first
    assert 'rel="next"' in first and f"text={tag.replace(' ', '+')}" in first
    assert second.count('name="runs" value=') == 1 and f'href="/runs/{ids[0]}"' in second


@pytest.mark.parametrize(("query", "message"), [
    ("status=exploded", "unknown status &#39;exploded&#39;"),
    ("kind=hdfs", "unknown kind &#39;hdfs&#39; (known: ceph, swift)"),
    ("page=0", "page must be 1 or more, not 0"),
    ("page=x", "page must be a number, not &#39;x&#39;"),
    ("page=%C2%B2", "page must be a number, not &#39;\u00b2&#39;"),
    ("page=99999999999", "page must be a number, not &#39;99999999999&#39;"),
])
def test_a_bad_history_filter_is_400_with_its_reason(viewer, query, message):
    response = viewer.get(f"/?{query}")

    assert response.status_code == 400
    assert message in response.get_data(as_text=True)


def test_an_ended_run_page_has_its_charts_figures_caveats_timeline_and_journal(viewer,
                                                                             rolled_back):
    with rolled_back() as session:
        run = make_run(session, title=_title(), figures=figures(baseline_ops=100.0,
                                                                  lost_objects=0))
        run.journal = {"status": "completed", "run": [{"activity": {"name": "kill-osd"}}]}
        session.commit()
        add_recovery(session, run)

    page = viewer.get(f"/runs/{run.id}").get_data(as_text=True)

    for canvas in ("throughput", "latency", "cluster"):
        assert f'<canvas id="{canvas}"' in page
    assert '<td data-figure="baseline_ops">100.0 ops/s</td>' in page
    assert "re-replicates" in page  # the Ceph caveat
    assert '<td>+0.00 s</td><td data-kind="fault_injected">fault injected</td>' in page
    assert '<td>+15.00 s</td><td data-kind="restored">fault restored</td>' in page
    assert '<details id="journal">' in page and "&#34;kill-osd&#34;" in page
    assert 'id="cancel"' not in page and "live, updating" not in page
    assert f'href="/runs/{run.id}/report.html"' in page


def test_the_run_page_prints_each_figure_as_the_report_does(viewer, rolled_back):
    with rolled_back() as session:
        run = make_run(session, title=_title(), figures=figures(
            baseline_mbps=19.7132, worst_second_drop=0.15, throughput_drop=0.0, errors=7,
            deficit_ops=120, deficit_s=1.2,
            errors_by_class={"ETIMEDOUT": 2, "503": 5}))

    page = viewer.get(f"/runs/{run.id}").get_data(as_text=True)

    assert '<th title="baseline_mbps">baseline bandwidth</th>' in page
    assert '<td data-figure="baseline_mbps">19.7 MB/s</td>' in page
    assert '<td data-figure="worst_second_drop">15.0%</td>' in page
    # the deficit is the headline; the mean drop stays in the API only
    assert '<td data-figure="deficit_ops">120 ops</td>' in page
    assert '<td data-figure="deficit_s">1.200 s</td>' in page
    assert 'data-figure="throughput_drop"' not in page
    assert ('<td data-figure="time_to_detect_s">n/a: time_to_detect_s was not measured in '
            'this test</td>') in page
    # errors by class: a small table, the most frequent first, not a dict
    rows = page[page.index('<td data-figure="errors_by_class">'):]
    assert rows.index("<td>503</td><td>5</td>") < rows.index("<td>ETIMEDOUT</td><td>2</td>")
    assert "{&#39;" not in page and "{'" not in page


def test_the_run_page_has_the_consistency_checker_classes_with_examples(viewer, rolled_back):
    from loadgen.consistency import Finding, summary

    found = summary([Finding("stale", ("faultline-000", "<b>x-1"), 2.5, ""),
                     Finding("recovered", ("faultline-000", "x-2"), 1.0, "")])
    with rolled_back() as session:
        run = make_run(session, title=_title(), figures=figures(stale_reads=1))
        run.verify = {"checked": 3, "lost_objects": 0, "corrupt_objects": 0,
                      "consistency": {"classes": found, "operations": 1200, "left_out": 0,
                                      "listing_delay_s": 0.0}}
        session.commit()

    page = viewer.get(f"/runs/{run.id}").get_data(as_text=True)

    table = page[page.index('<table id="consistency">'):]
    assert '<td data-class="stale">1</td>' in table
    assert "up to 2.500 s after a newer version was acknowledged; e.g. faultline-000/&lt;b&gt;x-1" \
        in table
    assert '<td data-class="resurrected">0</td>' in table
    assert "classified over 1,200 operations" in page
    assert '<td data-figure="stale_reads">1</td>' in page


def test_the_run_page_shows_the_verdict_of_a_scheduled_run(viewer, rolled_back):
    with rolled_back() as session:
        run = make_run(session, title=_title())
        run.verdict = {"status": "regression", "summary": "time to full redundancy 84.0 s is "
                       "worse than the last 5 runs (median 52.1 s, limit 68.3 s)",
                       "findings": [], "history_runs": 5, "judged": []}
        session.commit()

    page = viewer.get(f"/runs/{run.id}").get_data(as_text=True)

    assert '<span data-field="verdict">regression</span>: time to full redundancy 84.0 s' in page


def test_the_ceph_series_has_degraded_and_misplaced_objects_and_clean_pgs(viewer, rolled_back):
    with rolled_back() as session:
        run = make_run(session, title=_title())
        add_recovery(session, run)

    data = viewer.get(f"/runs/{run.id}/series.json").get_json()

    assert (data["status"], data["ended"], data["origin"]) == ("completed", True, "fault")
    assert len(data["load"]) == 60 and data["load"][30] == {
        "t": 0.0, "ts": data["origin_ts"], "ops": 0, "errors": 0, "not_started": 0,
        "p50_ms": None, "p99_ms": None}
    hurt = data["cluster"][35]
    assert (hurt["t"], hurt["degraded"], hurt["misplaced"], hurt["clean_pgs"],
            hurt["num_pgs"]) == (5.0, 480, 60, 20, 32)
    assert data["cluster"][55]["clean_pgs"] == 32
    assert [(e["kind"], e["label"]) for e in data["events"]] == [
        ("fault_injected", "fault injected"), ("cluster_noticed", "cluster noticed the fault"),
        ("restored", "fault restored")]


def test_the_series_since_a_moment_has_only_the_points_after_it(viewer, rolled_back):
    from factories import START

    with rolled_back() as session:
        run = make_run(session, title=_title())
        add_recovery(session, run)

    data = viewer.get(f"/runs/{run.id}/series.json?since={START + 50}").get_json()

    assert (data["since"], data["origin_ts"]) == (START + 50, START + 30)
    assert [p["t"] for p in data["load"]] == [float(s) for s in range(21, 30)]
    assert [p["ts"] for p in data["cluster"]] == [START + s for s in range(51, 60)]
    assert len(data["events"]) == 3  # the events always come whole
    response = viewer.get(f"/runs/{run.id}/series.json?since=yesterday")
    assert response.status_code == 400
    assert response.get_json() == {"error": "since must be a time in epoch seconds, not "
                                            "'yesterday'"}


def test_the_swift_series_has_dispersion_and_handoff_partitions(viewer, rolled_back):
    with rolled_back() as session:
        run = make_run(session, kind="swift", title=_title(), fault="kill-object-server")
        add_recovery(session, run, "swift")

    data = viewer.get(f"/runs/{run.id}/series.json").get_json()

    assert (data["cluster"][35]["dispersion_pct"], data["cluster"][35]["handoffs"]) == (66.67, 7)
    assert (data["cluster"][55]["dispersion_pct"], data["cluster"][55]["handoffs"]) == (100.0, 0)


def test_a_queued_run_page_is_live(viewer, rolled_back):
    with rolled_back() as session:
        run = make_run(session, title=_title(), status="queued", fault=None, seconds=0)

    page = viewer.get(f"/runs/{run.id}").get_data(as_text=True)
    data = viewer.get(f"/runs/{run.id}/series.json").get_json()

    assert "live, updating every 2 s" in page
    assert 'id="cancel"' not in page  # a viewer may not cancel: no button
    assert (data["status"], data["ended"], data["load"]) == ("queued", False, [])


def test_the_clusters_page_lists_the_inventory_and_asks_health_afterwards(viewer,
                                                                        dash_inventory):
    page = viewer.get("/clusters").get_data(as_text=True)

    assert str(dash_inventory) in page
    assert '<tr data-cluster="dash-ceph">' in page and '<tr data-cluster="dash-swift">' in page
    assert 'data-url="/clusters/dash-ceph/health.json">asking' in page


def test_a_cluster_page_shows_its_topology_and_no_secret(viewer):
    page = viewer.get("/clusters/dash-ceph").get_data(as_text=True)

    assert '<tr data-node="node3"><td>node3</td><td>zone2</td>' in page
    assert "192.0.2.13" in page and "ipmi (BMC 192.0.2.99)" in page
    assert "<code>/var/lib/ceph/osd/ceph-2</code> osd.2" in page
    assert "<td>osd.2</td>" in page  # the daemons of node3
    assert "mon.a" in page  # on the Faultline machine
    assert "/nonexistent/faultline-dash/ceph.conf" in page and "http://192.0.2.1:7480" in page
    for secret in SECRET_PATHS:
        assert secret not in page


@pytest.mark.parametrize(("cluster", "reason"), [
    ("dash-ceph", "cannot read /nonexistent/faultline-dash/ceph.conf"),
    ("dash-swift", "cannot read the Swift rings in /nonexistent/faultline-dash/swift"),
])
def test_the_health_of_an_unreachable_cluster_says_why(viewer, cluster, reason):
    response = viewer.get(f"/clusters/{cluster}/health.json")

    assert response.status_code == 200
    health = response.get_json()
    assert (health["reachable"], health["health"]) == (False, "UNREACHABLE")
    assert health["summary"].startswith(f"unreachable: {reason}")
    assert health["took_s"] < 10


def test_an_unknown_cluster_is_404(viewer, dash_inventory):
    page = viewer.get("/clusters/atlantis")
    health = viewer.get("/clusters/atlantis/health.json")

    assert (page.status_code, health.status_code) == (404, 404)
    message = (f"unknown cluster 'atlantis' in {dash_inventory} (known: dash-ceph, "
               "dash-swift)")
    assert message.replace("'", "&#39;") in page.get_data(as_text=True)
    assert health.get_json() == {"error": message}


def test_the_catalogue_lists_the_experiments_and_the_suites(viewer):
    page = viewer.get("/experiments").get_data(as_text=True)

    assert '<tr data-experiment="ceph-kill-osd">' in page
    assert "Swift keeps serving with a whole zone powered off" in page
    assert 'href="/experiments/swift-power-off-zone/run"' in page
    assert '<tr data-suite="kill-process">' in page and "ceph-rgw-swift-api" in page


def test_the_trigger_form_is_prefilled_and_names_the_blast_radius(viewer):
    page = viewer.get("/experiments/ceph-power-off-zone/run").get_data(as_text=True)

    assert '<option value="dash-ceph" >dash-ceph (ceph)</option>' in page
    assert "dash-swift" not in page  # a Ceph experiment offers Ceph clusters only
    assert 'name="rate" value="20"' in page and 'name="baseline_s" value="20"' in page
    assert 'name="mix_read" value="80"' in page and 'name="mix_delete" value="5"' in page
    assert 'name="mix_overwrite" value="0"' in page
    s3 = viewer.get("/experiments/ceph-s3-kill-osd/run").get_data(as_text=True)
    assert 'name="mix_read" value="62"' in s3 and 'name="mix_overwrite" value="10"' in s3
    assert 'name="mix_head" value="5"' in s3 and 'name="mix_list" value="3"' in s3
    assert "<b>powers off zone zone1: node1, node2 (nftables over SSH)</b>, for at least 60 s" \
        in page
    assert "takes down: osd.0, osd.1" in page
    assert "restored by power-on-zone: actions.power.power_on_zone(zone=&#39;zone1&#39;)" in page
    assert 'name="confirm" value="yes"' in page
    assert "only an operator may start a run" in page
