"""A run's heals as its report prints them (service.results.heals)."""

from __future__ import annotations

from service.results.heals import heal_lines

AT = "2026-11-27T03:30:05.250000+00:00"


def test_a_restored_fault_says_what_by_whom_and_when():
    heal = {"fault": "osd.1 killed (SIGKILL)", "restored": True, "by": "worker auto-heal",
            "worker": "node7-4242", "at": AT, "error": None}

    assert heal_lines([heal]) == ["healed: osd.1 killed (SIGKILL), restored by worker auto-heal "
                                  "(node7-4242) at 2026-11-27 03:30:05 UTC"]


def test_a_failed_restore_says_why_and_that_the_fault_stays_in_the_ledger():
    heal = {"fault": "osd.1 killed (SIGKILL)", "restored": False, "by": "worker auto-heal",
            "worker": None, "at": AT, "error": "node2 (10.0.0.2:22) is unreachable"}

    assert heal_lines([heal]) == [
        "heal FAILED: osd.1 killed (SIGKILL), tried by worker auto-heal at 2026-11-27 03:30:05 "
        "UTC: node2 (10.0.0.2:22) is unreachable; it is still in the fault ledger"]
