"""The fault of a run interrupted before its action reported (service.runs.fault_timeline)."""

from __future__ import annotations

from service.runs.fault_timeline import first_action, timestamp, unreported_fault

END = "2026-11-27T10:00:05+00:00"


def journal(status: str, **extra) -> dict:
    return {"run": [{"activity": {"name": "kill-osd"}, "status": status, "end": END, **extra}]}


def test_an_action_that_succeeded_dates_the_fault_at_its_end():
    fault = unreported_fault(journal("succeeded"), "kill-osd", 100.0, 200.0)
    assert not fault.failed and fault.ts == timestamp(END)
    assert "during the pause after" in fault.text


def test_an_action_that_failed_injected_nothing_and_says_why():
    fault = unreported_fault(journal("failed", exception="no such OSD"), "kill-osd", 100.0,
                             200.0)
    assert fault.failed and fault.ts == timestamp(END) and fault.text == "no such OSD"


def test_an_action_never_reported_is_dated_at_its_start_and_may_be_partial():
    fault = unreported_fault({"run": []}, "kill-osd", 100.0, 200.0)
    assert not fault.failed and fault.ts == 100.0 and "may be partial" in fault.text


def test_the_fault_is_the_first_action_and_bad_times_are_none():
    assert first_action({"method": [{"type": "probe", "name": "p"},
                                    {"type": "action", "name": "kill"}]}) == "kill"
    assert first_action({"method": []}) is None
    assert timestamp("yesterday") is None and timestamp(5) is None
