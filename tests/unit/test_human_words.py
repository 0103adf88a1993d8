"""Human words everywhere: the text of `faultline compare` and `faultline report` names each
figure by its label (service.results.formatting) and each timeline event by its label
(service.results.event_labels), never by the key or kind the JSON keeps."""

from __future__ import annotations

import re
from pathlib import Path

from service.results import figures, heals, silenced
from service.results.comparison import compare_entries, format_comparison
from service.results.event_labels import EVENT_LABELS, event_label
from service.results.formatting import LABELS
from service.results.report import API_KEYS, FIGURE_KEYS, format_report, report_dict
from service.store.models import Event, Run

SERVICE = Path(__file__).resolve().parents[2] / "service"
# what records an event: a recorder's .event("kind", ...) or an Event(run_id=..., kind="...")
RECORDED = re.compile(r'\.event\(\s*"([a-z_]+)"|Event\(run_id=.{0,120}?kind="([a-z_]+)"', re.S)
WORKLOAD = {"rate": 100, "object_size": 4096, "mix": {"read": 80, "write": 15, "delete": 5}}


def recorded_kinds() -> set[str]:
    """Every event kind the service writes: read from its source, plus the kinds it names
    through constants (the figures' milestones, the silenced alerts, the heals)."""
    kinds = {m.group(1) or m.group(2) for path in SERVICE.rglob("*.py")
             for m in RECORDED.finditer(path.read_text(encoding="utf-8"))}
    every_figure = {key: 1.0 for key in FIGURE_KEYS}
    kinds |= {kind for kind, _ in figures.milestones(1.0, every_figure)}
    return kinds | {silenced.EVENT, *heals.KINDS}


def raw_words(text: str) -> list[str]:
    """The figure keys and event kinds a text prints as they are. A key or kind of one word
    ("errors", "restored") is a word already; the others have an underscore."""
    names = [n for n in (*FIGURE_KEYS, *recorded_kinds()) if "_" in n]
    return sorted(n for n in names if re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", text))


def entry(run_id: int, group: str, **values) -> dict:
    """A compared run, one of a group of trials; every figure n/a (with a reason in words)
    unless given."""
    data = {"run_id": run_id, "title": f"t{run_id}", "cluster": "lab-ceph",
            "cluster_kind": "ceph", "api": "rados", "fault": "kill-osd", "status": "completed",
            "error": None, "workload": dict(WORKLOAD), "trial_group": group}
    for key in FIGURE_KEYS:
        data[key] = values.get(key)
    data["reasons"] = {k: "the cluster never reported it" for k in FIGURE_KEYS
                       if data[k] is None}
    return data


def measured(i: int) -> dict:
    """Every numeric figure measured, slightly different from one trial to the next."""
    return {key: (0.1 * i if key.endswith("drop") else i + 1.0) for key in FIGURE_KEYS
            if key not in ("errors_by_class", "errors_by_op")}


def test_every_figure_key_has_a_label():
    assert [key for key in FIGURE_KEYS if key not in LABELS] == []


def test_every_event_kind_the_service_records_has_a_label():
    kinds = recorded_kinds()

    assert {"fault_injected", "cluster_noticed", "restored", "healed"} <= kinds  # the scan works
    assert sorted(kinds - set(EVENT_LABELS)) == []
    assert all("_" not in event_label(kind) for kind in kinds)


def test_an_event_kind_without_a_label_reads_as_its_words():
    assert event_label("cluster_noticed") == "cluster noticed the fault"
    assert event_label("some_new_kind") == "some new kind"


def test_the_raw_word_scan_finds_a_key_and_a_kind():
    """The rule below could fail: the scan sees what the old output printed."""
    assert raw_words("time_to_client_recovery_s: 35.5 s") == ["time_to_client_recovery_s"]
    assert raw_words("+0.00 s  fault_injected") == ["fault_injected"]
    assert raw_words("time to client recovery: 35.5 s; fault injected") == []


def test_the_compare_text_names_no_figure_by_its_key():
    entries = [entry(1, "a", **measured(1)), entry(2, "a", **measured(2)),
               entry(3, "b", **measured(3)), entry(4, "b", baseline_ops=4.0)]

    text = format_comparison(compare_entries(entries), width=300)

    assert "time to client recovery" in text and "The groups compared" in text
    assert "Not measured (n/a):" in text and "run 4, time to detect: " in text
    assert raw_words(text) == []


def test_the_compare_text_of_single_runs_names_no_figure_by_its_key():
    text = format_comparison(compare_entries([entry(1, "a", **measured(1)), entry(2, "b")]))

    assert raw_words(text) == []


def test_the_report_text_names_no_figure_by_its_key():
    stored = {key: None for key in FIGURE_KEYS}
    stored["reasons"] = {key: "the cluster never reported it" for key in FIGURE_KEYS}
    run = Run(id=7, title="kill one OSD", cluster="lab-ceph", cluster_kind="ceph",
              status="completed", workload=dict(WORKLOAD), figures=stored)
    run.events = [Event(kind="fault_injected", ts=1.0, detail={"name": "kill-osd"})]

    text = format_report(report_dict(run))

    assert "  time to detect: n/a because the cluster never reported it" in text
    assert raw_words(text) == []


def test_the_report_json_keeps_the_keys_and_adds_their_labels():
    run = Run(id=7, title="t", cluster="lab-ceph", cluster_kind="ceph", status="completed",
              workload=dict(WORKLOAD), figures={"time_to_detect_s": 1.5})
    run.events = []

    data = report_dict(run)

    assert data["time_to_detect_s"] == 1.5
    assert data["labels"]["time_to_detect_s"] == "time to detect"
    assert set(data["labels"]) == set(API_KEYS)  # every figure the JSON carries


def test_the_report_text_writes_errors_by_class_and_operation_in_words_not_as_a_dict():
    run = Run(id=7, title="t", cluster="lab-ceph", cluster_kind="ceph", status="completed",
              workload=dict(WORKLOAD), figures={"errors": 7, "errors_by_class": {
                  "ETIMEDOUT": 2, "503": 5}, "errors_by_op": {"read": 7}})
    run.events = []

    text = format_report(report_dict(run))

    assert ("  errors                       7 (errors by class: 503 5, ETIMEDOUT 2; errors by "
            "operation: read 7)") in text.splitlines()
    assert "{" not in text
