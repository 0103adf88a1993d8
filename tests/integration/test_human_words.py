"""Human words everywhere, on a real PostgreSQL: the run page, the compare page, their HTML
exports, `faultline report` and `faultline compare` show no raw figure key or event kind;
the JSON API keeps its keys and kinds and adds their labels."""
# ruff: noqa: F811 (the fixtures imported from dashboard_support are parameters here)

from __future__ import annotations

import re
from html.parser import HTMLParser

from click.testing import CliRunner
from dashboard_support import (  # noqa: F401 (pytest fixtures)
    add_recovery,
    dash_app,
    dash_inventory,
    viewer,
)
from factories import START, make_run

from service.cli.group import main
from service.results.event_labels import EVENT_LABELS, event_label
from service.results.formatting import label_of
from service.results.report import API_KEYS, FIGURE_KEYS
from service.store.models import Event

WHY = "the cluster never reported it"  # an n/a reason in words, as the analysis writes them


class VisibleText(HTMLParser):
    """The text a reader sees: no tag, no attribute (a `title` or `data-kind` may keep the
    key for tools), no script (its embedded JSON keeps the keys)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs):
        self.hidden += tag in ("script", "style")

    def handle_endtag(self, tag):
        self.hidden -= tag in ("script", "style")

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def visible(html: str) -> str:
    parser = VisibleText()
    parser.feed(html)
    return " ".join(parser.parts)


def raw_words(text: str) -> list[str]:
    """The figure keys and event kinds printed as they are (one of one word is a word)."""
    names = [n for n in (*FIGURE_KEYS, *EVENT_LABELS) if "_" in n]
    return sorted(n for n in names if re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", text))


def stored_figures(**values) -> dict:
    out = {key: values.get(key) for key in FIGURE_KEYS}
    out["reasons"] = {key: WHY for key in FIGURE_KEYS if out[key] is None}
    return out


def every_event(session, run) -> None:
    """One event of every kind the service records, after make_run's fault and restore."""
    for i, kind in enumerate(k for k in EVENT_LABELS if k not in ("fault_injected", "restored")):
        session.add(Event(run_id=run.id, ts=START + 46.0 + i, kind=kind, detail={
            "name": "start-osd", "by": "worker auto-heal", "error": "osd.1 did not start"}))
    session.commit()


def two_runs(session) -> list[int]:
    ceph = make_run(session, figures=stored_figures(baseline_ops=100.0, time_to_detect_s=1.0))
    every_event(session, ceph)
    add_recovery(session, ceph)
    swift = make_run(session, kind="swift", fault="kill-object-server",
                     figures=stored_figures(baseline_ops=98.0,
                                            time_to_full_redundancy_after_restore_s=20.0))
    return [ceph.id, swift.id]


def test_the_run_page_names_no_figure_or_event_by_its_key(viewer, rolled_back):
    with rolled_back() as session:
        run_id = two_runs(session)[0]

    text = visible(viewer.get(f"/runs/{run_id}").get_data(as_text=True))

    assert "cluster noticed the fault" in text and "fault injected" in text
    assert f"time to client recovery n/a: {WHY}" in " ".join(text.split())
    assert raw_words(text) == []


def test_the_run_report_export_names_no_figure_or_event_by_its_key(viewer, rolled_back):
    with rolled_back() as session:
        run_id = two_runs(session)[0]

    html = viewer.get(f"/runs/{run_id}/report.html").get_data(as_text=True)

    assert "clients recovered" in visible(html) and "time to client recovery" in visible(html)
    assert raw_words(visible(html)) == []


def test_the_compare_page_and_its_export_name_no_figure_by_its_key(viewer, rolled_back):
    with rolled_back() as session:
        ids = two_runs(session)

    for path in ("/compare", "/compare/report.html"):
        text = visible(viewer.get(f"{path}?runs={ids[0]},{ids[1]}").get_data(as_text=True))
        assert "time to full redundancy after the restore" in text, path
        assert raw_words(text) == [], path


def test_the_api_keeps_keys_and_kinds_and_adds_their_labels(viewer, rolled_back):
    with rolled_back() as session:
        ids = two_runs(session)

    events = viewer.get(f"/api/v1/runs/{ids[0]}/events").get_json()["events"]
    figures = viewer.get(f"/api/v1/runs/{ids[0]}/figures").get_json()
    run = viewer.get(f"/api/v1/runs/{ids[0]}").get_json()
    compared = viewer.get(f"/api/v1/comparisons?runs={ids[0]},{ids[1]}").get_json()

    assert {e["kind"] for e in events} == set(EVENT_LABELS)
    assert all(e["label"] == event_label(e["kind"]) for e in events)
    assert figures["figures"]["baseline_ops"] == 100.0
    labels = {key: label_of(key) for key in API_KEYS}  # every figure the JSON carries
    assert figures["labels"] == labels and run["labels"] == labels
    assert compared["labels"] == labels and "time_to_detect_s" in compared["table"]


def test_faultline_report_and_compare_name_no_figure_by_its_key(database_url, sessions, made):
    with sessions() as session:
        made += two_runs(session)
    env = {"DATABASE_URL": database_url}

    report = CliRunner().invoke(main, ["report", str(made[0])], env=env)
    compared = CliRunner().invoke(main, ["compare", *map(str, made)], env=env)

    assert report.exit_code == 0 and compared.exit_code == 0, report.output + compared.output
    assert f"time to client recovery: n/a because {WHY}" in report.stdout
    assert f"run {made[1]}, time to detect: {WHY}" in compared.stdout
    assert raw_words(report.stdout) == [] and raw_words(compared.stdout) == []
